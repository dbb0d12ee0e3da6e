"""Commands in a sandbox: one session's policy, and the one function that wraps a command for it.

`CommandSandbox.wrap` turns a command's argv into the argv to start: under bubblewrap (`bwrap.py`)
where it works, else unchanged. Every command the agent starts for a session goes through it:
`run_command` (locally or in the editor's terminal), the verify strategy's check, the `!` lines
of custom slash commands, and the hooks. Where no sandbox can be had (no bwrap, bwrap refused by
the kernel, another OS, or `--sandbox off`) the command runs as before, and the session is told
once, through the `tell` callback the session gives (a notice to the user), and in `/status`.

What a command names under the sandbox's private `/tmp` (an interpreter, a script) is made
reachable read-only (`named.py`); the user's own code (their hooks) sees the whole disk but the
hidden paths (`whole`).

Whether bwrap works is probed once per process (one `bwrap … true`, ~10 ms), off the event loop.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.to_thread
import structlog

from acp_agent.config import how_to_set
from acp_agent.tools.grant import Grant
from acp_agent.tools.hidden import NOTHING_HIDDEN, HiddenPaths
from acp_agent.tools.sandbox.bwrap import (
    Confinement,
    bwrap_argv,
    find_bwrap,
    private_dirs,
    probe_bwrap,
    runtime_dir,
)
from acp_agent.tools.sandbox.git_dirs import GitDirs, find_git_dirs
from acp_agent.tools.sandbox.named import command_words, named_paths, reach

__all__ = [
    "GIT_GRANT",
    "GIT_WRITE",
    "GOVERNING",
    "CommandSandbox",
    "SandboxPolicy",
    "SandboxState",
    "Wrapped",
]

log = structlog.get_logger(__name__)

GIT_GRANT = "git"
"""The per-call permission to write the repository's hooks and config."""


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """The user's settings for commands (`--sandbox`, `--sandbox-network`) and what to hide."""

    enabled: bool = True
    network: bool = True
    hidden: HiddenPaths = NOTHING_HIDDEN
    """The agent's state dir, its stored key, the SDK's profiles: covered in the sandbox (the list
    the file tools keep out of sight, `tools/hidden.py`)."""
    program: str | None = None
    """The bwrap to use; None: find it (`bwrap.find_bwrap`)."""


@dataclass(frozen=True, slots=True)
class SandboxState:
    """Whether commands run sandboxed here: `program` is bwrap's path, or None and `why` says why not."""

    program: str | None
    why: str = ""


@dataclass(frozen=True, slots=True)
class Wrapped:
    """A command's argv as it is to be started, and the confinement it got (None: unsandboxed)."""

    argv: list[str]
    confinement: Confinement | None
    unreachable: str | None = None
    """A path the command names that exists here but not in its sandbox, and why (`named.py`)."""


GIT_WRITE = Grant(GIT_GRANT, "Allow once, and let it change .git hooks and config")


GOVERNING = (".claude/settings.json", ".claude/settings.local.json", ".claude/hooks", ".mcp.json")
"""What decides the agent's own rules, hooks and servers, in each root: read-only for commands
(issue 41). One that does not exist yet can be made, and is then read as the project's: it waits
for the trust question (`claude_code/settings/local_owner.py`, `trust.py`)."""


def governing_files(roots: Sequence[Path]) -> tuple[Path, ...]:
    """The existing `GOVERNING` paths of `roots` (resolved, inside a root), each once."""
    found: dict[Path, None] = {}
    roots = [Path(os.path.realpath(r)) for r in roots]
    for root in roots:
        for name in GOVERNING:
            path = root / name
            if os.path.lexists(path):
                target = Path(os.path.realpath(path))
                if any(target == r or target.is_relative_to(r) for r in roots) and target.exists():
                    found.setdefault(target)
    return tuple(found)


def _existing(roots: Sequence[Path]) -> tuple[Path, ...]:
    return tuple(dict.fromkeys(r.resolve() for r in roots if r.is_dir()))


def _repos(roots: Sequence[Path]) -> tuple[GitDirs, ...]:
    """The repositories the roots are in, each once."""
    repos: dict[tuple[Path, ...], GitDirs] = {}
    for root in _existing(roots):
        found = find_git_dirs(root)
        if found is not None:
            repos.setdefault(found.writable, found)
    return tuple(repos.values())


_probed: dict[tuple[str | None, bool], SandboxState] = {}


def _state_now(policy: SandboxPolicy) -> SandboxState:
    key = (policy.program, policy.network)
    if key not in _probed:
        _probed[key] = _probe(policy)
    return _probed[key]


def _probe(policy: SandboxPolicy) -> SandboxState:
    if not sys.platform.startswith("linux"):
        return SandboxState(None, f"no sandbox is available on {sys.platform} (only Linux, with bubblewrap)")
    program = policy.program or find_bwrap()
    if program is None:
        return SandboxState(None, "bubblewrap (bwrap) is not installed")
    started = time.perf_counter()
    why = probe_bwrap(program, network=policy.network)
    took_ms = round((time.perf_counter() - started) * 1000, 1)
    if why is not None:
        log.warning("sandbox.unavailable", why=why, took_ms=took_ms)
        return SandboxState(None, why)
    log.debug("sandbox.probed", program=program, took_ms=took_ms)
    return SandboxState(program)


async def _nothing(text: str) -> None:
    return None


class CommandSandbox:
    """One session's sandbox for the commands it runs; tells the session once when there is none."""

    def __init__(self, policy: SandboxPolicy, tell: Callable[[str], Awaitable[None]] = _nothing) -> None:
        self.policy = policy
        self._tell = tell
        self._told = False
        self.editor_refused: str | None = None
        """Why bwrap failed in the editor's terminal: later commands then run here, sandboxed."""

    async def state(self) -> SandboxState:
        if not self.policy.enabled:
            return SandboxState(None, f"the sandbox is turned off ({how_to_set('sandbox')})")
        key = (self.policy.program, self.policy.network)
        if key in _probed:
            return _probed[key]
        return await anyio.to_thread.run_sync(_state_now, self.policy)

    async def wrap(
        self,
        command: Sequence[str],
        *,
        cwd: Path,
        roots: Sequence[Path],
        grants: frozenset[str] = frozenset(),
        in_editor: bool = False,
        names: str | tuple[str, ...] = (),
        whole: bool = False,
    ) -> Wrapped:
        """The argv that runs `command` in `cwd`, sandboxed when possible (see the module doc).

        `names`: its shell command line (split into words off the event loop), or its words (an
        exec form), whose absolute paths are made reachable (`named.py`); `whole`: the user's own
        code, which sees everything but the hidden paths.
        """
        state = await self.state()
        if state.program is None:
            await self._tell_once(state.why)
            return Wrapped(list(command), None)
        program = state.program
        return await anyio.to_thread.run_sync(
            lambda: self._wrapped(program, list(command), cwd, roots, grants, in_editor, names, whole)
        )

    def _wrapped(
        self,
        program: str,
        command: list[str],
        cwd: Path,
        roots: Sequence[Path],
        grants: frozenset[str],
        in_editor: bool,
        names: str | tuple[str, ...],
        whole: bool,
    ) -> Wrapped:
        """Off the event loop: finding the git dirs and building the mounts stat the disk."""
        writable = _existing(roots)
        hidden = self.policy.hidden.covered()
        named = reach(
            named_paths(command_words(names) if isinstance(names, str) else names),
            private=private_dirs(),
            writable=writable,
            hidden=hidden,
            closed=(Path(runtime_dir()).resolve(),),
            whole=whole,
        )
        confinement = Confinement(
            cwd=cwd,
            writable=writable,
            git=() if whole else _repos(writable),
            hidden=hidden,
            network=self.policy.network or whole,
            git_writable=GIT_GRANT in grants,
            die_with_parent=in_editor,
            read_only=() if whole else governing_files(writable),
            named=named.entries,
            whole=whole,
        )
        return Wrapped(bwrap_argv(program, command, confinement), confinement, named.unreachable)

    async def _tell_once(self, why: str) -> None:
        if self._told:
            return
        self._told = True
        log.warning("sandbox.commands_unsandboxed", why=why)
        await self._tell(
            f"Commands run without a sandbox: {why}. They can read and change everything you can, "
            "including this agent's session journals and stored key. "
            "See docs/sandbox.md."
        )

    async def question(self, roots: Sequence[Path]) -> tuple[str, tuple[Grant, ...]]:
        """What a command will be able to reach, for the permission question, and the extra
        choice to offer: writing the git hooks and config for this one call."""
        state = await self.state()
        if state.program is None:
            return f"No sandbox ({state.why}): it can read and change everything you can.", ()
        repos, governed = await anyio.to_thread.run_sync(lambda: (_repos(roots), governing_files(roots)))
        guarded = any(repo.runs_code for repo in repos)
        git = "; .git hooks and config read-only" if guarded else ""
        git += "; the agent's settings, hooks and .mcp.json read-only" if governed else ""
        text = (
            f"Sandbox: it can write only in {', '.join(str(r) for r in roots)}{git}; the rest of the "
            f"disk is read-only; network {'on' if self.policy.network else 'off'}; the agent, its "
            "session journals and its stored key are out of reach."
        )
        return text, (GIT_WRITE,) if guarded else ()

    async def editor_failed(self, why: str) -> None:
        """bwrap could not start in the editor's terminal: later commands run here instead."""
        if self.editor_refused is None:
            self.editor_refused = why
            log.warning("sandbox.editor_terminal_failed", why=why)
            await self._tell(
                f"The sandbox could not start in the editor's terminal ({why}), so that command did "
                "not run. Later commands run inside the agent, sandboxed, with their output shown in "
                "the tool call instead of a terminal."
            )

    async def status_line(self) -> str:
        """The `/status` line."""
        state = await self.state()
        if state.program is None:
            return f"none ({state.why}); commands run unsandboxed"
        net = "on" if self.policy.network else f"off ({how_to_set('sandbox_network')})"
        editor = f"; the editor's terminal refused it ({self.editor_refused})" if self.editor_refused else ""
        return f"bubblewrap; writes only in the workspace; network {net}{editor}"
