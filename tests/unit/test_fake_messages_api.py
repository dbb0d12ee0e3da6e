"""The loopback Messages API fake, checked with the real `anthropic` SDK and with raw HTTP."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import anthropic
import httpx2
import pytest

from acp_agent.testing import FakeMessagesAPI, replies

MODEL = "claude-test-1"
USER: Any = [{"role": "user", "content": "hi"}]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeMessagesAPI]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with FakeMessagesAPI() as api:
        yield api


@pytest.fixture
def client(fake: FakeMessagesAPI) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(api_key="test-key", base_url=fake.base_url, max_retries=0, timeout=10) as sdk:
        yield sdk


def create(client: anthropic.Anthropic, **kwargs: Any) -> Any:
    return client.messages.create(model=MODEL, max_tokens=100, messages=USER, **kwargs)


def raw_post(fake: FakeMessagesAPI, body: dict[str, Any]) -> tuple[http.client.HTTPResponse, bytes]:
    """POST with the stdlib client: the response and its whole body, exactly as sent."""
    url = urlsplit(fake.base_url)
    conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=10)
    try:
        conn.request(
            "POST", "/v1/messages", body=json.dumps(body), headers={"content-type": "application/json"}
        )
        response = conn.getresponse()
        return response, response.read()
    finally:
        conn.close()


def test_text_reply_on_the_json_path(fake: FakeMessagesAPI, client: anthropic.Anthropic) -> None:
    fake.script(replies.text("Hello there", usage=(12, 3)))
    message = create(client)
    assert [(b.type, b.text) for b in message.content] == [("text", "Hello there")]
    assert message.stop_reason == "end_turn"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (12, 3)
    assert message.model == MODEL
    assert message._request_id.startswith("req_")


def test_text_reply_on_the_stream_path(fake: FakeMessagesAPI, client: anthropic.Anthropic) -> None:
    fake.script(replies.text("Hello, streaming world", chunks=5))
    with client.messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream:
        pieces = list(stream.text_stream)
        final: Any = stream.get_final_message()
    assert len(pieces) == 5
    assert "".join(pieces) == "Hello, streaming world"
    assert final.stop_reason == "end_turn"
    assert final.usage.output_tokens == 5


def test_tool_use_input_is_reassembled_from_partial_json(
    fake: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    args = {"city": "Paris", "days": [1, 2, 3], "note": 'é "quoted"'}
    fake.script(replies.tool_use("get_weather", args, id="toolu_1", text="Checking."))
    with client.messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream:
        final: Any = stream.get_final_message()
    assert final.stop_reason == "tool_use"
    assert final.content[0].type == "text"
    tool = final.content[1]
    assert (tool.type, tool.id, tool.name, tool.input) == ("tool_use", "toolu_1", "get_weather", args)


def test_several_blocks_in_one_reply_on_both_paths(
    fake: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    reply = replies.message(
        [
            replies.thinking_block("let me think", "sig-1", chunks=3),
            replies.tool_use_block("a", {"x": 1}),
            replies.tool_use_block("b", {"y": 2}),
        ],
        stop_reason="tool_use",
    )
    fake.script(reply, reply)
    plain: Any = create(client)
    with client.messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream:
        streamed: Any = stream.get_final_message()
    for message in (plain, streamed):
        kinds = [b.type for b in message.content]
        assert kinds == ["thinking", "tool_use", "tool_use"]
        assert (message.content[0].thinking, message.content[0].signature) == ("let me think", "sig-1")
        assert [b.input for b in message.content[1:]] == [{"x": 1}, {"y": 2}]
        assert message.content[1].id != message.content[2].id


@pytest.mark.parametrize(
    ("status", "error_type", "cls"),
    [
        (400, "invalid_request_error", anthropic.BadRequestError),
        (401, "authentication_error", anthropic.AuthenticationError),
        (403, "permission_error", anthropic.PermissionDeniedError),
        (404, "not_found_error", anthropic.NotFoundError),
        (429, "rate_limit_error", anthropic.RateLimitError),
        (500, "api_error", anthropic.InternalServerError),
        (529, "overloaded_error", anthropic.OverloadedError),
    ],
)
@pytest.mark.parametrize("stream", [False, True])
def test_error_replies_raise_the_sdks_exception_for_the_status(
    fake: FakeMessagesAPI,
    client: anthropic.Anthropic,
    status: int,
    error_type: str,
    cls: type[Exception],
    stream: bool,
) -> None:
    fake.script(replies.error(status, error_type, "it went wrong", retry_after_ms=10))
    with pytest.raises(cls) as caught:
        create(client, stream=stream)
    error = caught.value
    assert isinstance(error, anthropic.APIStatusError)
    assert (error.status_code, error.type, error.api_message) == (status, error_type, "it went wrong")
    assert error.response.headers["retry-after-ms"] == "10"
    assert error.request_id


def test_every_attempt_is_recorded_with_body_headers_and_path(
    fake: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    fake.script(replies.text("one"), replies.text("two"))
    create(client, system="be brief")
    create(client, stream=True).close()
    assert fake.attempts == 2
    first, second = fake.requests
    assert first.path == "/v1/messages"
    assert first.method == "POST"
    assert first.body == {"model": MODEL, "max_tokens": 100, "messages": USER, "system": "be brief"}
    assert first.headers["authorization"] == "Bearer test-key"
    assert all(name == name.lower() for name in first.headers)
    assert not first.is_stream
    assert second.is_stream


def test_an_empty_queue_serves_the_fallback(fake: FakeMessagesAPI, client: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.InternalServerError, match="no scripted reply left"):
        create(client)
    fake.set_fallback(replies.text("always"))
    assert create(client).content[0].text == "always"
    assert create(client).content[0].text == "always"


def test_a_callable_reply_sees_the_body_and_the_attempt_number(
    fake: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    fake.set_fallback(lambda body, n: replies.text(f"{n}:{body['messages'][0]['content']}"))
    assert create(client).content[0].text == "1:hi"
    assert create(client).content[0].text == "2:hi"


def test_a_failing_reply_factory_answers_500_naming_the_error(
    fake: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    fake.script(lambda body, n: body["no such key"])
    with pytest.raises(anthropic.InternalServerError, match="reply factory raised KeyError"):
        create(client)


def test_models_are_listed_with_the_capabilities_of_the_ruled_ones(
    fake: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    listed = {m.id: m for m in client.models.list().data}
    assert MODEL in listed and "claude-sonnet-5-5" in listed
    assert fake.attempts == 0  # the models list is not a messages attempt
    sonnet = listed["claude-sonnet-5-5"]
    assert sonnet.max_input_tokens == 1_000_000
    assert sonnet.capabilities is not None
    assert sonnet.capabilities.thinking.types.between_tools.supported
    assert not sonnet.capabilities.thinking.types.enabled.supported


def test_models_are_paged_by_limit_and_after_id(fake: FakeMessagesAPI, client: anthropic.Anthropic) -> None:
    ids = [m.id for m in client.models.list(limit=3)]  # the SDK follows has_more / last_id
    assert ids == list(fake.models)
    pages = [r for r in fake.other_requests if r.path.startswith("/v1/models")]
    assert len(pages) == fake.models_listing.pages_served == -(-len(ids) // 3)


def test_sse_framing_has_event_lines_and_typed_data_in_order(fake: FakeMessagesAPI) -> None:
    fake.script(replies.tool_use("f", {"a": 1}, text="hi"))
    response, body = raw_post(fake, {"model": MODEL, "max_tokens": 5, "messages": USER, "stream": True})
    assert response.status == 200
    assert response.getheader("content-type") == "text/event-stream"
    raw = body.decode()
    assert raw.endswith("\n\n")
    events = [chunk.split("\n") for chunk in raw.strip("\n").split("\n\n")]
    names = [lines[0].removeprefix("event: ") for lines in events]
    datas = [json.loads(lines[1].removeprefix("data: ")) for lines in events]
    assert all(len(lines) == 2 and lines[0].startswith("event: ") for lines in events)
    assert [d["type"] for d in datas] == names
    assert names == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert [d.get("index") for d in datas[1:10]] == [0, 0, 0, 1, 1, 1, 1, 1, 1]
    assert datas[5]["delta"] == {"type": "input_json_delta", "partial_json": ""}
    assert datas[10]["usage"] == {"output_tokens": 5}


def test_a_clean_stream_is_one_body_with_a_content_length(fake: FakeMessagesAPI) -> None:
    fake.script(replies.text("x" * 20_000, chunks=20_000))
    response, body = raw_post(fake, {"model": MODEL, "max_tokens": 5, "messages": USER, "stream": True})
    assert int(response.getheader("content-length") or 0) == len(body)
    assert body.count(b'"type":"text_delta"') == 20_000


def test_a_reply_without_stop_reason_on_both_paths(
    fake: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    fake.script(replies.text("hm", stop_reason=None), replies.text("hm", stop_reason=None))
    assert create(client).stop_reason is None
    with client.messages.stream(model=MODEL, max_tokens=100, messages=USER) as stream:
        assert stream.get_final_message().stop_reason is None


def stream_types(client: anthropic.Anthropic) -> list[str]:
    return [event.type for event in create(client, stream=True)]


def test_drop_after_k_events_breaks_the_connection(
    fake: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    fake.script(replies.text("abc", chunks=3, drop_after=3))
    seen: list[str] = []
    with pytest.raises(httpx2.RemoteProtocolError):
        seen.extend(event.type for event in create(client, stream=True))
    assert seen == ["message_start", "content_block_start", "content_block_delta"]


def test_truncate_after_k_events_ends_the_body_cleanly(
    fake: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    fake.script(replies.text("abc", chunks=3, truncate_after=4))
    assert stream_types(client) == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
    ]


def test_error_event_after_k_events_raises_a_status_200_error(
    fake: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    fake.script(replies.text("abc", error_event_after=2))
    with pytest.raises(anthropic.APIStatusError) as caught:
        stream_types(client)
    assert (caught.value.status_code, caught.value.type) == (200, "overloaded_error")


def test_stall_after_k_events_hangs_until_the_read_timeout(
    fake: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    fake.script(replies.text("abc", stall_after=1))
    seen: list[str] = []
    with pytest.raises(httpx2.ReadTimeout):  # 2 s: message_start beats it on a loaded box too
        seen.extend(event.type for event in create(client, stream=True, timeout=2))
    assert seen == ["message_start"]


def test_chunk_delay_spaces_the_events(fake: FakeMessagesAPI, client: anthropic.Anthropic) -> None:
    fake.script(replies.text("abcd", chunks=4, chunk_delay=0.05))
    arrivals = [time.monotonic() for _ in create(client, stream=True)]
    assert len(arrivals) == 9
    assert arrivals[-1] - arrivals[0] >= 0.05 * 7


def test_json_path_drop_and_stall(fake: FakeMessagesAPI, client: anthropic.Anthropic) -> None:
    fake.script(replies.drop(), replies.stall())
    with pytest.raises(anthropic.APIConnectionError) as dropped:
        create(client)
    assert not isinstance(dropped.value, anthropic.APITimeoutError)
    with pytest.raises(anthropic.APITimeoutError):
        create(client, timeout=0.3)
    assert fake.attempts == 2


def test_stop_releases_hanging_replies_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    fake = FakeMessagesAPI().start()
    fake.script(replies.stall())
    outcome: list[BaseException] = []

    def call() -> None:
        with anthropic.Anthropic(api_key="k", base_url=fake.base_url, max_retries=0) as sdk:
            try:
                create(sdk)
            except anthropic.APIError as exc:
                outcome.append(exc)

    worker = threading.Thread(target=call)
    worker.start()
    fake.wait_for_attempts(1)
    fake.stop()
    worker.join(timeout=10)  # the stall lasts hang_seconds (30): only stop() can end it sooner
    assert not worker.is_alive()
    assert isinstance(outcome[0], anthropic.APIConnectionError)


def test_the_command_line_fake_prints_its_url_and_serves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    proc = subprocess.Popen(
        [sys.executable, "-m", "acp_agent.testing", "--reply", "tool_use", "--tool", "read_file"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        base_url = proc.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:")
        with anthropic.Anthropic(api_key="k", base_url=base_url, max_retries=0) as sdk:
            inputs = [create(sdk).content[0].input for _ in range(2)]
        assert inputs == [{"path": "file-1.txt"}, {"path": "file-2.txt"}]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
    assert proc.returncode == 0


def test_five_breakpoints_get_the_apis_400_before_any_reply_is_used(
    fake: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    marker = {"type": "ephemeral"}
    fake.script(replies.text("kept for the next request"))
    tools = [
        {"name": f"t{i}", "description": "d", "input_schema": {"type": "object"}, "cache_control": marker}
        for i in range(4)
    ]
    with pytest.raises(anthropic.BadRequestError, match="A maximum of 4 blocks with cache_control"):
        create(client, tools=tools, cache_control=marker)
    assert create(client, tools=tools).content[0].text == "kept for the next request"


def test_a_current_model_refuses_a_forced_tool_and_a_budget_as_the_api_does(
    fake: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    tool = {"name": "t", "description": "d", "input_schema": {"type": "object"}}
    with pytest.raises(anthropic.BadRequestError, match='type "tool" and "any" are not supported'):
        client.messages.create(
            model="claude-sonnet-5-5",
            max_tokens=100,
            messages=USER,
            tools=[tool],
            tool_choice={"type": "tool", "name": "t"},
        )
    with pytest.raises(anthropic.BadRequestError, match=r"thinking\.type\.enabled"):
        client.messages.create(
            model="claude-opus-5-5",
            max_tokens=2000,
            messages=USER,
            thinking={"type": "enabled", "budget_tokens": 1024},
        )
    assert fake.served == []


def test_thinking_comes_back_empty_at_the_default_display_and_shown_when_summarized(
    fake: FakeMessagesAPI, client: anthropic.Anthropic
) -> None:
    note = replies.message([replies.thinking_block("a progress note", "x"), replies.text_block("ok")])
    fake.script(note, note)
    omitted = client.messages.create(model="claude-sonnet-5-5", max_tokens=100, messages=USER)
    shown = client.messages.create(
        model="claude-sonnet-5-5",
        max_tokens=100,
        messages=USER,
        thinking={"type": "adaptive", "display": "summarized"},
    )
    assert omitted.content[0].thinking == "" and omitted.content[0].signature.startswith("fakesig.")
    assert shown.content[0].thinking == "a progress note"
    assert omitted.usage.cache_read_input_tokens == 0  # billed by the simulated cache
