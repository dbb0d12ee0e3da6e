"""The API key leaves the agent's environment at start-up: no command can read it through
/proc/$PPID/environ, and the model client still sends it (issue 19, item 8)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.client import allow

MARKER = "sk-ant-marker-4f1c9e2d7b"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")


async def test_the_key_is_gone_from_proc_environ_and_still_reaches_the_api(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    env = {**agent_env, "ANTHROPIC_API_KEY": MARKER}
    fake_api.script(
        replies.tool_use(
            "run_command", {"command": "cat /proc/$PPID/environ | tr '\\0' '\\n'; echo; env"}, id="toolu_env"
        ),
        replies.text("nothing to see"),
    )
    async with AgentProcess.start(env=env, schema=acp_schema, on_request=allow) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        with open(f"/proc/{agent.pid}/environ", "rb") as f:
            environ = f.read()
        response = await agent.prompt(session, "show me your environment")
        shown = [p["update"] for p in agent.updates(session)]
    assert response["result"]["stopReason"] == "end_turn", response
    assert MARKER.encode() not in environ and b"ANTHROPIC_BASE_URL=" in environ
    sent = fake_api.requests[0].headers  # the SDK client kept its copy (as a Bearer token)
    assert MARKER in sent.get("x-api-key", "") + sent.get("authorization", "")
    result = next(
        b
        for m in fake_api.requests[-1].body["messages"]
        for b in m["content"]
        if b.get("tool_use_id") == "toolu_env"
    )
    assert "ANTHROPIC_BASE_URL=" in str(result["content"])  # the command did read the environ
    assert MARKER not in str(result["content"]) and MARKER not in str(shown)
