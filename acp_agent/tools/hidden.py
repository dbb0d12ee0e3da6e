"""The paths no tool shows: the agent's session journals, its stored key, the SDK's profiles and
the chosen platform's credential files (`hide_credential_files`), and the paths the user's
settings deny (`PathDenials`).

One list serves the command sandbox (each path covered by an empty mount, `tools/sandbox/bwrap.py`) and every
file tool: a path that resolves to one, or into one, is refused by `resolve_inside` (read, edit,
images, `@file`, a command's cwd), left out of listings and searches (`HiddenUnder`, whichever of
rg or the Python walk runs), and out of a skill's files (`skill.py`). A hidden path is invisible:
its content is never returned, and no answer names it.

Paths are compared once symlinks are resolved (so a link into a hidden dir, or `..`, leads to the
name compared), case-folded (on a case-insensitive disk `.CONFIG` is `.config`; on a case-sensitive
one, a folder differing only by case is hidden as well, which costs nothing real), and a regular
file with more than one name (a hard link) by identity, device and inode, with the files under the
hidden paths.

A settings deny on a path (`Read(./.env)`, `claude_code/`) rides along with the list
(`HiddenPaths.denials`): the same tools refuse it and leave it out of listings and searches, and
the refusal says which rule of which file denied it. Only the sandbox does not cover it (a glob is
no mount; Claude Code leaves commands to the sandbox too).
"""

from __future__ import annotations

import contextlib
import copy
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from acp_agent.user_dirs import user_config_dir, user_data_dir, user_keystore

__all__ = [
    "NOTHING_HIDDEN",
    "HiddenPaths",
    "HiddenUnder",
    "PathDenials",
    "agent_hidden_paths",
    "hide_credential_files",
]

MAX_IDENTITIES = 20_000
"""Files under the hidden paths looked at for hard links; past it, every file with two names on
their disk counts as hidden."""


class PathDenials(Protocol):
    """The paths the user's settings deny reading (and so editing): implemented in `session/`
    (D6) from the `Read(...)` deny rules."""

    def refusal(self, path: str) -> str | None:
        """The one-line refusal for `path` (absolute, '/'-separated, as written or as it resolves:
        either one denied is enough), e.g. "denied by .claude/settings.json: Read(./.env)"; None
        when no rule denies it."""
        ...


def _fold(path: Path | str) -> str:
    return str(path).casefold()


def _under(folded: str, parent: str) -> bool:
    return folded == parent or folded.startswith(parent.rstrip("/") + "/")


_CREDENTIAL_FILES: list[Path] = []
"""The chosen platform's credential files (`hide_credential_files`), hidden with the agent's own."""


def hide_credential_files(paths: Iterable[Path]) -> None:
    """Add the model platform's credential files (a Google credentials file) to what no tool and
    no command sees: called once, when the session layer is built (before any tool runs), as the
    credential variables left the environment at start-up (`model/sdk.py:take_env_keys`)."""
    _CREDENTIAL_FILES.extend(p for p in paths if p not in _CREDENTIAL_FILES)


def agent_hidden_paths(state_dir: Path | None) -> HiddenPaths:
    """The agent's own: its state dir (the journals), its config dir and the key stored there, the
    Anthropic SDK's profile dir (`ANTHROPIC_CONFIG_DIR`, else `~/.config/anthropic`), and the model
    platform's credential files."""
    paths = [state_dir or user_data_dir(), user_config_dir(), user_keystore(), *_CREDENTIAL_FILES]
    sdk = os.environ.get("ANTHROPIC_CONFIG_DIR")
    if sdk:
        paths.append(Path(sdk))
    else:
        with contextlib.suppress(RuntimeError):  # no home directory to speak of
            paths.append(Path.home() / ".config" / "anthropic")
    return HiddenPaths.of(paths)


def _outermost(paths: Iterable[Path]) -> tuple[Path, ...]:
    unique = list(dict.fromkeys(paths))
    folded = [_fold(p) for p in unique]
    return tuple(
        p for p, f in zip(unique, folded, strict=True) if not any(o != f and _under(f, o) for o in folded)
    )


@dataclass(frozen=True, slots=True)
class HiddenPaths:
    """Absolute paths, each as given and as it resolves (both count)."""

    paths: tuple[Path, ...] = ()
    denials: PathDenials | None = field(default=None, compare=False)
    """The settings' path denies, refused and left out with the hidden paths (None: none)."""
    _folded: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _tops: tuple[Path, ...] = field(init=False, repr=False, compare=False)
    """`covered()` when the list was made: where a hard link's twin is looked for."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_folded", tuple(map(_fold, self.paths)))
        object.__setattr__(self, "_tops", self.covered())

    @classmethod
    def of(cls, given: Iterable[Path]) -> HiddenPaths:
        """`given` made absolute, each as written and resolved, once ("/" is never one)."""
        absolute = [Path(os.path.abspath(p)) for p in given]
        resolved = [Path(os.path.realpath(p)) for p in absolute]
        return cls(tuple(dict.fromkeys(p for p in [*resolved, *absolute] if p != Path(p.anchor))))

    def with_denials(self, denials: PathDenials | None) -> HiddenPaths:
        """The same hidden paths (the same list: where they resolved when it was made), with the
        settings' path denies."""
        if denials is self.denials:
            return self
        derived = copy.copy(self)  # not made anew: `covered()` resolves every path again (~0.5 ms)
        object.__setattr__(derived, "denials", denials)
        return derived

    def refusal(self, *paths: Path | str) -> str | None:
        """The settings' refusal of the first of `paths` a deny rule names, or None."""
        if self.denials is None:
            return None
        return next((r for p in paths if (r := self.denials.refusal(str(p))) is not None), None)

    def hides(self, path: Path) -> bool:
        """`path` (absolute, resolved) is a hidden path or lies inside one."""
        if not self._folded:
            return False
        folded = _fold(path)
        return any(_under(folded, hidden) for hidden in self._folded)

    def under(self, top: Path) -> HiddenUnder:
        """What a listing or search of the directory `top` (resolved) must leave out."""
        folded = _fold(top).rstrip("/") + "/"
        inside = tuple(h[len(folded) :] for h in self._folded if h.startswith(folded))
        device = _device(top)
        shared = device is not None and any(_device(t) == device for t in self._tops)
        return HiddenUnder(
            inside, self if shared else NOTHING_HIDDEN, self.denials, str(top).rstrip("/") + "/"
        )

    def around(self, directory: Path) -> HiddenPaths:
        """Without the hidden paths that hold `directory` (a skill the user keeps in the agent's
        config dir reads its own files; the key beside it stays hidden)."""
        folded = _fold(directory)
        kept = tuple(p for p, f in zip(self.paths, self._folded, strict=True) if not _under(folded, f))
        if len(kept) == len(self.paths):  # the usual case (a memory file in the workspace): the same list
            return self
        return HiddenPaths(kept, self.denials)

    def covered(self) -> tuple[Path, ...]:
        """What the sandbox covers: the outermost of the hidden paths as they resolve now (a
        mount on a symlink would land where it points)."""
        return _outermost([Path(os.path.realpath(p)) for p in self.paths])

    def linked(self, info: os.stat_result) -> bool:
        """A regular file with these stats is a hidden file under another name (a hard link)."""
        if info.st_nlink < 2 or not stat.S_ISREG(info.st_mode) or not self.paths:
            return False
        same_disk = [p for p in self._tops if _device(p) == info.st_dev]
        return bool(same_disk) and _known(same_disk, (info.st_dev, info.st_ino))


NOTHING_HIDDEN = HiddenPaths()


def _device(path: Path) -> int | None:
    try:
        return os.stat(path).st_dev
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class _Identities:
    """The files under some hidden paths, by device and inode, and the directories' mtimes then."""

    found: frozenset[tuple[int, int]]
    cut: bool
    """More than MAX_IDENTITIES files: every file asked about counts as one of them."""
    mtimes: tuple[tuple[str, int], ...]

    def current(self) -> bool:
        """No directory has gained or lost an entry since (one stat each)."""
        try:
            return all(os.stat(d, follow_symlinks=False).st_mtime_ns == m for d, m in self.mtimes)
        except OSError:
            return False


_identities: dict[tuple[Path, ...], _Identities] = {}
"""Kept between calls: a tree of journals is walked again only once a directory in it changed."""


def _known(tops: list[Path], identity: tuple[int, int]) -> bool:
    """`identity` is a file under `tops` (or too many files are there to tell: then True)."""
    key = tuple(tops)
    known = _identities.get(key)
    if known is None or not known.current():
        known = _identities[key] = _walk_identities(tops)
    return known.cut or identity in known.found


def _walk_identities(tops: list[Path]) -> _Identities:
    found: set[tuple[int, int]] = set()
    mtimes: list[tuple[str, int]] = []
    for top in tops:
        for directory, _, files in os.walk(top, followlinks=False):
            with contextlib.suppress(OSError):
                mtimes.append((directory, os.stat(directory, follow_symlinks=False).st_mtime_ns))
            for name in files:
                if len(found) >= MAX_IDENTITIES:
                    return _Identities(frozenset(found), True, tuple(mtimes))
                with contextlib.suppress(OSError):
                    info = os.stat(os.path.join(directory, name), follow_symlinks=False)
                    found.add((info.st_dev, info.st_ino))
        with contextlib.suppress(OSError):  # a hidden path that is a file: its directory's mtime
            info = os.stat(top, follow_symlinks=False)
            found.add((info.st_dev, info.st_ino))
            if not stat.S_ISDIR(info.st_mode):
                mtimes.append((str(top.parent), os.stat(top.parent).st_mtime_ns))
    return _Identities(frozenset(found), False, tuple(mtimes))


@dataclass(frozen=True, slots=True)
class HiddenUnder:
    """The hidden paths under one listed or searched directory, relative to it and case-folded."""

    inside: tuple[str, ...] = ()
    hidden: HiddenPaths = NOTHING_HIDDEN
    """Where a file with two names is looked up; nothing when no hidden path is on the directory's
    disk (a hard link cannot cross disks), which spares a stat per file found."""
    denials: PathDenials | None = None
    """The settings' path denies: an entry one of them names is left out too."""
    top: str = "/"
    """The directory, absolute, ending in '/': what `denials` are asked about is `top + relative`."""
    _heads: frozenset[str] = field(init=False, repr=False, compare=False)
    """The first name of each path in `inside`: most entries are ruled out by it alone."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_heads", frozenset(h.partition("/")[0] for h in self.inside))

    def leaves_out(self, relative: str) -> bool:
        """The entry at `relative` ('/'-separated, under the directory) is or lies in a hidden path,
        or a settings deny names it."""
        if self.denials is not None and self.denials.refusal(self.top + relative) is not None:
            return True
        if not self.inside or relative.partition("/")[0].casefold() not in self._heads:
            return False
        folded = relative.casefold()
        return any(_under(folded, hidden) for hidden in self.inside)

    def linked(self, path: str) -> bool:
        """The file at `path` is a hidden file under another name (one stat)."""
        if not self.hidden.paths:
            return False
        try:
            return self.hidden.linked(os.stat(path, follow_symlinks=False))
        except OSError:
            return False
