"""Where the files that grant live (commands, skills, agents, hooks, settings), found by identity.

A command file's `allowed-tools` and `!` lines run code at the next `/name`, a hook at Claude
Code's next tool call: writing one is as strong as running a command. Names catch
`.claude/commands/x.md` however it is spelled (`tools/files/sensitive.py`); but a `.claude` (or its
`commands`, or one command file) may be a link, and its target is then written under another name
while the commands reader reads it all the same (it only asks that a file resolve inside the
repository). So the places are found where the reader looks, from each root up to its repository's
top (and the user's `~/.claude`, and this agent's config dir), followed through their links, and
compared by device and inode, not by name: a case-insensitive disk or a `..` cannot hide them.

Blocking (stats and small directory listings, no file is opened): `sensitive_write` runs it in a
worker thread. The walk inside a place goes only as deep as its reader reads (`DEPTHS`), and at
most `MAX_ENTRIES` entries.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from acp_agent.user_dirs import user_config_dir, user_home

__all__ = ["MAX_ENTRIES", "UNGUARDED", "GrantPlaces", "grant_places"]

CLAUDE_GRANTS = ("commands", "skills", "agents", "hooks")
"""`.claude`'s directories whose files grant (and `.agents/skills`, and this agent's `commands`
and `skills`)."""
SETTINGS = ("settings.json", "settings.local.json")
"""`.claude`'s files that grant (hooks, permission rules, MCP servers)."""
UNGUARDED = "worktrees"
"""`.claude/worktrees/`: checkouts Claude Code makes, edited like any tree (as Claude Code has it)."""
DEPTHS = {"commands": 3, "agents": 2, "hooks": 2}
"""How deep the links below a grant directory are looked for: as deep as its readers read (the
commands reader: three levels of namespaces); a skill is its `SKILL.md` (`add_skills`)."""
MAX_ENTRIES = 2000
"""Entries looked at for links inside one place: more are not followed (the names still count)."""
_MAX_UP = 64

Identity = tuple[int, int]


@dataclass(slots=True)
class GrantPlaces:
    """The identities of the grant directories and files, and of `.claude` dirs as a whole
    (paths are strings here: this runs before every edit, and pathlib's parsing costs more than
    the stats)."""

    claude_dirs: set[Identity] = field(default_factory=set)
    """A `.claude`: all of it but `worktrees/`."""
    dirs: set[Identity] = field(default_factory=set)
    files: set[Identity] = field(default_factory=set)
    missing: set[str] = field(default_factory=set)
    """Where a link to nothing leads: writing there creates the grant."""

    def holds(self, resolved: Path) -> bool:
        """Whether writing `resolved` (a resolved path, which may not exist yet) changes a grant."""
        path = str(resolved)
        if path in self.missing or _identity(path) in self.files | self.dirs:
            return True
        for _ in range(_MAX_UP):
            directory, child = os.path.split(path)
            found = _identity(directory)
            if found in self.dirs or (found in self.claude_dirs and child.casefold() != UNGUARDED):
                return True
            if directory == path:
                return False
            path = directory
        return False

    def add(self, path: str, *, whole_claude: bool = False) -> os.stat_result | None:
        """`path` (followed through its links), if it exists; a link to nothing, where it leads."""
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            if os.path.islink(path):
                self.missing.add(os.path.realpath(path))
            return None
        identity = (info.st_dev, info.st_ino)
        if stat.S_ISDIR(info.st_mode):
            (self.claude_dirs if whole_claude else self.dirs).add(identity)
        elif not whole_claude:
            self.files.add(identity)
        return info

    def add_links_in(self, directory: str, depth: int) -> None:
        """The targets of the links below `directory`, `depth` levels down (at most MAX_ENTRIES)."""
        pending, seen = [(directory, 0)], 0
        while pending and seen < MAX_ENTRIES:
            current, level = pending.pop()
            for entry in _listed(current)[: MAX_ENTRIES - seen]:
                seen += 1
                if entry.is_symlink():
                    self.add(entry.path)
                elif level < depth and entry.is_dir(follow_symlinks=False):
                    pending.append((entry.path, level + 1))

    def add_skills(self, directory: str) -> None:
        """A skills directory: each skill's folder where it leads, and its SKILL.md if a link."""
        for entry in _listed(directory)[:MAX_ENTRIES]:
            if entry.is_symlink():
                self.add(entry.path)
            elif entry.is_dir(follow_symlinks=False) and os.path.islink(skill := entry.path + "/SKILL.md"):
                self.add(skill)


def _listed(directory: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as entries:
            return list(entries)
    except OSError:
        return []


def _identity(path: str) -> Identity | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_dev, info.st_ino


def _bases(roots: tuple[Path, ...], home: Path | None) -> list[str]:
    """The directories whose `.claude` and `.agents` are read: each root and its parents up to the
    repository's top (or home, or `/`), as the commands reader walks them, and home."""
    found: dict[str, None] = {}
    for root in roots:
        for directory in (root, *root.parents):
            found.setdefault(str(directory))
            if directory == home or os.path.lexists(directory / ".git"):
                break
    if home is not None:
        found.setdefault(str(home))
    return list(found)


def grant_places(roots: tuple[Path, ...]) -> GrantPlaces:
    """Every grant directory and file the session's readers see (`roots` resolved)."""
    places = GrantPlaces()
    for base in _bases(roots, user_home()):
        places.add(os.path.join(base, ".mcp.json"))  # the MCP servers Claude Code starts
        claude = os.path.join(base, ".claude")
        if places.add(claude, whole_claude=True) is not None:
            for name in SETTINGS:
                places.add(os.path.join(claude, name))
            for name in CLAUDE_GRANTS:
                _add_grant_dir(places, claude, name)
        _add_grant_dir(places, os.path.join(base, ".agents"), "skills")
    config = str(user_config_dir())
    for name in ("commands", "skills"):
        _add_grant_dir(places, config, name)
    return places


def _add_grant_dir(places: GrantPlaces, holder: str, name: str) -> None:
    directory = os.path.join(holder, name)
    info = places.add(directory)
    if info is None or not stat.S_ISDIR(info.st_mode):
        return
    if name == "skills":
        places.add_skills(directory)
    else:
        places.add_links_in(directory, DEPTHS[name])
