"""The one SSE codec (`model/sse.py`): a message ⇄ its events ⇄ the bytes, for cassettes and the fake."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_agent.model.sse import (
    SseEvent,
    error_event,
    events_to_message,
    message_to_events,
    parse_sse,
    render_sse,
)

MESSAGE: dict[str, Any] = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-test-1",
    "content": [
        {"type": "thinking", "thinking": "Which file?", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "opaque"},
        {
            "type": "text",
            "text": "See “a.txt” ✓",
            "citations": [
                {
                    "type": "char_location",
                    "cited_text": "alpha",
                    "document_index": 0,
                    "start_char_index": 0,
                    "end_char_index": 5,
                }
            ],
        },
        {
            "type": "tool_use",
            "id": "toolu_a",
            "name": "read_file",
            "input": {"path": "a.txt", "range": [1, 2], "deep": {"x": None}},
        },
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 20,
        "output_tokens": 7,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 3,
    },
}


def test_a_message_streamed_and_reassembled_is_the_same_message() -> None:
    events = message_to_events(MESSAGE)
    assert [e.event for e in events][:2] == ["message_start", "content_block_start"]
    assert [e.event for e in events][-2:] == ["message_delta", "message_stop"]
    assert events[0].data["message"]["content"] == []
    assert events_to_message(events) == (200, MESSAGE)


def test_streamed_tool_input_arrives_as_json_text_not_in_the_start_event() -> None:
    events = message_to_events(MESSAGE)
    start = next(
        e.data
        for e in events
        if e.event == "content_block_start" and e.data["content_block"]["type"] == "tool_use"
    )
    assert start["content_block"]["input"] == {}
    pieces = [
        e.data["delta"]["partial_json"]
        for e in events
        if e.event == "content_block_delta" and e.data["index"] == start["index"]
    ]
    assert json.loads("".join(pieces)) == MESSAGE["content"][3]["input"]


def test_message_delta_overwrites_the_stop_and_keeps_counts_it_leaves_out() -> None:
    start = {
        "type": "message_start",
        "message": {
            **MESSAGE,
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 9, "output_tokens": 1},
        },
    }
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 4, "input_tokens": None},
    }
    status, message = events_to_message(
        [SseEvent(event="message_start", data=start), SseEvent(event="message_delta", data=delta)]
    )
    assert status == 200
    assert message["stop_reason"] == "end_turn"
    assert message["usage"] == {"input_tokens": 9, "output_tokens": 4}


def test_a_cut_off_tool_input_keeps_its_complete_values() -> None:
    events = [
        SseEvent(
            event="message_start", data={"type": "message_start", "message": {**MESSAGE, "content": []}}
        ),
        SseEvent(
            event="content_block_start",
            data={
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "t", "name": "edit", "input": {}},
            },
        ),
        SseEvent(
            event="content_block_delta",
            data={
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"path": "a", "text": "unfin'},
            },
        ),
        SseEvent(event="content_block_stop", data={"type": "content_block_stop", "index": 0}),
    ]
    _, message = events_to_message(events)
    assert message["content"][0]["input"]["path"] == "a"


@pytest.mark.parametrize(
    ("error_type", "status"),
    [
        ("overloaded_error", 529),
        ("rate_limit_error", 429),
        ("api_error", 500),
        ("invalid_request_error", 400),
        ("something_new", 500),
    ],
)
def test_an_error_event_becomes_that_errors_status_and_body(error_type: str, status: int) -> None:
    error = {"type": "error", "error": {"type": error_type, "message": "nope"}}
    events = [*message_to_events(MESSAGE)[:3], SseEvent(event="error", data=error)]
    assert events_to_message(events) == (status, error)


def test_a_stream_without_message_start_becomes_an_api_error() -> None:
    status, body = events_to_message([SseEvent(event="ping", data={"type": "ping"})])
    assert (status, body["error"]["type"]) == (500, "api_error")


def test_sse_text_parses_into_the_events_that_render_back_to_it() -> None:
    events = message_to_events(MESSAGE)
    wire = b"".join(render_sse(e) for e in events).decode()
    assert parse_sse(wire) == events
    assert parse_sse(wire.replace("\n", "\r\n")) == events


def test_sse_parsing_skips_comments_and_keeps_data_only_and_unparsable_events() -> None:
    text = (
        ': keep-alive\n\ndata: {"a": 1}\n\nevent: odd\ndata: not json\ndata: second line\n\n'
        'event: last\ndata: {"b": "\u2028"}'
    )
    assert parse_sse(text) == [
        SseEvent(event=None, data={"a": 1}),
        SseEvent(event="odd", data="not json\nsecond line"),
        SseEvent(event="last", data={"b": "\u2028"}),
    ]
    assert render_sse(SseEvent(event=None, data={"a": 1})) == b'data: {"a":1}\n\n'


def test_pieces_split_each_blocks_deltas_and_the_message_reassembles_the_same() -> None:
    pieces = [
        ["Which", " file?"],
        None,
        ["See “a.t", "xt” ✓"],
        ['{"path": "a.txt",', ' "range": [1, 2], "deep": {"x": null}}'],
    ]
    events = message_to_events(MESSAGE, pieces=pieces)
    deltas = [e.data["delta"] for e in events if e.event == "content_block_delta"]
    assert [d.get("thinking") for d in deltas if d["type"] == "thinking_delta"] == ["Which", " file?"]
    assert [d["text"] for d in deltas if d["type"] == "text_delta"] == ["See “a.t", "xt” ✓"]
    assert [d["partial_json"] for d in deltas if d["type"] == "input_json_delta"] == ["", *pieces[3]]
    assert events_to_message(events) == (200, MESSAGE)


def test_message_start_counts_at_most_one_output_token_and_delta_usage_replaces_the_final_usage() -> None:
    events = message_to_events(MESSAGE, delta_usage={"output_tokens": 7})
    assert events[0].data["message"]["usage"] == {**MESSAGE["usage"], "output_tokens": 1}
    assert events[-2].data["usage"] == {"output_tokens": 7}
    assert events_to_message(events) == (200, MESSAGE)  # the counts it leaves out are kept
    empty = {**MESSAGE, "usage": {"input_tokens": 3, "output_tokens": 0}}
    assert message_to_events(empty)[0].data["message"]["usage"]["output_tokens"] == 0


def test_the_error_event_is_the_apis_bytes() -> None:
    assert render_sse(error_event()) == (
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    assert events_to_message([error_event("api_error", "boom")])[0] == 500


def test_the_fakes_two_api_paths_are_one_message() -> None:
    """The loopback fake streams through this codec: its SSE, read back, is its JSON body."""
    from acp_agent.testing import replies

    reply = replies.message(
        [
            replies.thinking_block("hmm, which", "sig", chunks=3),
            replies.text_block("Reading “a.txt”", chunks=4),
            replies.tool_use_block("read_file", {"path": "a.txt"}, id="toolu_1"),
        ],
        stop_reason="tool_use",
        usage=(12, 9),
    )
    shape: dict[str, Any] = {"model": "claude-test-1", "message_id": "msg_x"}
    wire = b"".join(replies.render_events(reply, **shape)).decode()
    events = parse_sse(wire)
    assert (
        sum(e.data["delta"]["type"] == "text_delta" for e in events if e.event == "content_block_delta") == 4
    )
    assert events_to_message(events) == (200, replies.render_json(reply, **shape))
    assert parse_sse(replies.error_event().decode()) == [error_event()]


def test_a_cut_off_tool_input_of_the_fake_streams_as_it_was_cut() -> None:
    from acp_agent.testing import replies

    cut = replies.tool_use_block(
        "edit", {"path": "a", "text": "unfinished"}, id="t", partial_json='{"path": "a", "te'
    )
    events = parse_sse(
        b"".join(replies.render_events(replies.message([cut]), model="m", message_id="i")).decode()
    )
    parts = [e.data["delta"]["partial_json"] for e in events if e.event == "content_block_delta"]
    assert "".join(parts) == '{"path": "a", "te'
    assert events_to_message(events)[1]["content"][0]["input"] == {"path": "a"}
