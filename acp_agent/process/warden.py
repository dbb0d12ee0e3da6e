"""The warden: a process that outlives the agent just long enough to stop what the agent started.

The agent starts it once (`lifetime.py`), as `python -I -S <this file> NAME=ID`, with stdin the
reading end of a pipe whose writing end only the agent holds. When the agent is gone, however it
went (a SIGKILL included), that pipe reads EOF, and the warden stops every process whose
environment carries `NAME=ID`: SIGTERM, then SIGKILL to whatever outlives a grace period or
appears meanwhile, until none is left. Then it exits.

Only the standard library, so that it starts without the agent's packages and in a few ms. The
`/proc` reading here also serves `tools/shell/process_group.py`, which stops one command's leftovers.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable

__all__ = ["GRACE_SECONDS", "carries", "live_processes", "main", "signal_each", "sweep"]

GRACE_SECONDS = 2.0
"""From SIGTERM to SIGKILL, as for a command's leftovers (`RunCommand.kill_grace`)."""
_GIVE_UP_SECONDS = 10.0
"""SIGKILL rounds past the grace: only a process stuck in the kernel outlasts them."""
_POLL_SECONDS = 0.05  # no event tells when a set of processes is gone: polling is the only way


def carries(proc_dir: str, entry: bytes) -> bool:
    """Whether the process at `proc_dir` (`/proc/<pid>`) has `entry` (`NAME=value`) in its
    environment as it started; False when it is gone or not ours to read."""
    try:
        with open(os.path.join(proc_dir, "environ"), "rb") as f:
            return entry in f.read().split(b"\0")
    except OSError:
        return False


def live_processes(keep: Callable[[str, list[bytes]], bool]) -> list[tuple[int, str]]:
    """(pid, name) of every live process but this one that `keep(proc_dir, fields)` accepts.

    `fields` are those of `/proc/<pid>/stat` after the name: state, ppid, pgrp, session, … Zombies,
    which no signal reaches, are left out.
    """
    found = []
    me = os.getpid()
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit() or int(entry.name) == me:
                continue
            try:
                with open(os.path.join(entry.path, "stat"), "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2 :].split()
            if len(fields) < 4 or fields[0] in (b"Z", b"X") or not keep(entry.path, fields):
                continue
            name = stat[stat.find(b"(") + 1 : stat.rfind(b")")].decode("utf-8", "replace")
            found.append((int(entry.name), name))
    return found


def signal_each(processes: list[tuple[int, str]], sig: int) -> None:
    for pid, _ in processes:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            continue


def sweep(entry: bytes, grace: float = GRACE_SECONDS) -> dict[int, str]:
    """Stop every process carrying `entry`, and each that appears meanwhile; returns them."""
    termed: dict[int, str] = {}
    since = time.monotonic()
    while left := live_processes(lambda proc_dir, _: carries(proc_dir, entry)):
        spent = time.monotonic() - since
        if spent > grace + _GIVE_UP_SECONDS:
            break
        if spent < grace:
            new = [(pid, name) for pid, name in left if pid not in termed]
            signal_each(new, signal.SIGTERM)
            termed.update(new)
        else:
            signal_each(left, signal.SIGKILL)
            termed.update(left)
        time.sleep(_POLL_SECONDS)
    return termed


def main(argv: list[str]) -> int:
    """`warden.py NAME=ID`: wait for EOF on stdin, then sweep."""
    if len(argv) != 2 or "=" not in argv[1]:
        sys.stderr.write("usage: warden.py NAME=ID (stdin: a pipe its owner holds open)\n")
        return 2
    for sig in (signal.SIGINT, signal.SIGHUP):  # a terminal's signals are for the agent, not for us
        signal.signal(sig, signal.SIG_IGN)
    os.chdir("/")  # keep no directory of the user's busy while we wait
    while True:
        try:
            if not os.read(0, 4096):
                break
        except OSError:
            break
    sweep(os.fsencode(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
