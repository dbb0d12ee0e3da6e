"""What a write to one of the agent's own governing files would enable, for its permission question.

A file tool's write to `.claude/settings*.json`, `.claude/hooks/`, `.mcp.json` or a memory file's
`@imports` is asked in every mode (`tools/files/sensitive.py:governance_reason`, the rule
engine's "governance" step), and the question names what the new content would enable, read as
the agent would read it: the trust items of a settings file or of `.mcp.json` (`widenings.py`,
`mcp_files.server_item`), whose effect waits for the project's trust question in the next
session (a file the agent writes is never the user's own: `local_owner.py`); the script a hook
runs; the imports a memory file would read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath

from acp_agent.claude_code.settings.settings_files import SettingsFile, checked_settings, shown_path
from acp_agent.claude_code.setup.mcp_files import server_item
from acp_agent.claude_code.setup.setup import ClaudeSetup
from acp_agent.claude_code.setup.widenings import file_widenings, shown
from acp_agent.permissions.rules import BEHAVIORS, RuleOrigin, read_rule

__all__ = ["what_it_enables"]

_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:\\ |\S)+)")
MAX_LISTED = 50


def what_it_enables(path: Path, old_text: str | None, new_text: str, setup: ClaudeSetup) -> str:
    """The lines the permission question adds for a write of `new_text` to `path` (resolved)."""
    parts = [p.casefold() for p in PurePosixPath(path.as_posix()).parts]
    name = parts[-1] if parts else ""
    where = shown_path(path, setup.root, None)
    if name in ("settings.json", "settings.local.json") and parts[-2:-1] == [".claude"]:
        lines = _settings(path, where, new_text, setup)
        head = f"{where} decides what the agent may run. Written, it would enable"
    elif name == ".mcp.json":
        lines = _servers(where, new_text, setup)
        head = f"{where} names the MCP servers the agent starts. Written, it would enable"
    elif ".claude" in parts and "hooks" in parts:
        return (
            f"{where} is in .claude/hooks: every hook whose command names it would run the new content "
            "(a hook the project's trust covers asks for that trust again at the next session)."
        )
    else:
        imports = _imports(new_text) - _imports(old_text or "")
        lines = [f"import @{i}" for i in sorted(imports)]
        head = f"{where} is read into the system prompt. Written, it would add"
    if not lines:
        return f"{head}: nothing that needs trust (it only restricts, or names nothing new)."
    more = f"\n- … and {len(lines) - MAX_LISTED} more" if len(lines) > MAX_LISTED else ""
    listed = "\n".join(f"- {line}" for line in lines[:MAX_LISTED])
    return (
        f"{head} (from the next session, once you trust the project: it is not read as yours):\n"
        f"{listed}{more}"
    )


def _settings(path: Path, where: str, text: str, setup: ClaudeSetup) -> list[str]:
    warnings: list[str] = []
    data = checked_settings(text.encode("utf-8", "surrogatepass"), where, warnings.append)
    if data is None:
        return [f"nothing: {w}" for w in warnings]
    file = SettingsFile("project", path, where, setup.cwd, data, True)
    origin = RuleOrigin(where, setup.cwd, True, path)
    rules = []
    for behavior in BEHAVIORS:
        for rule_text in file.get("permissions", behavior) or ():
            rule, _ = read_rule(rule_text, behavior, origin, cwd=setup.cwd, home=None)
            if rule is not None:
                rules.append(rule)
    return [item.whole() for item in file_widenings(file, rules, setup.cwd, setup.root)]


def _servers(where: str, text: str, setup: ClaudeSetup) -> list[str]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        return [f"nothing: not valid JSON ({str(exc)[:100]})"]
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return []
    return [
        server_item(str(name), where, entry, setup).whole() if isinstance(entry, dict) else shown(str(name))
        for name, entry in servers.items()
    ]


def _imports(text: str) -> set[str]:
    return {m.group(1) for m in _IMPORT.finditer(text)}
