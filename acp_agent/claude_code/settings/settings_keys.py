"""Every settings key the agent reads, and whether a project's file may set it before trust.

A repository's settings file (`.claude/settings.json`, or a local file that is not the user's:
`settings_files.py`) is not the user's word. What it would let run waits for the user's trust
(`trust.py`); what only restricts applies at once. The one table below says which is which, key by
key, and `SettingsFile.get` reads no key that is not in it: a key read later without a
classification fails at its first read (and `tests/unit/test_settings_keys.py` checks each
classification against what `load_claude_setup` lists for the trust question).

- `widens`: "always" (waits for trust whatever its value), "by value" (some values widen: a
  `defaultMode` that asks less, a plugin enabled with `true`), or "never" (it only restricts, is
  text the model reads, as the project's CLAUDE.md is, or is never taken from a project at all:
  the managed-only keys and the credential helpers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from acp_agent.errors import AgentError

__all__ = ["SETTINGS_KEYS", "SettingsKey", "UnclassifiedKey", "classified"]


@dataclass(frozen=True, slots=True)
class SettingsKey:
    """What one key does, and whether a project's value of it waits for trust."""

    widens: Literal["always", "by value", "never"]
    why: str


_HELPER = (
    "runs a command for the model's credentials: read at start-up from the user's and the managed "
    "files only; a project's is never run (named in /status)"
)
_MANAGED_HERE = "read from the managed policy only: ignored in any other file"

SETTINGS_KEYS: dict[str, SettingsKey] = {
    "permissions.allow": SettingsKey("always", "lets the calls it names run without asking"),
    "permissions.ask": SettingsKey("never", "asks before the calls it names: only restricts"),
    "permissions.deny": SettingsKey("never", "refuses the calls it names: only restricts"),
    "permissions.defaultMode": SettingsKey(
        "by value", "acceptEdits and bypassPermissions ask less than default; plan and dontAsk ask or do less"
    ),
    "permissions.additionalDirectories": SettingsKey("always", "lets the tools reach more folders"),
    "permissions.disableBypassPermissionsMode": SettingsKey("never", "takes a mode away: only restricts"),
    "hooks": SettingsKey("always", "runs the commands it names at each event"),
    "disableAllHooks": SettingsKey(
        "by value", "`true` turns off the user's own hooks too, some of which may guard tool calls"
    ),
    "env": SettingsKey(
        "always",
        "reaches the environment of every hook and MCP server expansion (the user's and the managed "
        "file's also the agent's own configuration, at start-up: never a project's)",
    ),
    "enabledMcpjsonServers": SettingsKey("always", "starts the `.mcp.json` servers it names"),
    "enableAllProjectMcpServers": SettingsKey("by value", "`true` starts every server of `.mcp.json`"),
    "disabledMcpjsonServers": SettingsKey("never", "keeps the servers it names from starting"),
    "enabledPlugins": SettingsKey(
        "by value", "`true` offers a plugin's commands, skills and agents; `false` only removes"
    ),
    "outputStyle": SettingsKey("never", "chooses the style text at the end of the system prompt"),
    "claudeMdExcludes": SettingsKey("never", "leaves memory files out of the system prompt"),
    "model": SettingsKey("never", "a session's first model (within availableModels): runs nothing"),
    "allowedMcpServers": SettingsKey(
        "always", "an MCP allowlist: a project's entries join the other files', so they can let servers in"
    ),
    "deniedMcpServers": SettingsKey("never", "keeps the MCP servers it names from starting: only restricts"),
    "allowManagedPermissionRulesOnly": SettingsKey("never", "managed only: ignored in any other file"),
    "allowManagedHooksOnly": SettingsKey("never", "managed only: ignored in any other file"),
    "allowManagedMcpServersOnly": SettingsKey("never", "managed only: ignored in any other file"),
    "availableModels": SettingsKey("never", _MANAGED_HERE),
    "enforceAvailableModels": SettingsKey("never", _MANAGED_HERE),
    "apiKeyHelper": SettingsKey("never", _HELPER),
    "awsAuthRefresh": SettingsKey("never", _HELPER),
    "awsCredentialExport": SettingsKey("never", _HELPER),
}
"""Each key the agent reads from a settings file (dotted: `permissions.allow`)."""


class UnclassifiedKey(AgentError, AssertionError):
    """A settings key read without a line in `SETTINGS_KEYS`: a mistake in the code, never input."""


def classified(keys: tuple[str, ...]) -> SettingsKey:
    """The classification of the key at `keys` (`("permissions", "allow")`).

    Raises:
        UnclassifiedKey: the key has none (add it to `SETTINGS_KEYS`, saying whether it widens).
    """
    found = SETTINGS_KEYS.get(".".join(keys))
    if found is None:
        raise UnclassifiedKey(f"settings key {'.'.join(keys)!r} is read but not in SETTINGS_KEYS")
    return found
