"""What a command names that its sandbox would otherwise keep out of its reach.

The sandbox gives a command a `/tmp`, `$TMPDIR` and `$XDG_RUNTIME_DIR` of its own (`bwrap.py`), so
the user's sockets there stay out of reach. That would also keep out an interpreter or a script
living there: a hook written as `/tmp/venv/bin/python /tmp/hooks/guard.py`, or a clone in `/tmp`
running its own tests. So the words of a command line that are absolute paths (`~` and `$HOME`
expanded) are looked at, and one under `/tmp` or `$TMPDIR` makes the entry right below that dir
reachable, read-only (`/tmp/venv`: an interpreter needs its whole tree), unless that entry is a
socket or holds one directly (tmux's, ssh-agent's, the X server's dirs), which stays private, as
does all of `$XDG_RUNTIME_DIR`.

A named path the sandbox hides (the agent's state and key, `tools/hidden.py`) or keeps private
that way is reported, so that a hook that cannot start for a reason of ours says which path and
why (`claude_code/hooks/hook_process.py`).
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MAX_LINE", "MAX_LISTED", "Reach", "command_words", "named_paths", "reach"]

MAX_LINE = 64 * 1024
"""What is read of a command line for the paths it names (a heredoc's megabyte names none)."""
MAX_LISTED = 4096
"""Entries of a named dir looked at for a socket; a larger dir counts as holding one."""
_HOME = re.compile(r"\$(?:HOME\b|\{HOME\})")


@dataclass(frozen=True, slots=True)
class Reach:
    """What the sandbox mounts for the paths a command names, and the first it cannot reach."""

    entries: tuple[Path, ...] = ()
    """Entries right below a private dir, bound read-only."""
    unreachable: str | None = None
    """`<path> …, which the sandbox …`: a named path that exists here but not inside."""


def command_words(command: str) -> list[str]:
    """The words of a shell command line (its first `MAX_LINE` characters), its operators (`;`,
    `&&`, `|`, `>`) apart; a line shlex cannot read (an open quote) is split on blanks."""
    command = command[:MAX_LINE]
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:
        return command.split()


def named_paths(words: Iterable[str], env: Mapping[str, str] | None = None) -> list[Path]:
    """The absolute paths among `words`, `~/` and `$HOME` expanded, normalised (links kept)."""
    home = (os.environ if env is None else env).get("HOME", "")
    found: dict[Path, None] = {}
    for word in words:
        if home:
            word = _HOME.sub(lambda _: home, word)
            if word == "~" or word.startswith("~/"):
                word = home + word[1:]
        if word.startswith("/") and "\0" not in word:
            found[Path(os.path.normpath(word))] = None
    return list(found)


def _inside(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def reach(
    paths: Sequence[Path],
    *,
    private: Sequence[Path],
    writable: Sequence[Path],
    hidden: Sequence[Path],
    closed: Sequence[Path] = (),
    whole: bool = False,
) -> Reach:
    """The read-only entries that make `paths` reachable, and the first that stays out of reach.

    `closed`: private dirs never opened (the user's runtime dir: sockets, and never an
    interpreter); `whole`: the command sees the whole disk but `hidden` (the user's own hooks):
    only those count. Paths that do not exist here are no business of the sandbox's.
    """
    entries: dict[Path, None] = {}
    for path in paths:
        if not os.path.lexists(path):
            continue
        resolved = Path(os.path.realpath(path))
        covering = next((h for h in hidden if _inside(path, h) or _inside(resolved, h)), None)
        if covering is not None and not any(_inside(r, covering) for r in writable):
            return Reach(tuple(entries), f"{path}, which the sandbox hides (the agent's own state and key)")
        if whole or any(_inside(path, root) for root in writable):
            continue
        inner = [d for d in private if d != path and _inside(path, d)]
        if not inner:
            continue
        below = max(inner, key=lambda d: len(d.parts))
        if any(_inside(below, d) for d in closed):
            return Reach(
                tuple(entries), f"{path}, which the sandbox keeps private ({below} holds the user's sockets)"
            )
        entry = below / path.parts[len(below.parts)]
        real = Path(os.path.realpath(entry))
        if real != entry and any(_inside(h, real) or _inside(real, h) for h in hidden):  # a link there
            return Reach(tuple(entries), f"{path}, which the sandbox hides (the agent's own state and key)")
        if _holds_socket(entry):
            return Reach(
                tuple(entries),
                f"{path}, which the sandbox keeps private ({entry} is or holds a socket, as the "
                "user's tmux, ssh-agent or X server dirs do)",
            )
        entries[entry] = None
    return Reach(tuple(entries))


def _holds_socket(entry: Path) -> bool:
    """`entry` (links followed) is a socket, or a dir with one among its first `MAX_LISTED`
    entries (or with more entries than that, or that cannot be listed)."""
    try:
        mode = os.stat(entry).st_mode
        if not stat.S_ISDIR(mode):
            return stat.S_ISSOCK(mode)
        with os.scandir(entry) as listing:
            for count, item in enumerate(listing):
                if count >= MAX_LISTED or stat.S_ISSOCK(item.stat(follow_symlinks=False).st_mode):
                    return True
    except OSError:
        return True  # unreadable: nothing to gain by binding it, and it might hold one
    return False
