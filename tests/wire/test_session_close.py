"""A prompt sent together with session/close or session/delete (issue 29 item 6): it never runs on
a closed session, whose journal would drop what it wrote. Queued before the close, it answers
`cancelled`; arriving after, it is refused with -32002. Nothing it did is lost from the journal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.errors import RESOURCE_NOT_FOUND
from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.waits import wait_until


def request_line(id_: int, method: str, params: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}) + "\n"


async def send_together(agent: AgentProcess, *lines: tuple[int, str, dict[str, Any]]) -> None:
    """Several requests in one write: the agent reads them in one go."""
    for id_, _, _ in lines:
        agent._inbox.expect(id_)
    await agent.send_raw("".join(request_line(*line) for line in lines))


def journal_kinds(agent_env: dict[str, str], session: str) -> list[str]:
    path = Path(agent_env["ACP_AGENT_STATE_DIR"]) / f"{session}.jsonl"
    return [json.loads(line)["type"] for line in path.read_text().splitlines()]


@pytest.mark.parametrize("method", ["session/close", "session/delete"])
async def test_a_prompt_sent_with_the_close_of_a_busy_session_never_runs(
    agent: AgentProcess,
    session: str,
    fake_api: FakeMessagesAPI,
    agent_env: dict[str, str],
    method: str,
) -> None:
    """The close cancels the running turn and waits for it; the prompt that came with it used to
    queue behind that turn and run once the close was answered, on a closed journal."""
    fake_api.script(replies.stall(), replies.text("must never be asked"))
    async with anyio.create_task_group() as tg:
        running: dict[str, Any] = {}

        async def first() -> None:
            running["answer"] = await agent.prompt(session, "a long one")

        tg.start_soon(first)
        await wait_until(lambda: fake_api.attempts >= 1, "the request at the model")
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "and this"}]}
        await send_together(agent, (100, method, {"sessionId": session}), (101, "session/prompt", prompt))
        closed, late = await agent.response(100), await agent.response(101)
    assert closed["result"] == {}
    assert running["answer"]["result"]["stopReason"] == "cancelled"
    assert late["error"]["code"] == RESOURCE_NOT_FOUND, late
    assert "closed" in late["error"]["message"]
    assert fake_api.attempts == 1  # the late prompt never reached the model
    if method == "session/close":  # the cancelled turn's record is kept; nothing after it
        kinds = journal_kinds(agent_env, session)
        assert kinds == ["meta", "prompt", "turn"], kinds
    else:
        assert not (Path(agent_env["ACP_AGENT_STATE_DIR"]) / f"{session}.jsonl").exists()
    assert "journal.turn_record_lost" not in agent.stderr_text()


@pytest.mark.parametrize("streaming", [True], ids=["stream"])  # whether its request leaves is a race
@pytest.mark.parametrize("method", ["session/close", "session/delete"])
async def test_a_prompt_queued_before_the_close_answers_cancelled(
    agent: AgentProcess,
    session: str,
    fake_api: FakeMessagesAPI,
    agent_env: dict[str, str],
    method: str,
) -> None:
    """Prompt then close, in one write, on an idle session: the prompt is answered `cancelled`
    and whatever it journaled (its prompt and its turn record) is kept until the close."""
    fake_api.set_fallback(replies.stall())
    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]}
    await send_together(agent, (100, "session/prompt", prompt), (101, method, {"sessionId": session}))
    answer, closed = await agent.response(100), await agent.response(101)
    assert answer["result"]["stopReason"] == "cancelled", answer
    assert closed["result"] == {}
    after = await agent.prompt(session, "still there?")
    assert "error" in after  # closed: a later prompt is refused
    if method == "session/close":
        kinds = journal_kinds(agent_env, session)
        assert kinds[-1] == "turn" and kinds.count("turn") == 1, kinds
    log = agent.stderr_text()
    assert "journal.turn_record_lost" not in log and "Traceback" not in log
