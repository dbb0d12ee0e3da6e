"""What a client asks of a session beyond ACP's stable fields, read on session/new, load and resume.

acpx passes its `--system-prompt`, `--max-turns` and `--allowed-tools` the way claude-agent-acp
reads them, in `_meta`: `systemPrompt` (a string, or `{append}` / `{type: "preset", append}`) and
`claudeCode.options.maxTurns` / `.allowedTools`. ACP's unstable `systemPrompt` (`{mode, content}`)
says the same in the protocol's own words. Here they mean:

- **system text**: appended after the agent's own instructions, never in their place. Those carry
  the workspace, the tools, the limits the turn runs under and the rules for asking first, which
  the governed loop relies on; so a string `_meta.systemPrompt` (a replacement for
  claude-agent-acp) is appended too, and ACP's `override` mode is refused.
- **maxTurns**: the turn's request budget (`maxTurnRequests`; `_meta["acp-agent"]` wins).
- **allowedTools**: the tools offered to the model (`CLAUDE_TOOLS` maps Claude Code's names).

A malformed value is -32602 naming the field, before anything of the session is made.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NoReturn

import structlog

from acp_agent.errors import RpcError

__all__ = [
    "CLAUDE_TOOLS",
    "MAX_SYSTEM_CHARS",
    "OWN_TOOLS",
    "SERVER_TOOLS",
    "ClientOptions",
    "own_tool_name",
    "read_client_options",
]

log = structlog.get_logger(__name__)

OWN_TOOLS = frozenset(
    {
        "read_file",
        "list_files",
        "search_text",
        "write_file",
        "edit_file",
        "run_command",
        "command_output",
        "stop_command",
        "update_plan",
        "ask_user",
        "skill",
        "task",
    }
)
"""This agent's built-in tools (a unit test keeps the set equal to the registry's, `ask_user`,
which is offered when the client has elicitation forms, `skill`, offered when the session has
Agent Skills, and `task`, the subagents, unless `--subagent-tools off`)."""
SERVER_TOOLS = frozenset({"web_search", "web_fetch"})
"""The API's web tools the agent offers (`model/server_tools.py`): a client's tool set names them too."""
CLAUDE_TOOLS: dict[str, str] = {
    "Read": "read_file",
    "Write": "write_file",
    "Edit": "edit_file",
    "MultiEdit": "edit_file",
    "Bash": "run_command",
    "BashOutput": "command_output",
    "KillShell": "stop_command",
    "KillBash": "stop_command",
    "Grep": "search_text",
    "Glob": "list_files",
    "LS": "list_files",
    "TodoWrite": "update_plan",
    "AskUserQuestion": "ask_user",
    "Skill": "skill",
    "WebSearch": "web_search",
    "WebFetch": "web_fetch",
    "Task": "task",
}
"""Claude Code's tool names (any case) → this agent's tool that does the same."""
_CLAUDE_BY_CASE = {name.lower(): own for name, own in CLAUDE_TOOLS.items()}
_MCP_NAME = re.compile(r"mcp__[A-Za-z0-9_-]+(?:__\*)?")
_WITH_COMMANDS = frozenset({"command_output", "stop_command"})
"""Offered with run_command: a tool set that lets the model start a background command lets it
read and stop what it started."""

MAX_SYSTEM_CHARS = 100_000
"""More appended system text than this is refused (it would be sent with every request)."""
_RULE = re.compile(r"^([A-Za-z0-9_-]+)\((.*)\)$", re.DOTALL)
"""A Claude Code permission rule (`Bash(git *)`): its tool is offered; the pattern is not kept."""


def own_tool_name(name: str) -> str | None:
    """The tool here that a tool name means: this agent's own names, the web tools' and MCP names
    (`mcp__server__tool`, `mcp__server`, `mcp__server__*`) as they are, and Claude Code's names
    (`CLAUDE_TOOLS`, any case); None for a name with no counterpart here."""
    if name in OWN_TOOLS or name in SERVER_TOOLS or _MCP_NAME.fullmatch(name):
        return name
    return _CLAUDE_BY_CASE.get(name.lower())


@dataclass(frozen=True, slots=True)
class ClientOptions:
    """A session's client-given system text, request budget and tool set."""

    system_append: str = ""
    max_turns: int | None = None
    allowed_tools: frozenset[str] | None = None
    """None: every tool. Else this agent's tool names and MCP names (`mcp__server__tool`, or
    `mcp__server` for all of a server's tools)."""

    def offers(self, tool: str) -> bool:
        """Whether the model is offered `tool`."""
        allowed = self.allowed_tools
        if allowed is None or tool in allowed or (tool in _WITH_COMMANDS and "run_command" in allowed):
            return True
        server = "__".join(tool.split("__")[:2]) if tool.startswith("mcp__") else None
        return server is not None and (server in allowed or f"{server}__*" in allowed)


def read_client_options(meta: Any, system_prompt: Any = None) -> ClientOptions:
    """The options in a request's `_meta` and its (unstable) `systemPrompt` field.

    Raises:
        RpcError: -32602 naming the malformed field.
    """
    meta = meta if isinstance(meta, dict) else {}
    texts = [_meta_system_prompt(meta.get("systemPrompt")), _acp_system_prompt(system_prompt)]
    appended = "\n\n".join(t for t in texts if t)
    if len(appended) > MAX_SYSTEM_CHARS:
        field = "_meta.systemPrompt" if texts[0] else "systemPrompt.content"
        _refuse(field, f"too long ({len(appended):,} characters; at most {MAX_SYSTEM_CHARS:,})")
    claude = meta.get("claudeCode")
    if claude is None:
        return ClientOptions(appended)
    if not isinstance(claude, dict):
        _refuse("_meta.claudeCode", "must be an object")
    options = claude.get("options")
    if options is None:
        return ClientOptions(appended)
    if not isinstance(options, dict):
        _refuse("_meta.claudeCode.options", "must be an object")
    return ClientOptions(appended, _max_turns(options.get("maxTurns")), _tools(options.get("allowedTools")))


def _refuse(field: str, problem: str) -> NoReturn:
    raise RpcError.invalid_params(f"Invalid params: {field}: {problem}", {"field": field})


def _meta_system_prompt(value: Any) -> str:
    """`_meta.systemPrompt`: a string, or an object whose `append` is the text."""
    if value is None or isinstance(value, str):
        return value or ""
    if not isinstance(value, dict):
        _refuse("_meta.systemPrompt", "must be a string or an object with an 'append' string")
    append = value.get("append")
    if append is not None and not isinstance(append, str):
        _refuse("_meta.systemPrompt.append", "must be a string")
    return append or ""


def _acp_system_prompt(value: Any) -> str:
    """ACP's `systemPrompt` (`{mode, content}`): `append` with text blocks; `override` refused."""
    if value is None:
        return ""
    if not isinstance(value, dict):
        _refuse("systemPrompt", "must be an object with 'mode' and 'content'")
    mode = value.get("mode")
    if mode == "override":
        _refuse(
            "systemPrompt.mode",
            "override is not supported: the agent's own instructions (the workspace, its tools, "
            "the limits and the rules for asking first) always stay; use append",
        )
    if mode != "append":
        _refuse("systemPrompt.mode", f"{mode!r} is not supported (append is)")
    content = value.get("content")
    if not isinstance(content, list) or not content:
        _refuse("systemPrompt.content", "must be a non-empty array of text blocks")
    texts = []
    for i, block in enumerate(content):
        text = block.get("text") if isinstance(block, dict) and block.get("type") == "text" else None
        if not isinstance(text, str):
            _refuse(f"systemPrompt.content[{i}]", "only text blocks are supported")
        texts.append(text)
    return "\n\n".join(texts)


def _max_turns(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        _refuse("_meta.claudeCode.options.maxTurns", "must be an integer of at least 1")
    return int(value)


def _tools(value: Any) -> frozenset[str] | None:
    """`allowedTools` as this agent's names; names with no counterpart here are logged and left out."""
    if value is None:
        return None
    if not isinstance(value, list):
        _refuse("_meta.claudeCode.options.allowedTools", "must be an array of tool names")
    offered: set[str] = set()
    unknown: list[str] = []
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            _refuse(f"_meta.claudeCode.options.allowedTools[{i}]", "must be a non-empty string")
        name = item.strip()
        rule = _RULE.match(name)
        name = rule.group(1) if rule else name
        own = own_tool_name(name)
        if own is not None:
            offered.add(own)
        else:
            unknown.append(name[:80])
    if unknown:
        log.warning("session.tools_unknown", tools=unknown[:20], known=sorted(OWN_TOOLS | SERVER_TOOLS))
    return frozenset(offered)
