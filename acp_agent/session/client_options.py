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
- **allowedTools**: the tools offered to the model (Claude Code's names mapped by the one table,
  `permissions/tool_names.py`).

A malformed value is -32602 naming the field, before anything of the session is made.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NoReturn

import structlog

from acp_agent.errors import RpcError
from acp_agent.permissions.tool_names import CLAUDE_TOOLS, OWN_TOOLS, SERVER_TOOLS, WITH_COMMANDS, own_tool

__all__ = [
    "CLAUDE_TOOLS",
    "MAX_SYSTEM_CHARS",
    "OWN_TOOLS",
    "SERVER_TOOLS",
    "ClientOptions",
    "read_client_options",
]

log = structlog.get_logger(__name__)

MAX_SYSTEM_CHARS = 100_000
"""More appended system text than this is refused (it would be sent with every request)."""
_RULE = re.compile(r"^([A-Za-z0-9_-]+)\((.*)\)$", re.DOTALL)
"""A Claude Code permission rule (`Bash(git *)`): its tool is offered; the pattern is not kept."""


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
        if allowed is None or tool in allowed or (tool in WITH_COMMANDS and "run_command" in allowed):
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
        own = own_tool(name)
        if own is not None:
            offered.add(own)
        else:
            unknown.append(name[:80])
    if unknown:
        log.warning("session.tools_unknown", tools=unknown[:20], known=sorted(OWN_TOOLS | SERVER_TOOLS))
    return frozenset(offered)
