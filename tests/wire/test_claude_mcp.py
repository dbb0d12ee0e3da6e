"""Claude Code's MCP servers on the wire (issue 33 item 5): `.mcp.json`'s wait for the project's
trust (asked before the first request), `~/.claude.json`'s start with the session, the editor's
server wins a name clash, `${VAR}` is expanded, and `/mcp` says where each stands."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.conventions import claude_repo
from tests.wire.conftest import chunks, turn_record
from tests.wire.test_claude_settings import Editor, results, write_settings
from tests.wire.test_conventions import status_text

SERVER = str(Path(__file__).resolve().parents[1] / "support" / "mcp_server.py")


def server(**env: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [SERVER], "env": env}


def claude_files(tmp_path: Path) -> Path:
    """A repository whose `.mcp.json` holds `proj` (env from `${VAR}`s), `demo` (the editor's
    name, with a command that cannot run) and `off` (disabled by the committed settings), and a
    home whose `~/.claude.json` holds the user's `usr`."""
    workspace = claude_repo(tmp_path)
    project = {
        "proj": server(TOKEN="${PROJ_SECRET:-fallback}", UNSET="${NOPE_UNSET}"),
        "demo": {"command": str(tmp_path / "not-a-server")},
        "off": server(),
    }
    write_settings(workspace / ".mcp.json", {"mcpServers": project})
    write_settings(workspace / ".claude" / "settings.json", {"disabledMcpjsonServers": ["off"]})
    write_settings(tmp_path / "home" / ".claude.json", {"mcpServers": {"usr": server()}})
    return workspace


async def command_text(agent: AgentProcess, session: str, command: str) -> str:
    before = len(chunks(agent, session))
    response = await agent.prompt(session, command)
    assert turn_record(response)["modelRequests"] == 0
    return "".join(c["content"]["text"] for c in chunks(agent, session)[before:])


async def test_project_servers_wait_for_trust_and_the_editors_server_wins_a_clash(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_files(tmp_path)
    editor_server = {"name": "demo", "command": sys.executable, "args": [SERVER], "env": []}
    runs = []
    for trust in ("distrust_once", "trust_once"):
        editor = Editor(trust, "allow_once")
        if trust == "trust_once":
            call = replies.tool_use("mcp__proj__env_get", {"name": "TOKEN"}, id="toolu_env")
            fake_api.script(call, replies.text("done"))
        else:
            fake_api.script(replies.text("untrusted"))
        first = len(fake_api.requests)

        async def watch(method: str, params: Any, editor: Editor = editor, first: int = first) -> Any:
            if params["toolCall"]["toolCallId"].startswith("trust_"):  # before any request
                assert len(fake_api.requests) == first
            return await editor(method, params)

        async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=watch) as agent:
            await agent.initialize()
            session = await agent.new_session(workspace, mcp_servers=[editor_server])
            before = await command_text(agent, session, "/mcp")
            await agent.prompt(session, "go", timeout=90)
            after = await command_text(agent, session, "/mcp")
            status = await status_text(agent, session)
        offered = {t["name"] for t in fake_api.requests[first].body["tools"]}
        runs.append((editor, before, after, status, offered, fake_api.requests[first:]))

    # Not trusted: the editor's and the user's servers are offered, the project's are not.
    editor, before, after, status, offered, _ = runs[0]
    trust = editor.asked[0]["toolCall"]["rawInput"]["enables"]
    [proj] = [line for line in trust if line.startswith("MCP server: proj: ")]
    assert proj.splitlines()[0] == f"MCP server: proj: runs {sys.executable} {SERVER} (.mcp.json)"
    assert not any("demo" in line or "off" in line for line in trust)  # replaced, disabled: never asked
    assert {"mcp__demo__echo", "mcp__usr__echo"} <= offered
    assert not any(name.startswith(("mcp__proj__", "mcp__off__")) for name in offered)
    # The /mcp that came first built the session's runner: trust was asked then.
    assert "- proj (project: .mcp.json): not started: the project is not trusted" in before
    assert "- demo (editor): connected, " in before
    assert "- demo (project: .mcp.json): not started: the editor's server of that name is used" in before
    assert "- off (project: .mcp.json): disabled: disabledMcpjsonServers in .claude/settings.json" in before
    assert "- usr (user: ~/.claude.json): connected, " in before
    assert "${NOPE_UNSET} is not set (kept as written)" in before
    assert "MCP servers: " in status and "NOPE_UNSET" in status

    # Trusted: the project's server starts before the first request; its env was expanded.
    editor, before, after, status, offered, requests = runs[1]
    assert [q["toolCall"]["toolCallId"][:6] for q in editor.asked] == ["trust_", "toolu_"]
    assert {"mcp__demo__echo", "mcp__usr__echo", "mcp__proj__echo"} <= offered
    assert not any(name.startswith("mcp__off__") for name in offered)
    assert [r.body["tools"] for r in requests] == [requests[0].body["tools"]] * len(requests)
    assert results(requests[-1])["toolu_env"] == "fallback"
    assert "- proj (project: .mcp.json): connected, " in after


@pytest.mark.model_free
async def test_bad_mcp_files_and_servers_are_named_and_the_session_goes_on(
    agent: AgentProcess, tmp_path: Path
) -> None:
    workspace = claude_repo(tmp_path)
    (workspace / ".mcp.json").write_text('{"mcpServers": {"broken": ', encoding="utf-8")
    home_file = tmp_path / "home" / ".claude.json"
    user_servers = {
        "remote": {"type": "ws", "url": "wss://example.invalid/socket"},
        "nocommand": {"args": ["x"]},
        "gone": {"command": str(tmp_path / "missing-server")},
    }
    home_file.write_text(json.dumps({"mcpServers": user_servers}), encoding="utf-8")
    answer = await agent.request("session/new", {"cwd": str(workspace), "mcpServers": []}, timeout=60)
    session = answer["result"]["sessionId"]
    failures = answer["result"]["_meta"]["acp-agent"]["mcpFailures"]
    assert [f.split(":")[0] for f in failures] == ["gone"]
    listing = await command_text(agent, session, "/mcp")
    assert ".mcp.json: skipped (not valid JSON" in listing
    assert "- remote (user: ~/.claude.json): failed: invalid server: unknown transport type 'ws'" in listing
    assert "- nocommand (user: ~/.claude.json): failed: invalid server: command must be a string" in listing
    assert "- gone (user: ~/.claude.json): failed: command not found" in listing
    assert ".mcp.json: skipped (not valid JSON" in await status_text(agent, session)
