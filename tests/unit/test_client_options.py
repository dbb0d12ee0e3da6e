"""The client's options (acpx's `_meta`): the tool names they map to, and which tools they offer."""

from __future__ import annotations

from acp_agent.session.client_options import CLAUDE_TOOLS, OWN_TOOLS, SERVER_TOOLS, read_client_options
from acp_agent.tools.ask_user import AskUser
from acp_agent.tools.registry import coding_tools
from acp_agent.tools.skill import SkillTool
from acp_agent.turn.subagents.task import TaskTool


def test_own_tools_are_the_registrys_and_every_claude_name_maps_to_one() -> None:
    offered_by_session = {AskUser.name, SkillTool.name, TaskTool.name}
    assert {tool.name for tool in coding_tools()} | offered_by_session == OWN_TOOLS
    assert set(CLAUDE_TOOLS.values()) <= OWN_TOOLS | SERVER_TOOLS


def offered(*names: str) -> set[str]:
    options = read_client_options({"claudeCode": {"options": {"allowedTools": list(names)}}})
    candidates = [*OWN_TOOLS, "mcp__docs__search", "mcp__docs__fetch", "mcp__git__log"]
    return {name for name in candidates if options.offers(name)}


def test_claude_names_rules_and_mcp_names_map_to_what_is_offered() -> None:
    assert offered("Read", "LS", "glob", "MultiEdit") == {"read_file", "list_files", "edit_file"}
    commands = {"run_command", "command_output", "stop_command"}  # what it starts, it reads and stops
    assert offered("Bash(git status:*)", "TodoWrite") == commands | {"update_plan"}
    assert offered("BashOutput", "KillShell") == {"command_output", "stop_command"}
    assert offered("mcp__docs__search") == {"mcp__docs__search"}
    assert offered("mcp__docs") == offered("mcp__docs__*") == {"mcp__docs__search", "mcp__docs__fetch"}
    assert offered("WebFetch") == set()
    assert offered("Task") == offered("Agent") == {"task"}  # Claude Code's subagent tool (renamed Agent)
    assert read_client_options({}).offers("anything")  # no allowedTools: every tool
