"""A session's roots: its cwd and the client's additional directories, checked once.

ACP's `additionalDirectories` (advertised as `sessionCapabilities.additionalDirectories`) widen
where the tools may work without moving the cwd, which stays the base of relative paths. Each
must be an absolute path to an existing directory (-32602 names the bad one); `null` means none.
On session/load and session/resume the request's list is the session's whole list: omitted or
empty, no additional root is active (the schema's words), whatever the journal held before. The
journal keeps the list in force (the header, then a `RootsEntry` when a load changes it), so
session/list reports it and an editor can send it back.

Some directories are never a root, the cwd included (-32602 says why): `/` (every file, and
commands could write anywhere), anything in `/proc`, `/sys` or `/dev` (the host's processes and
devices), `/tmp`, `$TMPDIR` and the user's runtime dir themselves (every program's sockets: the
sandbox gives commands empty ones; a directory inside them is fine), and the agent's hidden paths
or anything inside them (its journals and stored key). A root that *holds* a hidden path (an
editor opened on `$HOME`) is accepted: the tools and the sandbox keep that path out of sight. At
most MAX_ROOTS additional directories: each is named in every request to the model.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import structlog

from acp_agent.claude_code.setup.setup import ClaudeSetup
from acp_agent.errors import RpcError
from acp_agent.tools.hidden import HiddenPaths
from acp_agent.tools.sandbox.bwrap import private_dirs

__all__ = ["MAX_ROOTS", "checked_roots", "extra_roots", "session_root", "settings_roots"]

log = structlog.get_logger(__name__)

MAX_ROOTS = 64
"""The most additional directories a session takes."""
_SYSTEM = (Path("/proc"), Path("/sys"), Path("/dev"))


def checked_roots(
    cwd: str, directories: Sequence[str] | None, hidden: HiddenPaths
) -> tuple[Path, tuple[Path, ...]]:
    """The cwd and the additional roots, checked (`session_root`, `extra_roots`)."""
    root = session_root(cwd, hidden)
    return root, extra_roots(directories, root, hidden)


def session_root(cwd: str, hidden: HiddenPaths) -> Path:
    """The cwd, resolved (-32602 when it is not an existing directory, or cannot be a root)."""
    return _root(cwd, "cwd", hidden)


def extra_roots(directories: Sequence[str] | None, cwd: Path, hidden: HiddenPaths) -> tuple[Path, ...]:
    """The additional roots, resolved, in order, each once (the cwd itself left out).

    Raises:
        RpcError: -32602 for more than MAX_ROOTS, or naming the first entry that is not an existing
            directory or cannot be a root.
    """
    given = directories or ()
    if len(given) > MAX_ROOTS:
        raise RpcError.invalid_params(
            f"Invalid params: additionalDirectories: {len(given):,} directories; at most {MAX_ROOTS} "
            "are accepted (each one is named in every request to the model)",
            {"additionalDirectories": len(given)},
        )
    found = [_root(d, f"additionalDirectories.{i}", hidden) for i, d in enumerate(given)]
    return tuple(path for path in dict.fromkeys(found) if path != cwd)


def settings_roots(setup: ClaudeSetup, cwd: Path, hidden: HiddenPaths) -> tuple[Path, ...]:
    """The settings' `additionalDirectories` in force (`~/` expanded, a relative one the cwd's),
    checked as the client's are: a bad one is skipped with a warning (the log, `/status`)."""
    found: list[Path] = []
    warnings: list[str] = []
    for directory, file in setup.additional_directories()[:MAX_ROOTS]:
        source = file.shown
        given = Path(os.path.expanduser(directory))
        try:
            found.append(_root(str(cwd / given), f"additionalDirectories.{len(found)}", hidden))
        except RpcError as exc:
            why = exc.message.split(": ", 2)[-1]
            warnings.append(f"{source}: additionalDirectories {directory!r} skipped ({why})")
    for warning in warnings:
        if warning not in setup.warnings:
            log.warning("claude.settings_warning", warning=warning)
            setup.warnings = (*setup.warnings, warning)
    return tuple(p for p in dict.fromkeys(found) if p != cwd)


def _root(directory: str, where: str, hidden: HiddenPaths) -> Path:
    field = where.split(".", 1)[0]
    path = Path(directory)
    if not path.is_dir():
        raise RpcError.invalid_params(
            f"Invalid params: {where}: {directory!r} is not an existing directory", {field: directory}
        )
    resolved = path.resolve()
    why = _never_a_root(resolved, hidden)
    if why:
        raise RpcError.invalid_params(
            f"Invalid params: {where}: {directory!r} cannot be a session root: {why}", {field: directory}
        )
    return resolved


def _never_a_root(path: Path, hidden: HiddenPaths) -> str:
    """Why the resolved directory `path` cannot be a root, or ""."""
    if path == Path(path.anchor):
        return "it is the whole filesystem (open a project directory instead)"
    if any(path == system or path.is_relative_to(system) for system in _SYSTEM):
        return "it is the system's view of processes and devices, not a project"
    if path in private_dirs():
        return "it holds every program's sockets, out of commands' reach (use a directory inside it)"
    if hidden.hides(path):
        return "it holds the agent's own session journals, stored key or profiles"
    return ""
