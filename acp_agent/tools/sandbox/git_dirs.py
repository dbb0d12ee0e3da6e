"""Where a workspace's repository keeps what git runs: the parts a sandboxed command may not write.

`git commit` writes the git dir's objects, index, refs and logs, never its hooks or its config.
What makes git run programs later is exactly those two: `hooks/` (run at each commit, checkout,
merge…) and `config` (`core.fsmonitor` at every `git status`, `core.pager`, aliases, filters,
`core.hooksPath`). So the sandbox (`command_sandbox.py`) binds the git dir writable, as its own mount point
(a mount point cannot be renamed away and rebuilt), and the parts listed here read-only over it.

Found the way git finds them: the nearest `.git` from the root upwards (only if this user owns it
and the git dirs it names, as git requires), a `gitdir:` file followed (worktrees, submodules), its
`commondir`, the `hooks` and `config` of that common dir, a worktree's
own `config.worktree`, the git dirs of submodules under `modules/`, and an existing directory named
by `core.hooksPath` in the repository's or the user's git config (`[include]` files are not read).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

__all__ = ["GitDirs", "find_git_dirs", "hooks_path_setting"]

_MODULE_DIRS = 200
"""Submodule git dirs looked at, at most (each costs a few stats per command)."""
_MODULE_DEPTH = 6


@dataclass(frozen=True, slots=True)
class GitDirs:
    """A repository's git dirs as the sandbox binds them."""

    writable: tuple[Path, ...]
    """The git dir and its common dir (a worktree's are two): objects, index, refs, logs."""
    runs_code: tuple[Path, ...]
    """Existing hooks dirs, config files and `.git` files: read-only unless the user allows."""


def _read_small(path: Path, limit: int = 256 * 1024) -> str | None:
    """A regular file's first bytes as text; None for anything else (a FIFO never blocks us)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _gitdir_of(dot_git: Path) -> Path | None:
    """The git dir a `.git` names: itself if a directory, the target of a `gitdir:` file."""
    if dot_git.is_dir():
        return dot_git.resolve()
    text = _read_small(dot_git, 4096)
    if text is None:
        return None
    first = text.splitlines()[0] if text else ""
    if not first.startswith("gitdir:"):
        return None
    target = Path(first.removeprefix("gitdir:").strip())
    target = target if target.is_absolute() else dot_git.parent / target
    return target.resolve() if target.is_dir() else None


def _common_dir(git_dir: Path) -> Path:
    named = (_read_small(git_dir / "commondir", 4096) or "").strip()
    if not named:
        return git_dir
    common = Path(named) if os.path.isabs(named) else git_dir / named
    return common.resolve() if common.is_dir() else git_dir


def hooks_path_setting(config_text: str) -> str | None:
    """The last `core.hooksPath` value of a git config file's text (no includes, no escapes)."""
    section, found = "", None
    for raw in config_text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            close = line.find("]")
            section = line[1:close].strip().casefold() if close > 0 else ""
            line = line[close + 1 :].strip() if close > 0 else ""
        if not line or line[0] in "#;" or section != "core" or "=" not in line:
            continue
        key, value = line.split("=", 1)
        if key.strip().casefold() == "hookspath":
            value = value.split(" #", 1)[0].split(" ;", 1)[0].strip()
            found = value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value
    return found or None


def _user_git_configs() -> list[Path]:
    home = Path.home()
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(home / ".config")
    return [home / ".gitconfig", Path(xdg) / "git" / "config"]


def _hooks_dirs(configs: list[Path], work_tree: Path) -> list[Path]:
    """The directory `core.hooksPath` names, if it exists (relative paths: from the work tree)."""
    value = None
    for config in configs:  # later files win, as in git: user, then repository
        value = hooks_path_setting(_read_small(config) or "") or value
    if value is None:
        return []
    path = Path(os.path.expanduser(value))
    path = path if path.is_absolute() else work_tree / path
    return [path.resolve()] if path.is_dir() else []


def _module_git_dirs(common: Path) -> list[Path]:
    """Submodule git dirs under `modules/` (each has a HEAD), breadth first and bounded."""
    found: list[Path] = []
    level = [common / "modules"]
    for _ in range(_MODULE_DEPTH):
        below: list[Path] = []
        for directory in level:
            try:
                entries = [e for e in os.scandir(directory) if e.is_dir(follow_symlinks=False)]
            except OSError:
                continue
            for entry in entries:
                path = Path(entry.path)
                if (path / "HEAD").is_file():
                    found.append(path)
                    below.append(path / "modules")
                else:
                    below.append(path)  # a module name with slashes: modules/a/b
                if len(found) >= _MODULE_DIRS:
                    return found
        level = below
    return found


def _ours(path: Path, *, lstat: bool = False) -> bool:
    """Owned by this user, as git itself requires (`safe.directory`): a `.git` another user planted
    in a shared parent (`/tmp/.git: gitdir: /home/you`) must not open a directory for writing."""
    if not hasattr(os, "getuid"):
        return True
    try:
        return (path.lstat() if lstat else path.stat()).st_uid == os.getuid()
    except OSError:
        return False


def find_git_dirs(root: Path) -> GitDirs | None:
    """The repository `root` is in (its nearest `.git` upwards), or None outside any repository."""
    for directory in (root, *root.parents):
        dot_git = directory / ".git"
        if os.path.lexists(dot_git):
            break
    else:
        return None
    git_dir = _gitdir_of(dot_git)
    if git_dir is None or not _ours(dot_git, lstat=True) or not _ours(git_dir):
        return None
    common = _common_dir(git_dir)
    if not _ours(common):
        return None
    runs_code: list[Path] = [] if dot_git.is_dir() else [dot_git.resolve()]  # a `gitdir:` file
    candidates = [common / "hooks", common / "config", git_dir / "config", git_dir / "config.worktree"]
    for module in _module_git_dirs(common):
        candidates += [module / "hooks", module / "config"]
    candidates += _hooks_dirs([*_user_git_configs(), common / "config"], directory)
    for path in candidates:
        if os.path.lexists(path):
            resolved = path.resolve()
            if resolved.exists() and resolved not in runs_code:
                runs_code.append(resolved)
    writable = (git_dir,) if common == git_dir else (git_dir, common)
    return GitDirs(writable, tuple(runs_code))
