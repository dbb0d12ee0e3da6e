"""Claude Code's MCP servers: `.mcp.json` (the project's) and `~/.claude.json` (the user's), read as
Claude Code reads them, with what each server may do before the project is trusted.

Scopes, from the highest (a name defined in several: the highest's whole entry is used, fields are
not merged, as in Claude Code):
- local: `~/.claude.json` `projects["<folder>"].mcpServers`, for the cwd's or the repository root's
  folder;
- project: `.mcp.json` in the cwd and each directory above it up to the repository root (the
  nearest first);
- user: `~/.claude.json` `mcpServers` (`$CLAUDE_CONFIG_DIR/.claude.json` when that is set).
The editor's `mcpServers` (session/new) beat all of them: `session/mcp_servers.py` decides that.

`${VAR}` and `${VAR:-default}` are expanded in `command`, `args`, `env`, `url` and `headers`, from
the agent's environment and the settings' `env`. A `VAR` that is unset, with no default, is kept
as written and named in a warning: Claude Code does the same (it warns in `claude mcp list`). A
stdio server gets `CLAUDE_PROJECT_DIR` too, unless its entry sets it.

What may start, and when (`ClaudeServer.disabled_by`, `ClaudeServer.trust_item`):
- a name in `disabledMcpjsonServers` of any settings file (a committed one too) never starts;
- a project server named by `enabledMcpjsonServers`, or any under `enableAllProjectMcpServers`,
  in the user's own settings (`~/.claude/settings.json`, acp-agent's) starts at once: it is the
  user's word, as in Claude Code;
- any other project server waits for the project's trust: it is one of the things the trust
  question lists, remembered by its entry as written (a changed command asks again). The
  project's own approvals (its settings files) count only once it is trusted, as in Claude Code,
  and then every server of its `.mcp.json` starts anyway;
- the user's servers (user and local scope) are the user's own: they start at once.
A malformed file, or entry, is skipped with a warning; the session goes on.

With the managed policy's `managed-mcp.json` (`managed.py`), none of these files is read: its
servers (scope managed, started at once) are the only ones, as in Claude Code, where it has
exclusive control. Every server, the editor's included, is then checked against the
`allowedMcpServers` and `deniedMcpServers` of the settings (`mcp_policy.py`, in `mcp_servers.py`).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import structlog

from acp_agent.claude_code.settings.settings_files import read_json_object, shown_path
from acp_agent.claude_code.setup.setup import ClaudeSetup
from acp_agent.claude_code.setup.trust import Widening
from acp_agent.claude_code.setup.widenings import named_files, shown
from acp_agent.tools.mcp.servers import parse_server

__all__ = ["ClaudeServer", "ClaudeServers", "read_claude_servers"]

log = structlog.get_logger(__name__)

STATE_FILE_BYTES = 16 << 20
"""`~/.claude.json` holds Claude Code's whole state (its project history too): read up to 16 MiB."""
MCP_FILE_BYTES = 1 << 20
USER_SCOPES = frozenset({"user", "acp-agent"})
"""The settings files whose MCP approvals are the user's own word (no trust needed)."""
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

Scope = Literal["managed", "local", "project", "user"]


@dataclass(frozen=True, slots=True)
class ClaudeServer:
    """One server of Claude Code's files: `spec` is the ACP `McpServer` it is started as (expanded),
    or `problem` says why it cannot be; `disabled_by` names the settings file that disables it;
    `trust_item` is set for a project server that waits for the project's trust."""

    name: str
    scope: Scope
    source: str
    spec: dict[str, Any]
    problem: str = ""
    disabled_by: str = ""
    trust_item: Widening | None = None


@dataclass(frozen=True, slots=True)
class ClaudeServers:
    """A session's servers from Claude Code's files (a name once: the highest scope's), and the
    warnings of the reading."""

    servers: tuple[ClaudeServer, ...] = ()
    warnings: tuple[str, ...] = ()


def read_claude_servers(
    setup: ClaudeSetup, *, home: Path | None, environ: Mapping[str, str] | None = None
) -> ClaudeServers:
    """The servers of `.mcp.json` and `~/.claude.json` for the session `setup` belongs to."""
    warnings: list[str] = []
    values = {**(os.environ if environ is None else environ), **setup.env()}
    disabled = {name: file.shown for name, file in setup.listed("disabledMcpjsonServers")}
    approved = {name for name, file in setup.listed("enabledMcpjsonServers") if file.scope in USER_SCOPES}
    approve_all = any(
        f.scope in USER_SCOPES and f.get("enableAllProjectMcpServers") is True for f in setup.files
    )
    found: dict[str, ClaudeServer] = {}
    policy = setup.policy
    if policy is not None and policy.mcp_servers is not None:
        source = str(policy.directory / "managed-mcp.json")
        listed: Iterator[tuple[Scope, str, str, Any]] = (
            ("managed", source, name, entry) for name, entry in policy.mcp_servers.items()
        )
    else:
        listed = _entries(setup, home, warnings.append)
    for scope, source, name, entry in listed:
        if name in found:
            continue
        missing: list[str] = []
        spec, problem = _spec(name, entry, setup.root, _Expansion(values, missing))
        warnings.extend(
            f"{source}: server {name!r}: ${{{variable}}} is not set (kept as written)"
            for variable in dict.fromkeys(missing)
        )
        trust_item = None
        if scope == "project" and not problem and not (approve_all or name in approved):
            trust_item = server_item(name, source, entry, setup)
        found[name] = ClaudeServer(name, scope, source, spec, problem, disabled.get(name, ""), trust_item)
    for warning in warnings:
        log.warning("claude.mcp_warning", warning=warning)
    return ClaudeServers(tuple(found.values()), tuple(warnings))


def _entries(
    setup: ClaudeSetup, home: Path | None, warn: Callable[[str], None]
) -> Iterator[tuple[Scope, str, str, Any]]:
    """(scope, the file as shown, name, entry as written) for every server, highest scope first."""
    state = _state_file(home)
    shown = shown_path(state, setup.root, home) if state is not None else ""
    data = read_json_object(state, shown, warn, STATE_FILE_BYTES) if state is not None else None
    projects = data.get("projects") if data is not None else None
    if isinstance(projects, dict):
        for folder in dict.fromkeys((setup.cwd, setup.root)):
            project = projects.get(str(folder))
            if isinstance(project, dict):
                yield from _servers("local", f"{shown} (projects[{str(folder)!r}])", project, warn)
    for directory in _upwards(setup.cwd, setup.root):
        path = directory / ".mcp.json"
        found = read_json_object(path, shown_path(path, setup.root, home), warn, MCP_FILE_BYTES)
        if found is not None:
            yield from _servers("project", shown_path(path, setup.root, home), found, warn)
    if data is not None:
        yield from _servers("user", shown, data, warn)


def _servers(
    scope: Scope, source: str, data: dict[str, Any], warn: Callable[[str], None]
) -> Iterator[tuple[Scope, str, str, Any]]:
    servers = data.get("mcpServers")
    if servers is None:
        return
    if not isinstance(servers, dict):
        warn(f"{source}: mcpServers skipped (must be an object)")
        return
    for name, entry in servers.items():
        yield scope, source, name, entry


def _state_file(home: Path | None) -> Path | None:
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    if configured:
        return Path(os.path.expanduser(configured)) / ".claude.json"
    return home / ".claude.json" if home is not None else None


def _upwards(cwd: Path, root: Path) -> Iterator[Path]:
    """`cwd`, then each directory above it up to `root` (only `cwd` when it is not under `root`)."""
    directory = cwd
    while True:
        yield directory
        if directory == root or not directory.is_relative_to(root) or directory.parent == directory:
            return
        directory = directory.parent


def _spec(name: str, entry: Any, root: Path, expand: Callable[[str], str]) -> tuple[dict[str, Any], str]:
    """The ACP `McpServer` an entry is started as, and why it cannot be ("" when it can)."""
    if not isinstance(entry, dict):
        return {}, "invalid server: its entry is not an object"
    kind = entry.get("type", "stdio")
    spec: dict[str, Any] = {"name": name, "type": kind}
    try:
        if kind == "stdio":
            spec["command"] = expand(_text(entry, "command"))
            spec["args"] = [expand(a) for a in _texts(entry.get("args", []), "args")]
            env = {k: expand(v) for k, v in _pairs(entry.get("env"), "env").items()}
            env.setdefault("CLAUDE_PROJECT_DIR", str(root))
            spec["env"] = [{"name": k, "value": v} for k, v in env.items()]
        else:
            spec["url"] = expand(_text(entry, "url"))
            headers = _pairs(entry.get("headers"), "headers")
            spec["headers"] = [{"name": k, "value": expand(v)} for k, v in headers.items()]
        parse_server(spec)
    except ValueError as exc:
        return spec, f"invalid server: {exc}"
    return spec, ""


def _text(entry: dict[str, Any], key: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string")
    return value


def _texts(value: Any, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{key} must be a list of strings")
    return value


def _pairs(value: Any, key: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{key} must be an object of strings")
    return {str(k): v for k, v in value.items()}


@dataclass(frozen=True, slots=True)
class _Expansion:
    """`${VAR}` and `${VAR:-default}` in a text, from `values`; an unset VAR with no default is
    kept as written, and its name added to `missing`."""

    values: Mapping[str, str]
    missing: list[str]

    def __call__(self, text: str) -> str:
        return _VARIABLE.sub(self._one, text)

    def _one(self, match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in self.values:
            return self.values[name]
        if default is not None:
            return default
        self.missing.append(name)
        return match.group(0)


def server_item(name: str, source: str, entry: dict[str, Any], setup: ClaudeSetup) -> Widening:
    """A project server as the trust question lists it, whole: the command line it runs (or the
    URL it is sent to), every `env` value its process gets and every header sent, as written,
    and the variables of the user's environment that `${VAR}` would put there. It is remembered
    by its entry and by the content of the files its command line names inside the project."""
    details: list[str] = []
    if entry.get("type", "stdio") == "stdio":
        words = [str(entry.get("command", "")), *(str(a) for a in entry.get("args", []) or [])]
        text = f"{name}: runs {shlex.join(words)}"
        details += [shown(f"env {k}={v}") for k, v in (entry.get("env") or {}).items()]
        files = named_files(words, setup.cwd, setup.root)
    else:
        text = f"{name}: {entry.get('type')} {entry.get('url', '')}"
        details += [shown(f"header {k}: {v}") for k, v in (entry.get("headers") or {}).items()]
        files = []
    used = sorted({m.group(1) for m in _VARIABLE.finditer(json.dumps(entry, ensure_ascii=False))})
    if used:
        where = "sent to that server" if entry.get("type", "stdio") != "stdio" else "given to that process"
        details.append(f"${{VAR}} references: your environment's {', '.join(used)}, {where}")
    canonical = json.dumps(entry, sort_keys=True, ensure_ascii=False)
    return Widening("MCP server", source, shown(text), "\n".join([canonical, *files]), tuple(details))
