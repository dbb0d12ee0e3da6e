"""The cassette file format and its two views of a reply (a JSON message, or its SSE events)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter
from structlog.testing import capture_logs

from acp_agent.model.cassette import (
    CassetteError,
    CassetteHeader,
    CassetteWriter,
    Exchange,
    RecordedResponse,
    SseEvent,
    events_to_message,
    load_cassette,
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


def write(path: Path, *lines: str, end: str = "\n") -> Path:
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    return path


def exchange_line(text: str) -> str:
    return Exchange(
        request={"model": "claude-test-1", "messages": []},
        response=RecordedResponse(json_body=dict(MESSAGE, id=text)),
    ).model_dump_json(by_alias=True, exclude_none=True)


HEADER = CassetteHeader(model="claude-test-1", streaming=False).model_dump_json(by_alias=True)


def test_a_cassette_reads_back_what_the_writer_wrote(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    writer = CassetteWriter(path, CassetteHeader(model="claude-test-1", streaming=True))
    streamed = Exchange(
        request={"model": "claude-test-1", "stream": True},
        response=RecordedResponse(sse=message_to_events(MESSAGE)),
    )
    failed = Exchange(
        request={"model": "claude-test-1"},
        response=RecordedResponse(
            status=529,
            headers={"retry-after-ms": "10"},
            json_body={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        ),
    )
    writer.append(streamed)
    writer.append(failed)

    loaded = load_cassette(path)
    assert (loaded.header.model, loaded.header.streaming, loaded.header.version) == ("claude-test-1", True, 1)
    assert loaded.exchanges == (streamed, failed)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and writer.count == 2
    assert "createdAt" in json.loads(lines[0])
    assert set(json.loads(lines[1])["response"]) == {"status", "headers", "sse", "complete"}
    assert json.loads(lines[2])["response"]["json"]["error"]["type"] == "overloaded_error"


def test_a_torn_last_line_is_dropped_and_the_complete_ones_kept(tmp_path: Path) -> None:
    whole = exchange_line("msg_1")
    path = write(tmp_path / "torn.jsonl", HEADER, whole, exchange_line("msg_2")[:57], end="")
    with capture_logs() as logs:
        loaded = load_cassette(path)
    assert [x.response.json_body["id"] for x in loaded.exchanges] == ["msg_1"]
    assert [entry["event"] for entry in logs] == ["cassette.torn_line"]
    assert logs[0]["line"] == 3


def test_a_last_line_without_its_newline_is_kept_when_it_is_whole(tmp_path: Path) -> None:
    path = write(tmp_path / "unterminated.jsonl", HEADER, exchange_line("msg_1"), end="")
    assert len(load_cassette(path).exchanges) == 1


def test_a_broken_line_before_the_end_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "broken.jsonl", HEADER, exchange_line("msg_1")[:40], exchange_line("msg_2"))
    with pytest.raises(CassetteError, match=r"broken\.jsonl line 2 is not a valid Exchange"):
        load_cassette(path)


def test_a_line_with_an_unknown_field_is_refused_rather_than_ignored(tmp_path: Path) -> None:
    line = json.loads(exchange_line("msg_1"))
    line["response"]["jsno"] = {}
    path = write(tmp_path / "typo.jsonl", HEADER, json.dumps(line))
    with pytest.raises(CassetteError, match=r"line 2 .*response\.jsno"):
        load_cassette(path)


@pytest.mark.parametrize(
    "content", ["", "\n", exchange_line("msg_1") + "\n"], ids=["empty", "blank", "no-header"]
)
def test_a_cassette_without_a_header_line_is_an_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "headless.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CassetteError, match=r"(?i)header"):
        load_cassette(path)


def test_a_missing_cassette_is_an_error_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match=r"cannot read cassette .*nowhere\.jsonl"):
        load_cassette(tmp_path / "nowhere.jsonl")


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


def test_the_cassette_lines_have_json_schemas_with_their_wire_names() -> None:
    header = TypeAdapter(CassetteHeader).json_schema(by_alias=True)
    exchange = TypeAdapter(Exchange).json_schema(by_alias=True)
    assert {"version", "model", "createdAt", "streaming"} <= set(header["properties"])
    response = exchange["$defs"]["RecordedResponse"]["properties"]
    assert {"status", "headers", "json", "sse", "complete"} <= set(response)
