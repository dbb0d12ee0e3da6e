"""The API key leaves the agent's environment at start-up: no command can read it through
/proc/$PPID/environ, and the model client still sends it (issue 19, item 8). A key the editor
gives through `authenticate` is sent to the API and shown nowhere else (issue 24)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess, base_env
from tests.support.client import allow
from tests.support.zed import Editor, zed_initialize

MARKER = "sk-ant-marker-4f1c9e2d7b"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")


async def test_the_key_is_gone_from_proc_environ_and_still_reaches_the_api(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    # Unsandboxed: a sandboxed command sees no agent process at all (tests/wire/test_sandbox.py).
    env = {**agent_env, "ANTHROPIC_API_KEY": MARKER, "ACP_AGENT_SANDBOX": "off"}
    fake_api.script(
        replies.tool_use(
            "run_command", {"command": "cat /proc/$PPID/environ | tr '\\0' '\\n'; echo; env"}, id="toolu_env"
        ),
        replies.text("nothing to see"),
    )
    async with AgentProcess.start(env=env, schema=acp_schema, on_request=allow) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        try:
            with open(f"/proc/{agent.pid}/environ", "rb") as f:
                environ: bytes | None = f.read()
        except PermissionError:  # not root: the agent is non-dumpable, closed to us as to any command
            environ = None
        response = await agent.prompt(session, "show me your environment")
        shown = [p["update"] for p in agent.updates(session)]
    assert response["result"]["stopReason"] == "end_turn", response
    if environ is not None:
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


@pytest.mark.parametrize("given_by", ["meta", "form"])
async def test_a_key_given_by_the_editor_reaches_the_api_and_nothing_else(
    tmp_path: Path, acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, given_by: str
) -> None:
    """`authenticate` with `_meta["api-key"]`, or the form's answer: the key is in no stdout line,
    no stderr line (at debug level), no journal file, and not in what a command can read."""
    state = tmp_path / "state"
    env = base_env(
        tmp_path,
        ANTHROPIC_BASE_URL=str(fake_api.base_url),
        ACP_AGENT_MODEL="claude-test-1",
        ACP_AGENT_STATE_DIR=str(state),
        ACP_AGENT_LOG_LEVEL="debug",
    )
    editor = Editor({"action": "accept", "content": {"apiKey": MARKER}})
    fake_api.script(
        replies.tool_use("run_command", {"command": "cat /proc/$PPID/environ; env"}, id="toolu_env"),
        replies.text("nothing to see"),
    )
    params: dict[str, Any] = {"methodId": "anthropic-api-key"}
    if given_by == "meta":
        params["_meta"] = {"api-key": {"apiKey": MARKER}}
    async with AgentProcess.start(env=env, schema=acp_schema, on_request=editor) as agent:
        await zed_initialize(agent, terminal=False)  # the command runs here, where it can look
        assert (await agent.request("authenticate", params))["result"] == {}
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "show me your environment")
    assert response["result"]["stopReason"] == "end_turn", response
    assert editor.forms if given_by == "form" else not editor.forms
    sent = fake_api.requests[0].headers
    assert MARKER in sent.get("x-api-key", "") + sent.get("authorization", "")
    assert MARKER not in json.dumps(agent.messages)
    assert MARKER not in agent.stderr_text() and "auth.key_stored" in agent.stderr_text()
    journals = [p for p in state.rglob("*") if p.is_file()]
    assert journals and all(MARKER.encode() not in p.read_bytes() for p in journals)
    results = [b for m in fake_api.requests[-1].body["messages"] for b in m["content"] if "tool_use_id" in b]
    assert "ANTHROPIC_BASE_URL=" in json.dumps(results) and MARKER not in json.dumps(results)
