"""Every process the agent starts dies with it, even when the agent is killed with SIGKILL.

A SIGKILL (an editor's hard stop, the OOM killer) gives the agent no moment to stop what it runs,
and a command, its jobs and its daemons would run on for ever. So every child's environment
carries `ACP_AGENT_OWNER=<this process's id>`, which all it starts inherits, and before the first
child a warden is started (`warden.py`): it stops what carries the mark once this process is gone,
whatever ended it. A normal exit (stdin's EOF, SIGTERM) has stopped everything already; the warden
then finds nothing.

A child with an environment of its own gets it through `owned_env(env)`; one that would inherit
ours, through `inherited_env()`, which costs nothing once `mark_process()` has put the mark in our
own environment (the agent does, at start-up) and a copy of it otherwise.

Why not the parent-death signal (`PR_SET_PDEATHSIG`) on each child: it stops the child, not a
shell's jobs nor what it detached with `setsid`; it fires when the *thread* that started the child
ends, so a child started from a worker thread would die with that thread, healthy; and setting it
takes a `preexec_fn`, which costs every spawn its vfork. Nor bwrap's `--die-with-parent` for the
commands run here: bwrap's outer process exits as soon as the command's own does, and the flag
then kills the sandbox's init, so the command's leftovers would die unreported instead of being
stopped and named (`tools/shell/process_group.py`). A process that clears its environment escapes the
mark, unsandboxed; sandboxed, it dies with bwrap's init, which is marked.
"""

from __future__ import annotations

import logging
import os
import secrets
import sys
import threading
from collections.abc import Mapping

from acp_agent.process import warden

__all__ = ["OWNER", "inherited_env", "mark_process", "owned_env"]

log = logging.getLogger(__name__)
"""The stdlib's logging, not structlog: the harness, which leaves structlog unconfigured (its
default writes to stdout), starts processes with this module too. Both go to stderr."""

OWNER = "ACP_AGENT_OWNER"
"""The environment variable that names the agent process a child belongs to."""
_WARDEN_ENV = ("PATH", "LD_LIBRARY_PATH")
"""All the warden gets of our environment: enough to start Python, and never the API key (the
warden, unlike the agent, is dumpable: its environment is readable by the user's processes)."""


class _Warden:
    """This process's id, and its warden, started at the first child."""

    def __init__(self) -> None:
        self.owner = secrets.token_hex(8)
        self.process_marked = False
        self._lock = threading.Lock()
        self._started = False
        self._held: int | None = None
        """The pipe's writing end: open as long as this process lives, never inherited."""

    def start(self) -> str:
        """The owner id, once the warden runs (a fork and exec the first time, not waited for)."""
        if not self._started:
            with self._lock:
                if not self._started:
                    self._spawn()
                    self._started = True
        return self.owner

    def _spawn(self) -> None:
        """Start the warden: a process this one never waits for (it outlives us by design), so no
        `subprocess.Popen`, whose object would be collected at our exit with the warden running and
        say so (a ResourceWarning); its stdin is the reading end of a pipe only we hold."""
        if not sys.platform.startswith("linux") or not sys.executable:
            log.debug("lifetime.no_warden: no /proc to sweep on %s", sys.platform)
            return
        reading, self._held = os.pipe()  # both ends non-inheritable (PEP 446): no child holds them
        try:
            pid = os.posix_spawn(
                sys.executable,
                [sys.executable, "-I", "-S", warden.__file__, f"{OWNER}={self.owner}"],
                {name: os.environ[name] for name in _WARDEN_ENV if name in os.environ},
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, reading, 0),
                    # never hold the editor's pipes (ours, or any we inherited) open past our end
                    (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                    (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
                    *((os.POSIX_SPAWN_CLOSE, fd) for fd in _inheritable_fds()),
                ],
                setsid=True,  # a kill of our process group leaves it to do its work
            )
        except OSError as exc:
            os.close(self._held)
            self._held = None
            log.warning("lifetime.no_warden: %s; a kill -9 of this process orphans its children", exc)
        else:
            log.debug("lifetime.warden_started pid=%d", pid)
        finally:
            os.close(reading)


def _inheritable_fds() -> list[int]:
    """This process's descriptors past stderr that a child would inherit (those it inherited
    itself, mostly): the warden gets none of them."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if fd > 2 and os.get_inheritable(fd):
                found.append(fd)
        except OSError:  # the listing's own descriptor, closed by now
            continue
    return found


_WARDEN = _Warden()


def mark_process() -> None:
    """Put the mark in this process's own environment, replacing a parent's: a child started with
    the inherited environment then carries it at no cost. Once, at start-up, while there is one
    thread (changing the environment races the C library's readers of it)."""
    os.environ[OWNER] = _WARDEN.owner
    _WARDEN.process_marked = True


def owned_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (by default a copy of this process's environment), marked; starts the warden."""
    return {**(os.environ if env is None else env), OWNER: _WARDEN.start()}


def inherited_env() -> dict[str, str] | None:
    """The `env` to start a child with that is to inherit this process's environment: None (as
    it is) once `mark_process` has run, else a marked copy. Starts the warden."""
    _WARDEN.start()
    return None if _WARDEN.process_marked else owned_env()
