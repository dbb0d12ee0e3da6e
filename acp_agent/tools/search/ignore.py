"""Which files a listing or search sees: ignore rules as ripgrep applies them, in pure Python.

This is the fallback for when no `rg` binary is found, so it copies ripgrep's choices exactly
(`rg --no-require-git`, so the rules hold outside a git repository too): `.rgignore`, `.ignore`
and `.gitignore` in the walked directories and in every directory above them, `.git/info/exclude`
where a `.git` sits, and git's global `core.excludesFile`. A match in an earlier kind of file wins
over any match in a later kind; within a kind the deepest directory with a matching pattern wins;
within a file the last matching pattern wins (gitignore's rule, applied by `pathspec`). Hidden
entries are skipped unless a rule re-includes them or the caller asks for them, `.git` never shows,
and symlinks are neither listed nor followed, so a walk never leaves the tree. Entries come in tree
order (each directory's names sorted), the order of `rg --sort path`.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from acp_agent.errors import Stopped
from acp_agent.tools.globs import few_stars, gitignore_spec
from acp_agent.tools.hidden import HiddenUnder

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

__all__ = ["global_excludes_file", "names_hidden", "tree_key", "walk_files"]

# Per-directory ignore files, strongest first (ripgrep's order); .git/info/exclude comes after.
_IGNORE_FILES = (".rgignore", ".ignore", ".gitignore")
_EXCLUDES_FILE = re.compile(r"^\s*excludesfile\s*=\s*\"?\s*(\S+?)\s*\"?\s*$", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True, slots=True)
class _Level:
    """The ignore files of one directory: a spec per kind (None where that file is absent)."""

    base: str
    specs: tuple[GitIgnoreSpec | None, ...]


def _spec(path: Path) -> GitIgnoreSpec | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    spec = gitignore_spec.now().from_lines(few_stars(line) for line in text.splitlines())
    return spec if len(spec) else None


def _git_dir(directory: Path) -> Path | None:
    """The git directory of a checkout rooted at `directory` (a `.git` dir, or a worktree's file)."""
    dot_git = directory / ".git"
    if dot_git.is_dir():
        return dot_git
    try:
        first = dot_git.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    git_dir = (directory / first.removeprefix("gitdir:").strip()).resolve()
    try:  # a linked worktree keeps info/exclude in the common dir
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
        return (git_dir / common).resolve()
    except OSError:
        return git_dir


def _level(directory: str) -> _Level | None:
    here = Path(directory)
    specs = [_spec(here / name) for name in _IGNORE_FILES]
    git_dir = _git_dir(here) if os.path.lexists(here / ".git") else None
    specs.append(_spec(git_dir / "info" / "exclude") if git_dir else None)
    return _Level(directory, tuple(specs)) if any(specs) else None


def global_excludes_file() -> Path | None:
    """git's `core.excludesFile` as ripgrep finds it: the user's git config, else the XDG default."""
    home = Path.home()
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    found: str | None = None
    for config in (xdg / "git" / "config", home / ".gitconfig"):  # the later one wins
        try:
            match = _EXCLUDES_FILE.search(config.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        if match:
            found = match.group(1)
    if found:
        return Path(os.path.expanduser(found))
    default = xdg / "git" / "ignore"
    return default if default.is_file() else None


def names_hidden(pattern: str) -> bool:
    """True when a glob names a hidden entry (a segment starting with '.'), so hidden ones count."""
    return any(part.startswith(".") and part not in (".", "..") for part in pattern.split("/"))


def tree_key(relative: str) -> str:
    """Sort key giving tree order (a directory's entries sorted by name), as `rg --sort path`.

    NUL sorts before every character a name can hold, so 'a/b' comes before 'a.txt'.
    """
    return relative.replace("/", "\0")


class _Walk:
    def __init__(
        self,
        top: Path,
        *,
        include_ignored: bool,
        include_hidden: bool,
        stop: threading.Event | None,
        withheld: HiddenUnder,
    ) -> None:
        self.include_ignored = include_ignored
        self.include_hidden = include_hidden
        self.stop = stop
        self.withheld = withheld
        self.global_spec: GitIgnoreSpec | None = None
        self.global_base = str(top)
        if not include_ignored and (excludes := global_excludes_file()) is not None:
            self.global_spec = _spec(excludes)

    def ancestors(self, top: Path) -> tuple[_Level, ...]:
        """The ignore levels of `top` and of every directory above it, outermost first."""
        if self.include_ignored:
            return ()
        levels = [lv for d in reversed([top, *top.parents]) if (lv := _level(str(d))) is not None]
        # ripgrep matches a rule against each entry itself, while pathspec also matches whatever
        # lies below a matched directory: a level that ignores the named `top` (or a directory on
        # the way to it) would hide all of it, so it is left out, as ripgrep in effect does.
        return tuple(lv for lv in levels if lv.base == str(top) or not self._hides(lv, top))

    @staticmethod
    def _hides(level: _Level, top: Path) -> bool:
        below = Path(os.path.relpath(top, level.base)).parts
        dirs = ["/".join(below[: i + 1]) + "/" for i in range(len(below))]
        return any(spec is not None and spec.check_file(d).include for spec in level.specs for d in dirs)

    def ignored(self, chain: tuple[_Level, ...], path: str, is_dir: bool) -> bool | None:
        """True ignored, False re-included by a `!` rule, None when no rule speaks."""
        suffix = "/" if is_dir else ""
        for kind in range(len(_IGNORE_FILES) + 1):
            for level in reversed(chain):
                spec = level.specs[kind]
                if spec is not None:
                    verdict = spec.check_file(path[len(level.base) + 1 :] + suffix).include
                    if verdict is not None:
                        return verdict
        if self.global_spec is not None and path.startswith(self.global_base + os.sep):
            return self.global_spec.check_file(path[len(self.global_base) + 1 :] + suffix).include
        return None

    def files(self, directory: str, relative: str, chain: tuple[_Level, ...]) -> Iterator[tuple[str, str]]:
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if self.stop is not None and self.stop.is_set():
                raise Stopped
            name = entry.name
            try:
                if name == ".git" or entry.is_symlink():
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
                if not is_dir and not entry.is_file(follow_symlinks=False):
                    continue  # sockets, fifos, devices: rg --files skips them too
            except OSError:
                continue
            verdict = None if self.include_ignored else self.ignored(chain, entry.path, is_dir)
            if verdict or (verdict is None and not self.include_hidden and name.startswith(".")):
                continue
            if self.withheld.leaves_out(relative + name):
                continue  # the agent's own paths: never entered
            if is_dir:
                level = None if self.include_ignored else _level(entry.path)
                yield from self.files(entry.path, f"{relative}{name}/", (*chain, level) if level else chain)
            else:
                yield entry.path, relative + name


def walk_files(
    top: Path,
    *,
    include_ignored: bool = False,
    include_hidden: bool = False,
    stop: threading.Event | None = None,
    withheld: HiddenUnder | None = None,
) -> Iterator[tuple[str, str]]:
    """Yield (absolute path, path relative to `top`) of each file `rg --files` would list, in tree order.

    `top` itself is never filtered (a path the caller names is always walked, as in ripgrep);
    `withheld` (the agent's hidden paths under `top`) is never entered. Raises Stopped once `stop`
    is set.
    """
    walk = _Walk(
        top,
        include_ignored=include_ignored,
        include_hidden=include_hidden,
        stop=stop,
        withheld=withheld or HiddenUnder(),
    )
    yield from walk.files(str(top), "", walk.ancestors(top))
