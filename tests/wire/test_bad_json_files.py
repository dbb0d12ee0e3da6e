"""Deep or wrong-typed JSON never stops a session or a turn (issue 41 item 10): nested past what
`json` recurses, or a directory where a file should be, each JSON file the agent reads from a
project or HOME is skipped with a warning naming it, and the session opens and answers as without
it; a hook that prints such JSON gets a warning naming it, and the turn goes on."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.conventions import claude_repo
from tests.wire.conftest import turn_record
from tests.wire.test_claude_settings import write_settings
from tests.wire.test_conventions import status_text

DEEP = "[" * 50_000 + "]" * 50_000
"""Valid JSON that `json` cannot parse (RecursionError past about 1,000 levels)."""
HALF_DEEP = '{"permissions": {"allow": ' + "[" * 600 + "]" * 600 + "}}"
"""Valid JSON that `json` parses, too deep for what recurses over it later (a deepcopy fails at 500)."""
WHY = {
    "deep": "nested deeper than 100 levels",
    "half deep": "nested deeper than 100 levels",
    "directory": "regular file",
}


def json_files(workspace: Path, home: Path) -> dict[str, Path]:
    """The JSON files a session reads as it opens, by the name its warning shows them."""
    return {
        ".claude/settings.json": workspace / ".claude" / "settings.json",
        ".claude/settings.local.json": workspace / ".claude" / "settings.local.json",
        ".mcp.json": workspace / ".mcp.json",
        "~/.claude.json": home / ".claude.json",
        "~/.config/acp-agent/settings.json": home / ".config" / "acp-agent" / "settings.json",
        f"{home / '.claude' / 'plugins' / 'installed_plugins.json'}": (
            home / ".claude" / "plugins" / "installed_plugins.json"
        ),
    }


def spoil(path: Path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    if kind == "directory":
        path.mkdir()
    else:
        path.write_text(DEEP if kind == "deep" else HALF_DEEP)


@pytest.mark.model_free
@pytest.mark.parametrize("kind", ["deep", "half deep", "directory"])
async def test_a_deep_or_wrong_typed_json_file_is_a_warning_and_the_session_opens(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, kind: str
) -> None:
    workspace = claude_repo(tmp_path)
    home = Path(agent_env["HOME"])
    files = json_files(workspace, home)
    for path in files.values():
        spoil(path, kind)
    # The user's own settings enable a plugin, so that its index is read.
    write_settings(home / ".claude" / "settings.json", {"enabledPlugins": {"fmt@team": True}})
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        opened = await agent.request("session/new", {"cwd": str(workspace), "mcpServers": []}, timeout=30)
        assert "result" in opened, opened
        session = opened["result"]["sessionId"]
        status = await status_text(agent, session)
    for shown in files:
        warned = [line for line in status.splitlines() if f"warning: {shown}: " in line]
        assert len(warned) == 1 and WHY[kind] in warned[0], (shown, status)


@pytest.mark.model_free
@pytest.mark.parametrize("kind", ["deep", "half deep", "directory"])
async def test_a_deep_or_wrong_typed_trust_store_is_read_as_empty(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, kind: str
) -> None:
    """The trust answers (the state dir's `trust.json`), read when a project's settings need the
    folder's trust: none is found, so the question is asked."""
    workspace = claude_repo(tmp_path)
    write_settings(workspace / ".claude" / "settings.json", {"permissions": {"allow": ["Bash(make *)"]}})
    spoil(Path(agent_env["ACP_AGENT_STATE_DIR"]) / "trust.json", kind)
    asked: list[str] = []

    async def editor(method: str, params: Any) -> Any:
        asked.append(method)
        return {"outcome": {"outcome": "cancelled"}}

    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "/status")
    assert turn_record(response)["stopReason"] == "end_turn"
    assert asked == ["session/request_permission"]  # the question, as for a folder never answered


def printing(text: str) -> dict[str, Any]:
    """A command hook that prints `text`."""
    code = f"import sys; sys.stdout.write({text!r})"
    return {"type": "command", "command": f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"}


async def test_a_hook_printing_deep_json_is_a_warning_naming_it_and_the_turn_goes_on(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    deep = '{"hookSpecificOutput": ' + DEEP + "}"
    half = '{"hookSpecificOutput": {"additionalContext": ' + "[" * 600 + "]" * 600 + "}}"
    hooks = {
        "UserPromptSubmit": [{"hooks": [printing(half)]}],
        "PreToolUse": [{"matcher": "Read", "hooks": [printing(deep)]}],
    }
    write_settings(Path(agent_env["HOME"]) / ".claude" / "settings.json", {"hooks": hooks})
    fake_api.script(replies.tool_use("read_file", {"path": "README.md"}), replies.text("read it"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        record = turn_record(await agent.prompt(session, "read the readme"))
        status = await status_text(agent, session)
    assert record["stopReason"] == "end_turn" and record["hooks"]["runs"] == 2, record
    assert "README TEXT for tests." in str(fake_api.requests[-1].body["messages"][-1])
    assert status.count("printed invalid JSON (nested deeper than 100 levels)") == 2, status
