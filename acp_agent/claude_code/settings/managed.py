"""The policy an administrator sets: Claude Code's managed settings, read as Claude Code reads them.

Where (Claude Code's system directory, one per OS): `/etc/claude-code` on Linux and WSL,
`/Library/Application Support/ClaudeCode` on macOS, `C:\\Program Files\\ClaudeCode` on Windows
(`C:\\ProgramData` is not read). It holds `managed-settings.json`, the drop-ins
`managed-settings.d/*.json` and `managed-mcp.json`. `ACP_AGENT_MANAGED_SETTINGS_DIR`, read from
the agent's own process environment only (never from a settings file's `env`), points elsewhere:
for tests and packagers. Only this file-based source is read: the MDM profiles, the Windows
registry and server-managed settings are not.

How: `managed-settings.json` first, then each drop-in in name order (hidden files and names not
ending in `.json` left out); a later file's single value replaces an earlier one, lists combine
without duplicates, objects (`env`, `permissions`, `sandbox`) merge key by key by the same rules,
and `fallbackModel` is taken whole. The merged policy is read once, at start-up, and holds for the
process's life (a changed policy applies at the agent's next start).

Failing closed. Claude Code fails closed on an invalid value of its enforcement keys, and so does
this agent, a little further (each said in `/status`):
- an `allowManaged*Only` lock or `enforceAvailableModels` that is not true or false counts as
  true (Claude Code drops an invalid `allowManagedPermissionRulesOnly`: stricter here);
- an `availableModels` or `allowedMcpServers` that is not a list is an empty allowlist; a bad
  entry of one is left out and the rest enforced; a `deniedMcpServers` that is not a list is
  dropped (denying everything would block servers the policy never named), a bad entry left out;
- `permissions.disableBypassPermissionsMode` with any value disables the mode (stricter);
- a policy file that exists but cannot be read, or is not a JSON object, or a drop-in directory
  that cannot be listed: the strictest policy applies until it is fixed (`STRICTEST`). Claude Code
  skips a managed file that is not valid JSON; an editor's agent has no dialog to say so, and a
  half-written policy must not lift every lock at once: stricter here;
- a `managed-mcp.json` that cannot be read: no MCP server starts (as `{"mcpServers": {}}`).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp_agent.claude_code.settings.settings_json import read_json_object

__all__ = [
    "LOCKS",
    "MANAGED_DIR_ENV",
    "STRICTEST",
    "ManagedPolicy",
    "managed_dir",
    "merge_settings",
    "read_managed_policy",
]

MANAGED_DIR_ENV = "ACP_AGENT_MANAGED_SETTINGS_DIR"
"""Where the policy is instead of the system directory: for tests and packagers, read from the
agent's process environment only."""
SYSTEM_DIRS = {
    "darwin": "/Library/Application Support/ClaudeCode",
    "win32": "C:\\Program Files\\ClaudeCode",
}
LINUX_DIR = "/etc/claude-code"
SETTINGS_FILE = "managed-settings.json"
DROP_INS = "managed-settings.d"
MCP_FILE = "managed-mcp.json"
LOCKS = ("allowManagedPermissionRulesOnly", "allowManagedHooksOnly", "allowManagedMcpServersOnly")
"""The managed-only locks this agent enforces (true: only the managed value of what it locks)."""
STRICTEST: dict[str, Any] = {
    **dict.fromkeys(LOCKS, True),
    "allowedMcpServers": [],
    "availableModels": [],
    "permissions": {"disableBypassPermissionsMode": "disable"},
}
"""What a policy that cannot be read enforces, over what could be read of it."""
_WHOLE = frozenset({"fallbackModel"})


def managed_dir(environ: Mapping[str, str] | None = None, platform: str = sys.platform) -> Path:
    """The policy's directory: `ACP_AGENT_MANAGED_SETTINGS_DIR` when the process was given one,
    else the system directory of the OS."""
    configured = (os.environ if environ is None else environ).get(MANAGED_DIR_ENV, "").strip()
    if configured:
        return Path(os.path.expanduser(configured))
    return Path(SYSTEM_DIRS.get(platform, LINUX_DIR))


@dataclass(frozen=True, slots=True)
class ManagedPolicy:
    """The managed settings found (none: every field empty), merged and checked."""

    directory: Path
    data: dict[str, Any] = field(default_factory=dict)
    files: tuple[Path, ...] = ()
    """The settings files read, in merge order."""
    broken: tuple[str, ...] = ()
    """Why a part of the policy could not be read: the strictest policy applies then."""
    mcp_servers: dict[str, Any] | None = None
    """`managed-mcp.json`'s `mcpServers` (None: no such file): only these servers may start."""
    warnings: tuple[str, ...] = ()

    @property
    def present(self) -> bool:
        """Whether any managed source exists here (a settings file, a drop-in, managed-mcp.json)."""
        return bool(self.files or self.broken or self.mcp_servers is not None)

    @property
    def source(self) -> str:
        """Claude Code's `/status` words for the source: file, drop-ins, or file + drop-ins."""
        main = any(f.name == SETTINGS_FILE and f.parent == self.directory for f in self.files)
        drop_ins = any(f.parent.name == DROP_INS for f in self.files)
        return " + ".join(([("file")] if main else []) + (["drop-ins"] if drop_ins else [])) or "file"

    @property
    def shown(self) -> str:
        """The policy as `/permissions` and a refusal name it: its one file, or its directory."""
        if len(self.files) == 1 and not self.broken:
            return str(self.files[0])
        return f"managed settings in {self.directory}"

    def locked(self, lock: str) -> bool:
        """Whether the managed-only lock `lock` (one of `LOCKS`) is on."""
        return self.data.get(lock) is True

    def describe(self) -> list[str]:
        """`/status`'s lines: the policy's source and files, what it locks, and what is wrong."""
        if not self.present:
            return []
        names = ", ".join(str(f) for f in self.files) or "none readable"
        lines = [f"Setting sources: Enterprise managed settings ({self.source}): {names}"]
        locks = [lock for lock in LOCKS if self.locked(lock)]
        if locks:
            lines.append(f"  - locks: {', '.join(locks)}")
        if self.mcp_servers is not None:
            servers = ", ".join(self.mcp_servers) or "none: MCP is off"
            lines.append(f"  - {self.directory / MCP_FILE}: only its servers start ({servers})")
        lines += [f"  - not read, so the strictest policy applies until fixed: {b}" for b in self.broken]
        lines += [f"  - warning: {w}" for w in self.warnings]
        return lines


def read_managed_policy(directory: Path | None = None) -> ManagedPolicy:
    """The policy in `directory` (default: `managed_dir()`), merged and checked; never raises."""
    directory = managed_dir() if directory is None else directory
    broken: list[str] = []
    warnings: list[str] = []
    files: list[Path] = []
    merged: dict[str, Any] = {}
    for path in [directory / SETTINGS_FILE, *_drop_ins(directory / DROP_INS, broken)]:
        data = _read(path, broken)
        if data is not None:
            files.append(path)
            merged = merge_settings(merged, data)
    checked = _checked(merged, warnings.append)
    if broken:
        permissions = checked.get("permissions")
        checked = {**checked, **STRICTEST}
        kept = permissions if isinstance(permissions, dict) else {}
        checked["permissions"] = {**kept, **STRICTEST["permissions"]}
    servers = _mcp_servers(directory / MCP_FILE, warnings.append)
    return ManagedPolicy(directory, checked, tuple(files), tuple(broken), servers, tuple(warnings))


def _drop_ins(directory: Path, broken: list[str]) -> list[Path]:
    """The drop-ins in name order (hidden files and names not ending in `.json` left out)."""
    try:
        names = os.listdir(directory)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        broken.append(f"{directory}: cannot be listed ({exc.strerror or exc})")
        return []
    return [directory / n for n in sorted(names) if n.endswith(".json") and not n.startswith(".")]


def _read(path: Path, broken: list[str]) -> dict[str, Any] | None:
    """A policy file; None when absent, or broken (then `broken` says why). A link whose target
    is missing is broken, not absent: the policy's file is there, only unreadable."""
    problems: list[str] = []
    data = read_json_object(path, str(path), problems.append)
    if data is None and not problems and os.path.islink(path) and not path.exists():
        problems.append(f"{path}: a link to a file that does not exist")
    broken.extend(problems)
    return data


def merge_settings(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`over` merged into `base` as the managed drop-ins merge: single values replaced, lists
    combined without duplicates, objects key by key, `fallbackModel` whole."""
    merged = dict(base)
    for key, value in over.items():
        old = merged.get(key)
        if key in _WHOLE:
            merged[key] = value
        elif isinstance(old, dict) and isinstance(value, dict):
            merged[key] = merge_settings(old, value)
        elif isinstance(old, list) and isinstance(value, list):
            combined = {_key(v): v for v in old}
            for item in value:
                combined.setdefault(_key(item), item)
            merged[key] = list(combined.values())
        else:
            merged[key] = value
    return merged


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _checked(data: dict[str, Any], warn: Callable[[str], None]) -> dict[str, Any]:
    """The enforcement keys failing closed (the module's docstring says how)."""
    kept = dict(data)
    for key in (*LOCKS, "enforceAvailableModels"):
        if key in kept and not isinstance(kept[key], bool):
            warn(f"{key} is not true or false: treated as true until fixed")
            kept[key] = True
    if "availableModels" in kept:
        kept["availableModels"] = _list(kept["availableModels"], "availableModels", _is_text, warn, [])
    if "allowedMcpServers" in kept or "deniedMcpServers" in kept:
        from acp_agent.claude_code.settings.mcp_policy import is_entry  # only then: start-up stays light
    if "allowedMcpServers" in kept:
        kept["allowedMcpServers"] = _list(kept["allowedMcpServers"], "allowedMcpServers", is_entry, warn, [])
    if "deniedMcpServers" in kept:
        denied = _list(kept["deniedMcpServers"], "deniedMcpServers", is_entry, warn, None)
        if denied is None:
            del kept["deniedMcpServers"]
        else:
            kept["deniedMcpServers"] = denied
    permissions = kept.get("permissions")
    bypass = permissions.get("disableBypassPermissionsMode") if isinstance(permissions, dict) else None
    if isinstance(permissions, dict) and bypass not in (None, "disable"):
        warn('permissions.disableBypassPermissionsMode is not "disable": the mode is disabled anyway')
        kept["permissions"] = {**permissions, "disableBypassPermissionsMode": "disable"}

    return kept


def _list(
    value: Any,
    key: str,
    good: Callable[[Any], bool],
    warn: Callable[[str], None],
    otherwise: list[Any] | None,
) -> list[Any] | None:
    """`value`'s good entries; `otherwise` (with a warning) when it is not a list."""
    if not isinstance(value, list):
        what = "an empty allowlist until fixed" if otherwise is not None else "dropped"
        warn(f"{key} is not a list: {what}")
        return otherwise
    kept = [v for v in value if good(v)]
    if len(kept) != len(value):
        warn(f"{key}: {len(value) - len(kept)} invalid entries left out, the rest enforced")
    return kept


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _mcp_servers(path: Path, warn: Callable[[str], None]) -> dict[str, Any] | None:
    """`managed-mcp.json`'s servers; None without the file, `{}` when it cannot be read (no server
    may start then: the file claims exclusive control)."""
    problems: list[str] = []
    data = read_json_object(path, str(path), problems.append)
    if problems:
        warn(f"{problems[0]}: no MCP server starts until it is fixed")
        return {}
    if data is None:
        return None
    servers = data.get("mcpServers", {})
    if not isinstance(servers, dict):
        warn(f"{path}: mcpServers is not an object: no MCP server starts until it is fixed")
        return {}
    return servers
