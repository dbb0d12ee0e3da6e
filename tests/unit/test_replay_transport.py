"""Record a run against the loopback Messages API, then replay it through the real SDK.

The model client is the real `AnthropicModel` over the real `anthropic` SDK; only the HTTP
transport underneath changes (recording tees to a cassette, replay answers from it).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterator
from contextlib import aclosing
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

from acp_agent.errors import ModelUnavailable, StreamBroken
from acp_agent.model.anthropic import AnthropicModel
from acp_agent.model.base import MessageDone, ModelEvent, ModelRequest, RetryScheduled, TextDelta
from acp_agent.model.cassette import CassetteError, CassetteHeader, CassetteWriter, load_cassette
from acp_agent.model.factory import make_model
from acp_agent.model.transports import RecordingTransport, ReplayTransport
from acp_agent.testing import FakeMessagesAPI, replies

KEY = "sk-ant-replay-marker"
MODEL = "claude-test-1"
TOOLS = [
    {
        "name": "read_file",
        "description": "Read a file.",
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
]
FIRST = ModelRequest(
    model=MODEL, max_tokens=256, tools=TOOLS, messages=[{"role": "user", "content": "what is in a.txt?"}]
)


def second_request(content: list[dict[str, Any]]) -> ModelRequest:
    """The follow-up request a turn loop would send after running the tool."""
    return ModelRequest(
        model=MODEL,
        max_tokens=256,
        tools=TOOLS,
        messages=[
            *FIRST.messages,
            {"role": "assistant", "content": content},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "alpha"}],
            },
        ],
    )


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeMessagesAPI]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with FakeMessagesAPI() as api:
        yield api


def script_two_replies(fake: FakeMessagesAPI) -> None:
    fake.script(
        replies.message(
            [
                replies.thinking_block("Which file?", "sig-1", chunks=2),
                replies.text_block("Let me look.", chunks=3),
                replies.tool_use_block("read_file", {"path": "a.txt"}, id="toolu_a"),
            ],
            stop_reason="tool_use",
            usage=(20, 7),
        ),
        replies.text("It says “alpha” ✓", chunks=4, usage=(30, 4)),
    )


async def collect(model: AnthropicModel, request: ModelRequest) -> list[ModelEvent]:
    with anyio.fail_after(20):
        return [event async for event in model.respond(request)]


async def run_turn(model: AnthropicModel) -> list[list[ModelEvent]]:
    """Two requests, the second built from the first reply, as the turn loop does."""
    try:
        first = await collect(model, FIRST)
        done = first[-1]
        assert isinstance(done, MessageDone)
        return [first, await collect(model, second_request(done.content))]
    finally:
        await model.aclose()


def record_model(fake: FakeMessagesAPI, cassette: Path, streaming: bool, **options: Any) -> AnthropicModel:
    model, model_id = make_model(
        MODEL,
        streaming=streaming,
        record=cassette,
        replay_strict=False,
        api_key=KEY,
        base_url=fake.base_url,
        **options,
    )
    assert model_id == MODEL
    return model


def replay_model(cassette: Path, streaming: bool, *, strict: bool = False, **options: Any) -> AnthropicModel:
    model, model_id = make_model(
        f"replay:{cassette}", streaming=streaming, record=None, replay_strict=strict, **options
    )
    assert model_id == MODEL
    return model


def dones(run: list[list[ModelEvent]]) -> list[MessageDone]:
    found = [e for events in run for e in events if isinstance(e, MessageDone)]
    assert len(found) == len(run)
    return found


def texts(run: list[list[ModelEvent]]) -> list[str]:
    return ["".join(e.text for e in events if isinstance(e, TextDelta)) for events in run]


@pytest.mark.parametrize("replay_streaming", [True, False], ids=["replay-stream", "replay-json"])
async def test_a_recorded_run_replays_to_the_same_messages_on_either_path(
    fake: FakeMessagesAPI, tmp_path: Path, streaming: bool, replay_streaming: bool
) -> None:
    script_two_replies(fake)
    cassette = tmp_path / "run.jsonl"
    recorded = await run_turn(record_model(fake, cassette, streaming))
    assert fake.attempts == 2

    replayed = await run_turn(replay_model(cassette, replay_streaming, strict=True))

    assert fake.attempts == 2, "a replay never reaches the network"
    assert dones(replayed) == dones(recorded)
    assert texts(replayed) == texts(recorded) == ["Let me look.", "It says “alpha” ✓"]
    assert dones(recorded)[0].content[0] == {
        "type": "thinking",
        "thinking": "Which file?",
        "signature": "sig-1",
    }


async def test_the_cassette_holds_each_exchange_as_it_came_over_the_wire(
    fake: FakeMessagesAPI, tmp_path: Path, streaming: bool
) -> None:
    script_two_replies(fake)
    cassette = tmp_path / "run.jsonl"
    await run_turn(record_model(fake, cassette, streaming))

    loaded = load_cassette(cassette)
    assert (loaded.header.model, loaded.header.streaming) == (MODEL, streaming)
    assert [x.request for x in loaded.exchanges] == [r.body for r in fake.requests]
    for exchange in loaded.exchanges:
        response = exchange.response
        assert (response.status, response.complete) == (200, True)
        assert response.headers["request-id"].startswith("req_fake_")
        if streaming:
            assert response.json_body is None and response.sse is not None
            names = [e.event for e in response.sse]
            assert names[0] == "message_start" and names[-1] == "message_stop"
        else:
            assert response.sse is None
            assert response.json_body["type"] == "message"
    assert KEY not in cassette.read_text(), "credentials never reach a cassette"


async def test_recording_passes_the_stream_through_before_it_ends(
    fake: FakeMessagesAPI, tmp_path: Path
) -> None:
    """The first words arrive while the server still holds the rest: nothing is buffered."""
    fake.script(replies.text("first words", stall_after=3))  # message_start, block start, delta
    cassette = tmp_path / "stalled.jsonl"
    model = record_model(fake, cassette, True)
    first_text = None
    try:
        with anyio.fail_after(10):
            respond = cast("AsyncGenerator[ModelEvent, None]", model.respond(FIRST))
            async with aclosing(respond) as events:
                async for event in events:
                    if isinstance(event, TextDelta):
                        first_text = event.text
                        break
    finally:
        await model.aclose()
    assert first_text == "first words"

    [exchange] = load_cassette(cassette).exchanges
    assert exchange.response.complete is False, "a body the reader left is marked incomplete"
    assert [e.event for e in exchange.response.sse or ()] == [
        "message_start",
        "content_block_start",
        "content_block_delta",
    ]


async def test_an_incomplete_recording_breaks_off_at_the_same_point_on_replay(
    fake: FakeMessagesAPI, tmp_path: Path
) -> None:
    fake.script(replies.text("partial answer", drop_after=3))
    cassette = tmp_path / "dropped.jsonl"
    with pytest.raises(StreamBroken) as recorded:
        await run_turn_once(record_model(fake, cassette, True), FIRST)
    assert load_cassette(cassette).exchanges[0].response.complete is False

    model = replay_model(cassette, True)
    with pytest.raises(StreamBroken) as replayed:
        await run_turn(model)
    assert replayed.value.partial == recorded.value.partial == [{"type": "text", "text": "partial answer"}]


async def test_a_retried_attempt_is_an_exchange_of_its_own_and_is_retried_again_on_replay(
    fake: FakeMessagesAPI, tmp_path: Path, streaming: bool
) -> None:
    fake.script(
        replies.error(529, "overloaded_error", "Overloaded", retry_after_ms=10),
        replies.text("after the retry"),
    )
    cassette = tmp_path / "retry.jsonl"
    recorded = await run_turn_once(record_model(fake, cassette, streaming), FIRST)

    first = load_cassette(cassette).exchanges[0].response
    assert (first.status, first.headers["retry-after-ms"]) == (529, "10")
    assert first.json_body["error"]["type"] == "overloaded_error"

    replayed = await run_turn_once(replay_model(cassette, not streaming), FIRST)
    retries = [e for e in replayed if isinstance(e, RetryScheduled)]
    assert retries == [e for e in recorded if isinstance(e, RetryScheduled)]
    assert [(r.attempt, r.delay) for r in retries] == [(1, 0.01)]
    assert replayed[-1] == recorded[-1]


async def test_a_request_beyond_the_end_of_the_cassette_is_a_clear_error(
    fake: FakeMessagesAPI, tmp_path: Path, streaming: bool
) -> None:
    fake.script(replies.text("the only reply"))
    cassette = tmp_path / "short.jsonl"
    await run_turn_once(record_model(fake, cassette, streaming), FIRST)

    model = replay_model(cassette, streaming, max_retries=0)
    try:
        await collect(model, FIRST)
        with pytest.raises(ModelUnavailable) as failed:
            await collect(model, FIRST)
    finally:
        await model.aclose()
    assert f"replay cassette exhausted after 1 exchange ({cassette})" in str(failed.value)
    assert failed.value.detail["status"] == 500
    assert failed.value.detail["errorType"] == "api_error"


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"model": "claude-test-2"}, "the model differs"),
        ({"tools": [{**TOOLS[0], "name": "write_file"}]}, "the list of tool names differs"),
        ({"messages": [{"role": "user", "content": "what is in b.txt?"}]}, "the last user message differs"),
    ],
    ids=["model", "tools", "last-user-message"],
)
async def test_strict_replay_refuses_a_request_unlike_the_recording_naming_the_difference(
    fake: FakeMessagesAPI, tmp_path: Path, change: dict[str, Any], named: str
) -> None:
    fake.script(replies.text("recorded"))
    cassette = tmp_path / "strict.jsonl"
    await run_turn_once(record_model(fake, cassette, True), FIRST)
    other = ModelRequest(
        **{"model": MODEL, "max_tokens": 256, "tools": TOOLS, "messages": FIRST.messages, **change}
    )

    with pytest.raises(ModelUnavailable) as refused:
        await run_turn_once(replay_model(cassette, True, strict=True), other)
    message = str(refused.value)
    assert f"replay mismatch at exchange 1 of {cassette}: {named}" in message
    assert refused.value.detail["status"] == 400

    loose = await run_turn_once(replay_model(cassette, True, strict=False), other)
    assert isinstance(loose[-1], MessageDone), "without --replay-strict only the order matters"


async def run_turn_once(model: AnthropicModel, request: ModelRequest) -> list[ModelEvent]:
    try:
        return await collect(model, request)
    finally:
        await model.aclose()


async def test_replay_answers_the_models_list_with_the_cassette_model(tmp_path: Path) -> None:
    import anthropic
    import httpx2

    path = tmp_path / "empty.jsonl"
    CassetteWriter(path, CassetteHeader(model=MODEL, streaming=True))
    transport = ReplayTransport(load_cassette(path))
    async with anthropic.AsyncAnthropic(
        api_key="replay",
        base_url="http://replay.invalid",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=transport),
    ) as client:  # type: ignore[arg-type]
        page = await client.models.list()
    assert [m.id for m in page.data] == [MODEL]


async def test_recording_a_replay_converts_a_cassette_to_the_other_path(
    fake: FakeMessagesAPI, tmp_path: Path
) -> None:
    script_two_replies(fake)
    streamed = tmp_path / "streamed.jsonl"
    original = await run_turn(record_model(fake, streamed, True))

    converted = tmp_path / "converted.jsonl"
    model, _ = make_model(f"replay:{streamed}", streaming=False, record=converted, replay_strict=True)
    await run_turn(model)

    loaded = load_cassette(converted)
    assert loaded.header.streaming is False
    assert all(x.response.json_body is not None for x in loaded.exchanges)
    assert dones(await run_turn(replay_model(converted, True))) == dones(original)


async def test_a_compressed_reply_is_recorded_as_the_json_the_sdk_parsed(tmp_path: Path) -> None:
    """The real API may gzip a body; the cassette keeps what the SDK saw, not the wire bytes."""
    import gzip
    import json

    import anthropic
    import httpx2

    message = {
        "id": "msg_gz",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": "squeezed"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200,
            content=gzip.compress(json.dumps(message).encode()),
            headers={"content-type": "application/json", "content-encoding": "gzip", "request-id": "req_gz"},
        )

    path = tmp_path / "gzip.jsonl"
    writer = CassetteWriter(path, CassetteHeader(model=MODEL, streaming=False))
    transport = RecordingTransport(httpx2.MockTransport(handler), writer)
    async with anthropic.AsyncAnthropic(
        api_key=KEY,
        base_url="http://api.invalid",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=transport),
    ) as client:  # type: ignore[arg-type]
        reply = await client.messages.create(
            model=MODEL, max_tokens=16, messages=[{"role": "user", "content": "hi"}]
        )
    assert reply.content[0].type == "text" and reply.content[0].text == "squeezed"
    [exchange] = load_cassette(path).exchanges
    assert exchange.response.json_body == message
    assert exchange.response.headers == {"content-type": "application/json", "request-id": "req_gz"}


def test_a_bad_cassette_or_record_path_fails_when_the_model_is_made(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="cannot read cassette"):
        make_model(f"replay:{tmp_path / 'missing.jsonl'}", streaming=True)
    with pytest.raises(CassetteError, match="cannot write cassette"):
        make_model(MODEL, streaming=True, record=tmp_path / "no-such-dir" / "run.jsonl")


def test_importing_the_record_and_replay_modules_imports_neither_sdk_nor_httpx2() -> None:
    import subprocess
    import sys

    code = (
        "import sys, acp_agent.model.factory, acp_agent.model.transports; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('anthropic', 'httpx2')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30)
    assert out.stdout.strip() == "[]"
