"""Stop whatever is left of a local command: its process group, its session, and its marked processes.

A command runs as the leader of a new session and carries a mark in its environment that
everything it starts inherits. What is left of it is found by group, by session (jobs put in other
groups) and by mark (daemons that left the session with `setsid` or a double fork), then sent
SIGTERM and, past a grace period, SIGKILL.
"""

from __future__ import annotations

import os
import signal

import anyio
import anyio.to_thread
import structlog

from acp_agent.process.warden import carries, live_processes, signal_each

__all__ = ["stop_command", "stopped_note"]

log = structlog.get_logger(__name__)

_POLL_SECONDS = 0.05  # how often a dying process group is checked (no event exists for it)
_LISTED = 5  # leftover processes named in the result


def _signal_group(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _remains(pgid: int, mark: bytes) -> list[tuple[int, str]]:
    """(pid, name) of every live process of a command: in its group or session, or marked.

    Without /proc only the group can be seen (kill 0); zombies, which no signal reaches, do not
    count.
    """
    if not os.path.exists("/proc/self/stat"):
        return [(pgid, "?")] if _signal_group(pgid, 0) else []
    return live_processes(
        lambda proc_dir, fields: pgid in (int(fields[2]), int(fields[3])) or carries(proc_dir, mark)
    )


def _signal_all(pgid: int, pids: list[tuple[int, str]], sig: int) -> None:
    _signal_group(pgid, sig)
    signal_each(pids, sig)


async def _still_there(pgid: int, mark: bytes) -> list[tuple[int, str]]:
    return await anyio.to_thread.run_sync(_remains, pgid, mark, abandon_on_cancel=True)


async def _wait_gone(
    pgid: int, mark: bytes, seconds: float, *, seen: dict[int, str] | None = None
) -> list[tuple[int, str]]:
    """What still runs after up to `seconds` (empty once everything is gone).

    With `seen` (pid → name of what was sent SIGTERM already), a process that appears meanwhile
    (started by a dying parent, or by a sandbox still setting up) is sent SIGTERM too and added.
    """
    left = await _still_there(pgid, mark)
    with anyio.move_on_after(seconds):
        # No event tells when a set of processes is gone: polling is the only way to know.
        while left:
            if seen is not None:
                new = [(pid, name) for pid, name in left if pid not in seen]
                _signal_all(pgid, new, signal.SIGTERM)
                seen.update(new)
            await anyio.sleep(_POLL_SECONDS)
            left = await _still_there(pgid, mark)
    return left


async def stop_command(pgid: int, mark: bytes, grace: float) -> list[tuple[int, str]]:
    """SIGTERM what is left of a command, SIGKILL what outlives `grace`; returns what was left."""
    left = await _still_there(pgid, mark)
    if not left:
        return []
    _signal_all(pgid, left, signal.SIGTERM)
    seen = dict(left)
    remaining = await _wait_gone(pgid, mark, grace, seen=seen)
    if remaining:
        log.debug("shell.sigkill", pgid=pgid, pids=[pid for pid, _ in remaining])
        _signal_all(pgid, remaining, signal.SIGKILL)
        await _wait_gone(pgid, mark, 1.0)
    return list(seen.items())


def stopped_note(left: list[tuple[int, str]]) -> str:
    """The line the result gets when background processes outlived the command."""
    named = ", ".join(f"{name} ({pid})" for pid, name in left[:_LISTED])
    more = f" and {len(left) - _LISTED} more" if len(left) > _LISTED else ""
    return (
        f"[stopped {len(left)} background process(es) still running after the command ended: {named}{more}]"
    )
