"""The project trust question on the wire (issue 41, items 7 and 9): it shows exactly what trusting
would enable, whole, and `session/cancel` while it waits ends it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.testing import FakeMessagesAPI
from tests.support.agent import AgentProcess, RpcError
from tests.support.conventions import claude_repo
from tests.wire.conftest import turn_record
from tests.wire.test_claude_settings import write_settings
from tests.wire.test_conventions import status_text


class HeldQuestion:
    """An editor that holds its first question until the test lets it answer (`late`), and
    answers the others with `then` at once."""

    def __init__(self, late: str, then: str) -> None:
        self.late, self.then = late, then
        self.asked = anyio.Event()
        self.release = anyio.Event()
        self.questions: list[dict[str, Any]] = []

    async def __call__(self, method: str, params: Any) -> Any:
        if method != "session/request_permission":
            return RpcError(-32601, method)
        self.questions.append(params)
        if len(self.questions) > 1:
            return {"outcome": {"outcome": "selected", "optionId": self.then}}
        self.asked.set()
        await self.release.wait()
        return {"outcome": {"outcome": "selected", "optionId": self.late}}


@pytest.mark.model_free
async def test_session_cancel_during_the_trust_question_ends_it_and_a_late_answer_is_not_taken(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    write_settings(workspace / ".claude" / "settings.json", {"permissions": {"allow": ["Bash(make *)"]}})
    editor = HeldQuestion("trust_always", then="distrust_once")
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        prompt_id = await agent.send_request(
            "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}
        )
        with anyio.fail_after(30):
            await editor.asked.wait()
        question = next(m for m in agent.messages if m.get("method") == "session/request_permission")
        await agent.notify("session/cancel", {"sessionId": session})
        response = await agent.response(prompt_id, timeout=5)
        abandoned = await agent.wait_for(lambda m: m["method"] == "$/cancel_request", timeout=5)
        editor.release.set()  # the late answer: "trust, remembered"
        await agent.round_trip()
        status = await status_text(agent, session)
    assert response["result"]["stopReason"] == "cancelled"
    record = turn_record(response)
    assert record["modelRequests"] == 0 and fake_api.requests == []
    assert abandoned["params"] == {"requestId": question["id"]}
    # The late "trust, remembered" was dropped: /status asked again, and "Not now" holds.
    assert len(editor.questions) == 2 and "trusted (remembered)" not in status
    assert "left off: allow rule: Bash(make *)" in status
