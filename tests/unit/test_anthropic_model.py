"""AnthropicModel against the loopback Messages API: events, retries and faults on both paths."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import anyio
import pytest
import structlog.testing

from acp_agent.errors import AuthRequired, ModelUnavailable, StreamBroken
from acp_agent.model.anthropic import AnthropicModel, prompt_too_long
from acp_agent.model.base import (
    MessageDone,
    ModelEvent,
    ModelRequest,
    RetryScheduled,
    TextDelta,
    ThinkingDelta,
    ToolUseStarted,
    Usage,
)
from acp_agent.model.retry import Failure
from acp_agent.model.sdk import has_credentials
from acp_agent.testing import FakeMessagesAPI, replies

KEY = "sk-ant-marker-7d1e5c"
REQUEST = ModelRequest(model="claude-test-1", max_tokens=256, messages=[{"role": "user", "content": "hello"}])
OVERLOADED = replies.error(529, "overloaded_error", "Overloaded", retry_after_ms=10)
SHORT_STALL = 2.0
"""The stall (and read) limit of the tests that wait one out: a healthy request on a loaded box
must beat it (each attempt's headers get the limit + 1 s, every later read the limit)."""


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeMessagesAPI]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with FakeMessagesAPI() as api:
        yield api


def model_for(fake: FakeMessagesAPI, streaming: bool, **options: Any) -> AnthropicModel:
    return AnthropicModel(streaming=streaming, api_key=KEY, base_url=fake.base_url, **options)


async def collect(model: AnthropicModel, request: ModelRequest = REQUEST) -> list[ModelEvent]:
    try:
        return [event async for event in model.respond(request)]
    finally:
        await model.aclose()


def texts(events: list[ModelEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_a_reply_becomes_the_same_event_sequence_on_both_paths(
    fake: FakeMessagesAPI, streaming: bool
) -> None:
    fake.script(
        replies.message(
            [
                replies.text_block("Let me look."),
                replies.tool_use_block("read_file", {"path": "a.txt"}, id="toolu_a"),
            ],
            stop_reason="tool_use",
            usage=(20, 7),
        )
    )
    events = await collect(model_for(fake, streaming))
    kinds = [type(e) for e in events if not isinstance(e, Usage)]
    assert kinds == [TextDelta, ToolUseStarted, MessageDone]
    assert events[-2] == Usage(input_tokens=20, output_tokens=7)
    done = events[-1]
    assert isinstance(done, MessageDone)
    assert done.content == [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {"path": "a.txt"}},
    ]
    assert done.stop_reason == "tool_use"
    assert done.usage == Usage(input_tokens=20, output_tokens=7)
    assert done.message_id and done.message_id.startswith("msg_")
    assert ToolUseStarted(1, "toolu_a", "read_file") in events


async def test_streamed_text_deltas_concatenate_to_the_text_exactly(
    fake: FakeMessagesAPI, streaming: bool
) -> None:
    text = 'Héllo — wörld 🎉\n  with  spaces\tand "quotes" \\ end'
    fake.script(replies.text(text, chunks=9))
    events = await collect(model_for(fake, streaming))
    assert texts(events) == text
    assert events[-1].content == [{"type": "text", "text": text}]  # type: ignore[union-attr]
    if streaming:
        assert sum(isinstance(e, TextDelta) for e in events) == 9


async def test_thinking_blocks_are_kept_with_their_signature(fake: FakeMessagesAPI, streaming: bool) -> None:
    fake.script(
        replies.message(
            [
                replies.thinking_block("ponder this", "sig-abc", chunks=3),
                replies.redacted_thinking_block("opaque=="),
                replies.text_block("answer"),
            ]
        )
    )
    events = await collect(model_for(fake, streaming))
    thought = "".join(e.text for e in events if isinstance(e, ThinkingDelta))
    assert thought == "ponder this"
    assert events[-1].content == [  # type: ignore[union-attr]
        {"type": "thinking", "thinking": "ponder this", "signature": "sig-abc"},
        {"type": "redacted_thinking", "data": "opaque=="},
        {"type": "text", "text": "answer"},
    ]


async def test_a_tool_use_cut_by_max_tokens_keeps_the_complete_part_of_its_input(
    fake: FakeMessagesAPI, streaming: bool
) -> None:
    cut = replies.tool_use_block(
        "write_file", {"path": "a.txt"}, id="toolu_cut", partial_json='{"path": "a.txt", "content": "hel'
    )
    fake.script(replies.message([replies.text_block("Writing."), cut], stop_reason="max_tokens"))
    events = await collect(model_for(fake, streaming))
    done = events[-1]
    assert isinstance(done, MessageDone)
    assert done.stop_reason == "max_tokens"
    assert done.content[1] == {
        "type": "tool_use",
        "id": "toolu_cut",
        "name": "write_file",
        "input": {"path": "a.txt"},
    }


async def test_the_request_carries_only_the_fields_that_are_set(
    fake: FakeMessagesAPI, streaming: bool
) -> None:
    tools = [{"name": "t", "description": "d", "input_schema": {"type": "object"}}]
    full = ModelRequest(
        model="claude-test-1",
        max_tokens=64,
        messages=REQUEST.messages,
        system="be brief",
        tools=tools,
        tool_choice={"type": "auto"},
        thinking={"type": "enabled", "budget_tokens": 1024},
    )
    fake.script(replies.text("a"), replies.text("b"))
    await collect(model_for(fake, streaming, prompt_cache=False), REQUEST)
    await collect(model_for(fake, streaming, prompt_cache=False), full)
    bare, rich = (r.body for r in fake.requests)
    assert set(bare) - {"stream"} == {"model", "max_tokens", "messages"}
    assert rich["system"] == "be brief"
    assert rich["tools"] == tools
    assert rich["tool_choice"] == {"type": "auto"}
    assert rich["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert all(r.is_stream is streaming for r in fake.requests)


async def test_a_529_then_200_is_retried_once_with_the_identical_request(
    fake: FakeMessagesAPI, streaming: bool
) -> None:
    fake.script(OVERLOADED, replies.text("fine now"))
    events = await collect(model_for(fake, streaming))
    retries = [e for e in events if isinstance(e, RetryScheduled)]
    assert retries == [RetryScheduled(1, 0.01, retries[0].reason)]
    assert "529" in retries[0].reason
    assert texts(events) == "fine now"
    assert isinstance(events[-1], MessageDone)
    assert fake.attempts == 2
    first, second = fake.requests
    assert first.body == second.body
    assert [r.headers["x-stainless-retry-count"] for r in fake.requests] == ["0", "0"]


async def test_retries_are_bounded_then_the_model_is_unavailable(
    fake: FakeMessagesAPI, streaming: bool
) -> None:
    fake.set_fallback(OVERLOADED)
    with pytest.raises(ModelUnavailable) as caught:
        await collect(model_for(fake, streaming, max_retries=2))
    assert fake.attempts == 3
    assert caught.value.retryable
    assert "gave up after 2 retries" in str(caught.value)
    assert caught.value.detail["status"] == 529


async def test_a_retry_after_beyond_the_cap_fails_at_once(fake: FakeMessagesAPI, streaming: bool) -> None:
    fake.script(replies.error(429, "rate_limit_error", "slow down", retry_after=45))
    with anyio.fail_after(15), pytest.raises(ModelUnavailable, match="asked to wait 45 s"):
        await collect(model_for(fake, streaming))  # a wait of the capped 20 s would not fit in 15
    assert fake.attempts == 1


async def test_the_turn_deadline_caps_the_wait(fake: FakeMessagesAPI, streaming: bool) -> None:
    fake.script(replies.error(529, "overloaded_error", "Overloaded", retry_after_ms=10_000))
    ending_soon = replace(REQUEST, deadline=time.monotonic() + 5)  # 10 s is within the 20 s cap
    with pytest.raises(ModelUnavailable, match="asked to wait 10 s, more than the"):
        await collect(model_for(fake, streaming), ending_soon)
    assert fake.attempts == 1


async def test_a_turn_with_time_left_waits_for_the_retry(fake: FakeMessagesAPI, streaming: bool) -> None:
    fake.script(replies.error(529, "overloaded_error", "Overloaded", retry_after_ms=200), replies.text("hi"))
    events = await collect(model_for(fake, streaming), replace(REQUEST, deadline=time.monotonic() + 60))
    assert texts(events) == "hi"
    assert fake.attempts == 2


async def test_a_400_is_not_retried_and_names_status_and_message(
    fake: FakeMessagesAPI, streaming: bool
) -> None:
    fake.script(replies.error(400, "invalid_request_error", "messages: field required"))
    with pytest.raises(ModelUnavailable) as caught:
        # The retry rule alone: without the cache there are no diagnostics to probe (tested below).
        await collect(model_for(fake, streaming, prompt_cache=False))
    assert fake.attempts == 1
    assert "400" in str(caught.value)
    assert "messages: field required" in str(caught.value)
    assert not caught.value.retryable


@pytest.mark.parametrize(("status", "error_type"), [(401, "authentication_error"), (403, "permission_error")])
async def test_401_and_403_mean_auth_required(
    fake: FakeMessagesAPI, streaming: bool, status: int, error_type: str
) -> None:
    fake.script(replies.error(status, error_type, f"bad key {KEY}"))
    with pytest.raises(AuthRequired) as caught:
        await collect(model_for(fake, streaming))
    assert fake.attempts == 1
    assert str(status) in str(caught.value)
    assert KEY not in str(caught.value)


async def test_a_prompt_too_long_ends_with_the_context_window_stop(
    fake: FakeMessagesAPI, streaming: bool
) -> None:
    fake.script(
        replies.error(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum")
    )
    events = await collect(model_for(fake, streaming))
    assert events == [MessageDone([], "context_window_exceeded", Usage())]
    assert fake.attempts == 1


@pytest.mark.parametrize(
    ("status", "error_type", "message", "too_long"),
    [
        (400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", True),
        (400, "invalid_request_error", "Prompt is too long", True),
        (413, "request_too_large", "prompt is too long", False),
        (400, "invalid_request_error", "messages.0.content: the prompt is too long to cache", False),
        (400, None, "prompt is too long", False),
    ],
)
def test_prompt_too_long_is_told_by_status_type_and_the_start_of_the_api_message(
    status: int, error_type: str | None, message: str, too_long: bool
) -> None:
    failure = Failure("HTTP …", status=status, error_type=error_type, api_message=message)
    assert prompt_too_long(failure) is too_long


def diagnostics_sent(fake: FakeMessagesAPI) -> list[bool]:
    return ["diagnostics" in r.body for r in fake.requests]


async def test_a_400_to_a_request_with_diagnostics_is_sent_once_without_them_then_reported(
    fake: FakeMessagesAPI, streaming: bool
) -> None:
    bad = replies.error(400, "invalid_request_error", "messages.0: unexpected block xyz")
    fake.script(bad, bad)
    model = model_for(fake, streaming)
    with pytest.raises(ModelUnavailable, match="unexpected block xyz") as caught:
        await collect(model)
    assert not caught.value.retryable
    assert diagnostics_sent(fake) == [True, False]
    fake.script(replies.text("fine"))
    assert texts(await collect(model)) == "fine"
    assert diagnostics_sent(fake) == [True, False, True]  # not the field's fault: it stays on


async def test_a_gateway_that_refuses_diagnostics_gets_none_once_the_request_without_them_is_taken(
    monkeypatch: pytest.MonkeyPatch, streaming: bool
) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with FakeMessagesAPI(reject_diagnostics=True) as gateway:
        gateway.script(replies.text("one"), replies.text("two"))
        model = model_for(gateway, streaming)
        assert texts(await collect(model)) == "one"
        assert texts(await collect(model)) == "two"
        assert diagnostics_sent(gateway) == [True, False, False]


async def test_once_a_request_with_diagnostics_was_taken_a_400_is_reported_at_once(
    fake: FakeMessagesAPI, streaming: bool
) -> None:
    fake.script(replies.text("fine"), replies.error(400, "invalid_request_error", "bad block"))
    model = model_for(fake, streaming)
    await collect(model)
    with pytest.raises(ModelUnavailable, match="bad block"):
        await collect(model)
    assert diagnostics_sent(fake) == [True, True]


async def test_a_reply_without_stop_reason_is_a_broken_stream(fake: FakeMessagesAPI, streaming: bool) -> None:
    fake.script(replies.text("half", stop_reason=None))
    with pytest.raises(StreamBroken) as caught:
        await collect(model_for(fake, streaming))
    assert caught.value.partial == [{"type": "text", "text": "half"}]
    assert fake.attempts == 1


async def test_a_drop_before_any_response_is_retried(fake: FakeMessagesAPI, streaming: bool) -> None:
    fake.script(replies.drop(), replies.text("after the drop"))
    events = await collect(model_for(fake, streaming))
    assert sum(isinstance(e, RetryScheduled) for e in events) == 1
    assert texts(events) == "after the drop"
    assert fake.attempts == 2


async def test_a_drop_after_output_is_a_broken_stream_with_the_partial_text(fake: FakeMessagesAPI) -> None:
    fake.script(
        replies.message(
            [replies.text_block("abcdef", chunks=3), replies.tool_use_block("f", {"x": 1})], drop_after=8
        )
    )
    events: list[ModelEvent] = []
    with pytest.raises(StreamBroken) as caught:
        async for event in model_for(fake, True).respond(REQUEST):
            events.append(event)  # noqa: PERF401 - the list must hold what came before the raise
    assert texts(events) == "abcdef"
    assert ToolUseStarted in [type(e) for e in events]
    assert caught.value.partial == [{"type": "text", "text": "abcdef"}]  # tool_use dropped
    assert fake.attempts == 1


async def test_a_drop_mid_text_keeps_the_text_received_so_far(fake: FakeMessagesAPI) -> None:
    fake.script(replies.text("abcdef", chunks=3, drop_after=4))
    with pytest.raises(StreamBroken) as caught:
        await collect(model_for(fake, True))
    assert caught.value.partial == [{"type": "text", "text": "abcd"}]


async def test_a_truncated_stream_is_a_broken_stream(fake: FakeMessagesAPI) -> None:
    fake.script(replies.text("abcdef", chunks=3, truncate_after=5))
    with pytest.raises(StreamBroken, match="message_stop") as caught:
        await collect(model_for(fake, True))
    assert caught.value.partial == [{"type": "text", "text": "abcdef"}]
    assert fake.attempts == 1


@pytest.mark.parametrize(
    "stall",
    [replies.stall(), replies.text("x", stall_after=1)],
    ids=["before-headers", "after-message-start"],
)
async def test_a_stall_before_output_is_retried(fake: FakeMessagesAPI, stall: Any) -> None:
    fake.script(stall, replies.text("recovered"))
    events = await collect(model_for(fake, True, stall_seconds=SHORT_STALL))
    assert [e.reason for e in events if isinstance(e, RetryScheduled)] == [
        "no answer from the API for 2 s (stall)"
    ]
    assert texts(events) == "recovered"
    assert fake.attempts == 2


async def test_a_stall_after_output_is_a_broken_stream(fake: FakeMessagesAPI) -> None:
    fake.script(replies.text("abc", chunks=3, stall_after=3))
    with pytest.raises(StreamBroken, match="stall") as caught:
        await collect(model_for(fake, True, stall_seconds=SHORT_STALL))
    assert caught.value.partial == [{"type": "text", "text": "a"}]
    assert fake.attempts == 1


async def test_a_non_streaming_read_timeout_is_not_retried(fake: FakeMessagesAPI) -> None:
    fake.script(replies.stall(), replies.text("never asked for"))
    with pytest.raises(ModelUnavailable, match="not retried"):
        await collect(model_for(fake, False, request_timeout=SHORT_STALL))
    assert fake.attempts == 1


async def test_an_error_event_before_output_is_retried(fake: FakeMessagesAPI) -> None:
    fake.script(replies.text("x", error_event_after=1), replies.text("second try"))
    events = await collect(model_for(fake, True))
    assert sum(isinstance(e, RetryScheduled) for e in events) == 1
    assert texts(events) == "second try"
    assert fake.attempts == 2


async def test_an_error_event_after_output_is_a_broken_stream(fake: FakeMessagesAPI) -> None:
    fake.script(replies.text("abc", chunks=3, error_event_after=3))
    with pytest.raises(StreamBroken, match="overloaded_error") as caught:
        await collect(model_for(fake, True))
    assert caught.value.partial == [{"type": "text", "text": "a"}]
    assert caught.value.retryable
    assert fake.attempts == 1


async def test_cancellation_propagates_and_releases_the_request(
    fake: FakeMessagesAPI, streaming: bool
) -> None:
    fake.script(replies.text("abc", chunks=3, stall_after=3) if streaming else replies.stall())
    model = model_for(fake, streaming, stall_seconds=30, request_timeout=30)
    with anyio.fail_after(5):  # the stall and read timeouts (30 s) would not fit: only the cancel ends it
        with anyio.move_on_after(0.5) as scope:
            await collect(model)
    assert scope.cancelled_caught


async def test_the_api_key_never_appears_in_errors(fake: FakeMessagesAPI, streaming: bool) -> None:
    fake.script(replies.error(400, "invalid_request_error", f"key {KEY} is odd"))
    with pytest.raises(ModelUnavailable) as caught:
        await collect(model_for(fake, streaming))
    assert KEY not in str(caught.value)
    assert KEY not in repr(model_for(fake, streaming))


async def test_no_credentials_is_decided_before_any_request(
    fake: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    for name in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_PROFILE",
        "ANTHROPIC_FEDERATION_RULE_ID",
        "ANTHROPIC_IDENTITY_TOKEN",
        "ANTHROPIC_IDENTITY_TOKEN_FILE",
    ):
        monkeypatch.delenv(name, raising=False)
    for name in ("ANTHROPIC_CONFIG_DIR", "HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(name, str(tmp_path))
    assert not has_credentials()
    model = AnthropicModel(streaming=True, base_url=fake.base_url)
    with pytest.raises(AuthRequired, match="ANTHROPIC_API_KEY"):
        await collect(model)
    assert fake.attempts == 0
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    assert has_credentials()
    assert has_credentials(api_key="explicit")


async def test_a_key_an_error_message_quotes_is_redacted_in_every_spelling(
    fake: FakeMessagesAPI, streaming: bool
) -> None:
    """A key with a newline in it (an `apiKeyHelper`'s output with a note after it) is refused by
    the HTTP layer, whose message quotes the header's value as bytes, the newline escaped: the
    error the editor, the log and the record get names no part of it (the policy review)."""
    secret = "sk-ant-SECRET123456789\nnote: expires soon"
    model = AnthropicModel(streaming=streaming, api_key=secret, base_url=fake.base_url, max_retries=0)
    with structlog.testing.capture_logs() as logs, pytest.raises(ModelUnavailable) as caught:
        await collect(model)
    said = str(caught.value) + repr(logs)
    assert "SECRET123456789" not in said and "expires soon" not in said, said
    assert "[redacted]" in said
