"""Every fault the Messages API can bring, on both paths: the turn ends cleanly (a retry that works,
or one JSON-RPC error carrying the turn record), the agent stays up, and the history it sends next
is valid (decisions D1 and D3; durable issue, part 5).

One agent per API path serves the whole module (each test opens its own session) and one fake
serves both: a spawn costs seconds on a loaded CI box, a session costs milliseconds.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from acp_agent.testing.messages_api import RecordedRequest
from tests.support import base_env
from tests.support.agent import AgentProcess
from tests.support.history import assert_valid_history
from tests.support.waits import wait_until
from tests.wire.conftest import chunks, turn_record

# Both limits bound every request of the module, not only the faulty ones: a healthy reply must
# always beat them, on a loaded CI box too (the agent is warmed up first: see `shared_agent`).
STALL_SECONDS = 4.0  # ACP_AGENT_STALL_SECONDS: no stream event for this long is a stall
REQUEST_TIMEOUT = 4.0  # ACP_AGENT_REQUEST_TIMEOUT: the non-streaming read timeout
MAX_RETRIES = 2
SLACK = 8.0  # a generous bound on an answer that must not wait, for a loaded CI box (decisions D5)

OK_TEXT = "the answer after the fault"
STREAM_ONLY = pytest.mark.parametrize("path", [True], ids=["stream"], indirect=True)
NO_STREAM_ONLY = pytest.mark.parametrize("path", [False], ids=["no-stream"], indirect=True)

# Events of a streamed `replies.text(..., chunks=4)`: 1 message_start, 2 content_block_start,
# 3-6 text deltas, 7 content_block_stop, 8 message_delta, 9 message_stop.
AFTER_TWO_DELTAS = 4
BEFORE_ANY_DELTA = 2
BEFORE_MESSAGE_STOP = 8


class Script:
    """The replies of the running test, one per attempt; the module's fake asks it each time."""

    def __init__(self) -> None:
        self.queue: deque[replies.Reply] = deque()

    def __call__(self, body: dict[str, Any], attempt: int) -> replies.Reply:
        if self.queue:
            return self.queue.popleft()
        # A 400 is never retried: a test that scripted too few replies fails fast and clearly.
        return replies.error(400, "invalid_request_error", "fake: this test scripted no more replies")


@dataclass
class Fake:
    api: FakeMessagesAPI
    script: Script


@dataclass
class Case:
    """One test's view: its own session on the shared agent, and the attempts made since it began."""

    agent: AgentProcess
    fake: Fake
    session: str
    cwd: Path
    first_attempt: int
    streaming: bool
    started: float = field(default_factory=time.monotonic)

    def script(self, *items: replies.Reply) -> None:
        self.fake.script.queue.extend(items)

    @property
    def attempts(self) -> list[RecordedRequest]:
        return self.fake.api.requests[self.first_attempt :]

    async def prompt(self, text: str = "go", *, timeout: float = 30) -> tuple[dict[str, Any], float]:
        """Send a prompt; return the whole response and the seconds it took."""
        started = time.monotonic()
        response = await self.agent.prompt(self.session, text, timeout=timeout)
        return response, time.monotonic() - started

    def updates(self, kind: str) -> list[dict[str, Any]]:
        return chunks(self.agent, self.session, kind)

    def relayed_text(self) -> str:
        return "".join(c["content"]["text"] for c in self.updates("agent_message_chunk"))


# ── fixtures ──────────────────────────────────────────────────────────────────────────────────


@pytest.fixture(scope="module")
def fake() -> Iterator[Fake]:
    script = Script()
    with FakeMessagesAPI() as api:
        api.set_fallback(script)
        yield Fake(api, script)


@pytest.fixture(scope="module", params=[True, False], ids=["stream", "no-stream"])
def path(request: pytest.FixtureRequest) -> bool:
    """The API path of the module's agent: streaming (SSE) or one JSON body per request."""
    value: bool = request.param
    return value


@pytest.fixture(scope="module")
async def shared_agent(
    path: bool, fake: Fake, acp_schema: Any, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[AgentProcess]:
    home = tmp_path_factory.mktemp("faults-stream" if path else "faults-no-stream")
    env = base_env(
        home,
        ANTHROPIC_API_KEY="test-key",
        ANTHROPIC_BASE_URL=fake.api.base_url,
        ACP_AGENT_MODEL="claude-test-1",
        ACP_AGENT_STREAMING="1" if path else "0",
        ACP_AGENT_STALL_SECONDS=f"{STALL_SECONDS:g}",
        ACP_AGENT_REQUEST_TIMEOUT=f"{REQUEST_TIMEOUT:g}",
        ACP_AGENT_MAX_RETRIES=str(MAX_RETRIES),
        ACP_AGENT_STATE_DIR=str(home / "state"),
    )
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        await warm_up(agent, fake, home)
        yield agent


async def warm_up(agent: AgentProcess, fake: Fake, home: Path) -> None:
    """One healthy turn before the tests: the SDK's first request does its one-time work (lazy
    imports, the HTTP client's first connection) here, not inside a test's stall limit. Spare
    replies cover a first attempt that a loaded box made miss the limit anyway."""
    cwd = home / "warm-up"
    cwd.mkdir()
    session = await agent.new_session(cwd)
    fake.script.queue.extend(replies.text("warm") for _ in range(MAX_RETRIES + 1))
    for _ in range(MAX_RETRIES + 1):
        if "result" in await agent.prompt(session, "warm up", timeout=60):
            break
    fake.script.queue.clear()


@pytest.fixture
async def case(
    shared_agent: AgentProcess, fake: Fake, path: bool, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Case]:
    """A fresh session; afterwards, what this test made the agent write must be clean."""
    failed_before = request.session.testsfailed
    assert not fake.script.queue, "a previous test left scripted replies unused"
    if shared_agent.returncode is not None:
        pytest.fail(
            f"the shared agent has exited ({shared_agent.returncode}); "
            f"an earlier test killed it\n{shared_agent.stderr_text()[-3000:]}"
        )
    transcript = shared_agent.transcript
    seen = (len(transcript.protocol_violations), len(transcript.schema_problems))
    cwd = tmp_path / "workspace"
    cwd.mkdir()
    session = await shared_agent.new_session(cwd)
    yield Case(shared_agent, fake, session, cwd, fake.api.attempts, path)
    fresh = (transcript.protocol_violations[seen[0] :], transcript.schema_problems[seen[1] :])
    assert fresh == ([], []), f"the agent broke the protocol in this test: {fresh}"
    left = list(fake.script.queue)
    fake.script.queue.clear()
    if request.session.testsfailed == failed_before:  # a failed test has said enough already
        assert not left, f"scripted replies never requested: {left}"


# ── what every fault must leave behind ────────────────────────────────────────────────────────


async def assert_agent_goes_on(case: Case) -> list[dict[str, Any]]:
    """The same session answers the next prompt, and the history it sends is valid; returns it."""
    case.script(replies.text(OK_TEXT))
    before = len(case.attempts)
    response, _ = await case.prompt("are you still there?")
    assert response.get("result", {}).get("stopReason") == "end_turn", (
        f"the prompt after the fault did not work: {response}"
    )
    assert len(case.attempts) == before + 1
    messages: list[dict[str, Any]] = case.attempts[-1].body["messages"]
    assert_valid_history(messages)
    return messages


def assert_retried_once_then_answered(case: Case, response: dict[str, Any]) -> dict[str, Any]:
    """One retry: the fake saw the extra attempt; `retries` counts it and `modelRequests` does not."""
    assert response.get("result", {}).get("stopReason") == "end_turn", response
    record = turn_record(response)
    assert len(case.attempts) == 2
    assert record["retries"] == 1 and record["modelRequests"] == 1, record
    assert case.attempts[0].body == case.attempts[1].body, "a retry re-sends the same request"
    assert case.relayed_text() == OK_TEXT, "only the successful attempt reaches the editor"
    return record


def assert_turn_failed(
    case: Case, response: dict[str, Any], *, code: int = -32603, attempts: int = 1
) -> tuple[str, dict[str, Any]]:
    """One JSON-RPC error with the turn record in `data`; returns the message and the record."""
    assert "error" in response, f"wanted the turn to fail with an error, got {response}"
    error = response["error"]
    assert error["code"] == code, error
    record = error["data"]["acp-agent"]["turn"]
    assert record["stopReason"] == "error" and record["modelRequests"] == 1, record
    assert record["retries"] == attempts - 1, record
    assert len(case.attempts) == attempts, f"the fake saw {len(case.attempts)} attempts"
    assert isinstance(error["message"], str) and error["message"], error
    return error["message"], record


# ── HTTP errors ───────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(("status", "kind"), [(429, "rate_limit_error"), (529, "overloaded_error")])
async def test_429_and_529_are_retried_after_the_retry_after_ms_the_api_asked_for(
    case: Case, status: int, kind: str
) -> None:
    # 1.2 s is above the whole default first backoff (at most 0.5 s): only the header explains it.
    case.script(replies.error(status, kind, "slow down", retry_after_ms=1200), replies.text(OK_TEXT))
    response, elapsed = await case.prompt()
    assert_retried_once_then_answered(case, response)
    assert elapsed >= 1.2, f"retried after {elapsed:.2f} s, before the 1.2 s the API asked for"
    notes = case.updates("agent_thought_chunk")
    assert len(notes) == 1 and "1.2 s" in notes[0]["content"]["text"], notes
    await assert_agent_goes_on(case)


async def test_retry_after_in_seconds_is_honoured_when_there_is_no_retry_after_ms(case: Case) -> None:
    case.script(replies.error(529, "overloaded_error", "Overloaded", retry_after=1), replies.text(OK_TEXT))
    response, elapsed = await case.prompt()
    assert_retried_once_then_answered(case, response)
    assert elapsed >= 1.0, f"retried after {elapsed:.2f} s, before the 1 s the API asked for"
    await assert_agent_goes_on(case)


async def test_a_retry_after_beyond_the_cap_fails_at_once_saying_how_long_the_api_asked(case: Case) -> None:
    case.script(replies.error(529, "overloaded_error", "Overloaded", retry_after_ms=90_000))
    response, _ = await case.prompt(timeout=SLACK)  # a wait of the capped 20 s would not fit
    message, _ = assert_turn_failed(case, response)
    assert case.updates("agent_thought_chunk") == [], "the agent announced a wait instead of failing"
    assert "90" in message, message
    assert response["error"]["data"]["acp-agent"]["retryable"] is True
    await assert_agent_goes_on(case)


async def test_a_500_is_retried(case: Case) -> None:
    case.script(replies.error(500, "api_error", "Internal server error"), replies.text(OK_TEXT))
    response, _ = await case.prompt()
    assert_retried_once_then_answered(case, response)
    await assert_agent_goes_on(case)


async def test_exhausted_retries_end_the_turn_with_an_error_that_says_so(case: Case) -> None:
    case.script(
        *[
            replies.error(529, "overloaded_error", "Overloaded", retry_after_ms=50)
            for _ in range(MAX_RETRIES + 1)
        ]
    )
    response, _ = await case.prompt()
    message, _ = assert_turn_failed(case, response, attempts=MAX_RETRIES + 1)
    assert "529" in message and "retries" in message, message
    data = response["error"]["data"]["acp-agent"]
    assert data["kind"] == "model_unavailable" and data["retryable"] is True, data
    assert case.relayed_text() == ""
    await assert_agent_goes_on(case)


async def test_a_400_is_not_retried_and_the_error_carries_the_api_message(case: Case) -> None:
    # Once the API has taken a request carrying diagnostics, a 400 is never sent again; before
    # that, it is re-sent once without them (test_anthropic_model.py has those cases).
    await assert_agent_goes_on(case)
    case.first_attempt = len(case.fake.api.requests)
    case.script(replies.error(400, "invalid_request_error", "messages.0: unexpected block xyz"))
    response, _ = await case.prompt()
    message, _ = assert_turn_failed(case, response, attempts=1)
    assert "unexpected block xyz" in message and "400" in message, message
    assert response["error"]["data"]["acp-agent"]["retryable"] is False
    await assert_agent_goes_on(case)


async def test_prompt_too_long_ends_the_turn_max_tokens_with_context_window_exceeded(case: Case) -> None:
    case.script(
        replies.error(400, "invalid_request_error", "prompt is too long: 212345 tokens > 200000 maximum")
    )
    response, _ = await case.prompt()
    assert response.get("result", {}).get("stopReason") == "max_tokens", response
    record = turn_record(response)
    assert record["modelStopReason"] == "context_window_exceeded", record  # decisions D1
    assert record["modelRequests"] == 1 and record["retries"] == 0
    assert len(case.attempts) == 1
    await assert_agent_goes_on(case)


@pytest.mark.parametrize(("status", "kind"), [(401, "authentication_error"), (403, "permission_error")])
async def test_401_and_403_end_the_turn_auth_required(case: Case, status: int, kind: str) -> None:
    case.script(replies.error(status, kind, "invalid x-api-key"))
    response, _ = await case.prompt()
    assert_turn_failed(case, response, code=-32000, attempts=1)
    assert response["error"]["data"]["acp-agent"]["kind"] == "auth_required"
    await assert_agent_goes_on(case)


# ── the API's own verdict: x-should-retry ─────────────────────────────────────────────────────


async def stderr_since(agent: AgentProcess, start: int, until: str, timeout: float = 10) -> str:
    """The agent's stderr from `start` on, once a line holding `until` has arrived (it comes
    after every line the test counts: stderr is one ordered stream, read in the background)."""

    def arrived() -> str | None:
        text = agent.stderr_text()[start:]
        return text if until in text else None

    return await wait_until(arrived, f"{until!r} on the agent's stderr", timeout=timeout)


async def test_x_should_retry_true_retries_even_a_400_and_the_retry_is_logged_once(case: Case) -> None:
    # Once the API has taken a request, a 400 is no longer re-sent without diagnostics (the 400
    # test above): what follows is the header's doing alone.
    await assert_agent_goes_on(case)
    case.first_attempt = len(case.fake.api.requests)
    logged = len(case.agent.stderr_text())
    asked = {"x-should-retry": "true"}
    case.script(
        replies.error(400, "invalid_request_error", "try again", headers=asked), replies.text(OK_TEXT)
    )
    response, _ = await case.prompt()
    assert response.get("result", {}).get("stopReason") == "end_turn", response
    record = turn_record(response)
    assert record["retries"] == 1 and record["modelRequests"] == 1, record
    assert len(case.attempts) == 2 and case.attempts[0].body == case.attempts[1].body
    stderr = await stderr_since(case.agent, logged, '"turn.ended"')
    retries = [line for line in stderr.splitlines() if '"model.retry"' in line]
    assert len(retries) == 1, f"one log line per retry, got {len(retries)}:\n" + "\n".join(retries)
    assert "HTTP 400" in retries[0] and '"attempt": 1' in retries[0], retries[0]
    notes = case.updates("agent_thought_chunk")
    assert sum("retrying in" in n["content"]["text"] for n in notes) == 1, notes
    await assert_agent_goes_on(case)


async def test_x_should_retry_false_is_not_retried_even_for_a_529(case: Case) -> None:
    case.script(replies.error(529, "overloaded_error", "Overloaded", headers={"x-should-retry": "false"}))
    response, _ = await case.prompt()
    message, _ = assert_turn_failed(case, response, attempts=1)
    assert "529" in message, message
    assert response["error"]["data"]["acp-agent"]["retryable"] is False
    await assert_agent_goes_on(case)


# ── stalls ────────────────────────────────────────────────────────────────────────────────────


@STREAM_ONLY
@pytest.mark.parametrize("stall", ["before_the_status_line", "after_the_200"])
async def test_a_stall_before_any_output_is_retried(case: Case, stall: str) -> None:
    first = (
        replies.stall()
        if stall == "before_the_status_line"
        else replies.text("never seen", chunks=4, stall_after=BEFORE_ANY_DELTA)
    )
    case.script(first, replies.text(OK_TEXT))
    response, elapsed = await case.prompt()
    assert_retried_once_then_answered(case, response)
    assert elapsed >= STALL_SECONDS, f"retried after {elapsed:.2f} s, before the stall limit"
    await assert_agent_goes_on(case)


@NO_STREAM_ONLY
async def test_a_non_streaming_read_timeout_is_an_error_and_never_retried(case: Case) -> None:
    # Not retried: the API may have processed (and billed) the request (D1).
    case.script(replies.stall())
    response, elapsed = await case.prompt()
    message, _ = assert_turn_failed(case, response, attempts=1)
    assert elapsed >= REQUEST_TIMEOUT, f"gave up after {elapsed:.2f} s, before the read timeout"
    assert "not retried" in message, message
    await assert_agent_goes_on(case)


@STREAM_ONLY
async def test_a_stall_after_output_ends_the_turn_with_an_error_not_a_hang(case: Case) -> None:
    case.script(replies.text("one two six ten.", chunks=4, stall_after=AFTER_TWO_DELTAS))
    response, elapsed = await case.prompt()
    message, _ = assert_turn_failed(case, response, attempts=1)
    assert elapsed >= STALL_SECONDS, f"gave up after {elapsed:.2f} s, before the stall limit"
    assert "stall" in message, message
    shown = case.relayed_text()
    assert shown == "one two ", shown
    history = await assert_agent_goes_on(case)
    assert {"type": "text", "text": shown} in history[1]["content"], (
        "the text relayed before the break is kept as the assistant's message (D3)"
    )


# ── dropped, truncated and failed streams ─────────────────────────────────────────────────────


async def test_a_dropped_connection_before_any_output_is_retried(case: Case) -> None:
    first = (
        replies.text("never seen", chunks=4, drop_after=BEFORE_ANY_DELTA)
        if case.streaming
        else replies.drop()
    )
    case.script(first, replies.text(OK_TEXT))
    response, _ = await case.prompt()
    assert_retried_once_then_answered(case, response)
    await assert_agent_goes_on(case)


@STREAM_ONLY
async def test_a_dropped_connection_after_output_is_an_error_keeping_the_partial_text(case: Case) -> None:
    case.script(replies.text("one two six ten.", chunks=4, drop_after=AFTER_TWO_DELTAS))
    response, _ = await case.prompt(timeout=SLACK)  # answered, not left hanging
    assert_turn_failed(case, response, attempts=1)
    history = await assert_agent_goes_on(case)
    assert {"type": "text", "text": "one two "} in history[1]["content"]


@STREAM_ONLY
async def test_a_stream_truncated_before_message_stop_is_an_error_not_success(case: Case) -> None:
    case.script(replies.text("complete words", chunks=4, truncate_after=BEFORE_MESSAGE_STOP))
    response, _ = await case.prompt()
    message, _ = assert_turn_failed(case, response, attempts=1)
    assert "message_stop" in message, message
    history = await assert_agent_goes_on(case)
    assert {"type": "text", "text": "complete words"} in history[1]["content"]


@STREAM_ONLY
async def test_a_stream_truncated_before_any_output_is_retried(case: Case) -> None:
    # Nothing was relayed, so the body that ended early is a connection failure like a drop (D1).
    case.script(replies.text("never seen", chunks=4, truncate_after=BEFORE_ANY_DELTA), replies.text(OK_TEXT))
    response, _ = await case.prompt()
    assert_retried_once_then_answered(case, response)
    await assert_agent_goes_on(case)


@STREAM_ONLY
async def test_an_error_event_before_any_output_is_retried(case: Case) -> None:
    case.script(
        replies.text("never seen", chunks=4, error_event_after=BEFORE_ANY_DELTA), replies.text(OK_TEXT)
    )
    response, _ = await case.prompt()
    assert_retried_once_then_answered(case, response)
    await assert_agent_goes_on(case)


@STREAM_ONLY
async def test_an_error_event_after_output_is_an_error_naming_it(case: Case) -> None:
    case.script(replies.text("one two six ten.", chunks=4, error_event_after=AFTER_TWO_DELTAS))
    response, _ = await case.prompt()
    message, _ = assert_turn_failed(case, response, attempts=1)
    assert "overloaded_error" in message, message
    history = await assert_agent_goes_on(case)
    assert {"type": "text", "text": "one two "} in history[1]["content"]


async def test_a_reply_without_stop_reason_is_an_error_not_success(case: Case) -> None:
    case.script(replies.text("an answer cut short", stop_reason=None))
    response, _ = await case.prompt()
    message, _ = assert_turn_failed(case, response, attempts=1)
    assert "stop_reason" in message, message
    await assert_agent_goes_on(case)


# ── tool_use blocks cut short ─────────────────────────────────────────────────────────────────


async def bypass_permissions(case: Case) -> None:
    """So a wrongly run command would really run: the test could not pass by a refused permission."""
    response = await case.agent.request(
        "session/set_mode", {"sessionId": case.session, "modeId": "bypassPermissions"}
    )
    assert response.get("result") == {}, response


def tool_updates(case: Case, call_id: str) -> list[dict[str, Any]]:
    return [
        u for u in (p["update"] for p in case.agent.updates(case.session)) if u.get("toolCallId") == call_id
    ]


async def test_a_tool_call_whose_json_was_cut_short_is_refused_with_a_clear_tool_error(case: Case) -> None:
    await bypass_permissions(case)
    marker = case.cwd / "cut-marker"
    # Streamed, the JSON stops inside the only required value; not streamed, the API's message
    # carries the input the SDK's partial parse makes of it: nothing.
    call = replies.tool_use_block("run_command", {}, partial_json='{"command": "touch cut-mar')
    case.script(
        replies.message([replies.text_block("Running it."), call], stop_reason="tool_use"),
        replies.text(OK_TEXT),
    )
    response, _ = await case.prompt()
    assert response.get("result", {}).get("stopReason") == "end_turn", response
    record = turn_record(response)
    assert record["toolCallsFailed"] == 1 and record["modelRequests"] == 2, record
    assert not marker.exists(), "the command ran with a cut-short input"
    assert tool_updates(case, call.id)[-1]["status"] == "failed"
    answered = case.attempts[-1].body["messages"][-1]["content"]
    result = next(b for b in answered if b.get("tool_use_id") == call.id)
    assert result.get("is_error") is True and "command" in str(result["content"]), result
    assert_valid_history(case.attempts[-1].body["messages"])
    await assert_agent_goes_on(case)


async def test_a_tool_call_cut_by_max_tokens_is_never_run(case: Case) -> None:
    await bypass_permissions(case)
    marker = case.cwd / "cut-marker"
    whole = {"command": f"touch {marker.name}", "timeout": 5}
    call = replies.tool_use_block(
        "run_command", whole, partial_json=f'{{"command": "touch {marker.name}", "timeout": 5'
    )
    case.script(replies.message([call], stop_reason="max_tokens"))
    response, _ = await case.prompt()
    assert response.get("result", {}).get("stopReason") == "max_tokens", response
    assert len(case.attempts) == 1
    assert not marker.exists(), "a tool_use cut off by max_tokens was run"
    history = await assert_agent_goes_on(case)
    result = next(b for m in history for b in m["content"] if b.get("tool_use_id") == call.id)
    assert result.get("is_error") is True and "cut off" in result["content"], result


@STREAM_ONLY
async def test_a_stream_broken_inside_tool_json_never_runs_the_tool(case: Case) -> None:
    await bypass_permissions(case)
    marker = case.cwd / "cut-marker"
    # 1 message_start, 2-4 the text block, 5 tool block start, 6 the empty input_json_delta,
    # 7-9 the JSON in three pieces: the connection drops after the first piece.
    call = replies.tool_use_block("run_command", {"command": f"touch {marker.name}"})
    case.script(
        replies.message([replies.text_block("Running it."), call], stop_reason="tool_use", drop_after=7)
    )
    response, _ = await case.prompt()
    assert_turn_failed(case, response, attempts=1)
    assert not marker.exists()
    history = await assert_agent_goes_on(case)
    assert {"type": "text", "text": "Running it."} in history[1]["content"]
