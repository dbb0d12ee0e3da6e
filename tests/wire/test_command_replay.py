"""A command file's `!` lines are journaled as tool calls of their own: session/load shows them as
the live turn did, and a loaded session's next request is the live session's, byte for byte."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.client import allow
from tests.support.conventions import claude_repo

REPORT = "Report on the repository.\nGreeting: !`echo SHELL-OUTPUT-$((6*7))`\nRefused: !`false`\n"


def shell_calls(updates: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The `!` lines' calls (ids `toolu_cmd_…`): each one's first and last update."""
    seen: dict[str, list[dict[str, Any]]] = {}
    for update in (u["update"] for u in updates):
        call_id = update.get("toolCallId", "")
        if call_id.startswith("toolu_cmd_"):
            seen.setdefault(call_id, []).append(update)
    return {call_id: [shown[0], shown[-1]] for call_id, shown in seen.items()}


async def test_shell_lines_are_replayed_as_shown_and_the_next_request_is_the_same_bytes(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    (workspace / ".claude" / "commands" / "report.md").write_text(REPORT)
    fake_api.script(replies.text("reported"), replies.text("fine"), replies.text("fine"))
    state, copy = Path(agent_env["ACP_AGENT_STATE_DIR"]), tmp_path / "state-after-report"
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=allow) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        assert (await agent.prompt(session, "/report"))["result"]["stopReason"] == "end_turn"
        live = shell_calls(agent.updates(session))
        shutil.copytree(state, copy)  # the journal as it stood after the command's turn
        await agent.prompt(session, "next")
    assert len(live) == 2
    assert [shown[-1]["status"] for shown in live.values()] == ["completed", "completed"]
    journal = [json.loads(line) for line in (copy / f"{session}.jsonl").read_text().splitlines()]
    assert [e["type"] for e in journal if e["type"] in ("shown_call", "tool_result")] == ["shown_call"] * 2
    async with AgentProcess.start(
        env={**agent_env, "ACP_AGENT_STATE_DIR": str(copy)}, schema=acp_schema, on_request=allow
    ) as agent:
        await agent.initialize()
        params = {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
        assert "result" in await agent.request("session/load", params, timeout=30)
        replayed = shell_calls(agent.updates(session))
        await agent.prompt(session, "next")
    assert replayed == live  # announced and finished as the live turn showed them
    shown = [u["update"]["sessionUpdate"] for u in agent.updates(session)]
    kinds = [kind for kind in shown if kind != "available_commands_update"]
    assert kinds[:6] == ["user_message_chunk", *["tool_call", "tool_call_update"] * 2, "agent_message_chunk"]
    # `diagnostics` names the process's previous response (a new process has none): all else is equal.
    live_next, loaded_next = (dict(fake_api.requests[n].body) for n in (1, 2))
    assert live_next.pop("diagnostics", None) != loaded_next.pop("diagnostics", None)
    assert json.dumps(loaded_next, sort_keys=True) == json.dumps(live_next, sort_keys=True)
    assert "SHELL-OUTPUT-42" in json.dumps(live_next["messages"][0])
