"""Path confinement: every path a tool touches must resolve inside the session's roots.

The roots are the cwd, the base of relative paths, and the client's additional directories
(ACP `additionalDirectories`), reached by absolute paths; every guard applies to each alike.

Resolution follows symlinks the way the OS will (including dangling ones and the final
component), so a link that points out of the working directory is refused before any I/O on it.
A name the model was shown with a `\\xNN` escape (a non-UTF-8 file name, see `tools/shown.py`)
resolves back to the real file when no file has the escaped name itself. A path that resolves to
one of the agent's hidden paths (`tools/hidden.py`), or is a hard link to a file there, is refused
inside the roots as outside them, and the refusal never names where it led. A path the user's
settings deny (`HiddenPaths.denials`), as written or where it leads, is refused with the rule's
one line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from acp_agent.errors import PathDenied, PathOutsideCwd, ToolError
from acp_agent.tools.globs import PathGlob, path_glob
from acp_agent.tools.hidden import NOTHING_HIDDEN, HiddenPaths
from acp_agent.tools.shown import has_escape, unshown

__all__ = [
    "Roots",
    "display_path",
    "name_glob",
    "resolve_inside",
]

Roots = Path | Sequence[Path]


def _given_roots(roots: Roots) -> tuple[Path, ...]:
    return (roots,) if isinstance(roots, Path) else tuple(roots)


def _real_roots(roots: Roots) -> tuple[Path, ...]:
    seq = _given_roots(roots)
    if not seq:
        raise ValueError("at least one root is required")
    for root in seq:
        if not root.is_absolute():
            raise ValueError(f"root must be absolute: {root}")
    return tuple(Path(os.path.realpath(root)) for root in seq)


def _inside(path: Path, roots: tuple[Path, ...]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def resolve_inside(roots: Roots, path: str, *, hidden: HiddenPaths = NOTHING_HIDDEN) -> Path:
    """Resolve `path` (relative to the first root) and insist the result lies inside a root and
    outside the `hidden` paths.

    Raises:
        PathOutsideCwd: `..`, an absolute path, or a symlink anywhere along the path leads out,
            or to a hidden path (or the file is a hidden one under another name).
        PathDenied: a settings deny rule names the path, or where it leads.
        ToolError: the path is not a usable string (empty, or contains a NUL byte).
    """
    if not isinstance(path, str) or not path:
        raise ToolError("path must be a non-empty string")
    if "\0" in path:
        raise ToolError(f"path {path!r} contains a NUL byte")
    real_roots = _real_roots(roots)
    candidate = _real_name(real_roots[0], path)
    try:
        resolved = Path(os.path.realpath(candidate))
    except (OSError, ValueError) as exc:  # pragma: no cover - realpath is non-strict
        raise ToolError(f"cannot resolve path {path!r}: {exc}") from exc
    if hidden.paths and (hidden.hides(resolved) or _linked(hidden, resolved)):
        raise PathOutsideCwd(
            f"path {path!r} leads to the agent's own private files (its session journals, stored "
            "key or the SDK's profiles), which the tools do not open"
        )
    lexical = Path(os.path.normpath(candidate))
    if hidden.denials is not None and (refusal := hidden.refusal(lexical, resolved)) is not None:
        raise PathDenied(refusal)
    if _inside(resolved, real_roots):
        return resolved
    where = ", ".join(str(r) for r in real_roots)
    given = tuple(Path(os.path.normpath(r)) for r in _given_roots(roots))
    if _inside(lexical, real_roots + given):
        raise PathOutsideCwd(
            f"path {path!r} resolves through a symlink to {resolved}, "
            f"which is outside the working directory ({where})"
        )
    raise PathOutsideCwd(f"path {path!r} is outside the working directory ({where})")


def _linked(hidden: HiddenPaths, path: Path) -> bool:
    try:
        return hidden.linked(os.stat(path))
    except (OSError, ValueError):
        return False


def _real_name(root: Path, path: str) -> Path:
    """`path` under `root`; a shown `\\xNN` name is read back as its byte when that is what exists."""
    candidate = root / path
    if not has_escape(path) or os.path.lexists(candidate):
        return candidate
    real = root / unshown(path)
    if os.path.lexists(real) or (os.path.isdir(real.parent) and not os.path.isdir(candidate.parent)):
        return real
    return candidate


def display_path(roots: Roots, path: Path) -> str:
    """`path` relative to the first root, the cwd (POSIX separators), else absolute: a path in
    another root is shown whole, so it names that file when given back (relative paths are the
    cwd's)."""
    root = _real_roots(roots)[0]
    if path == root:
        return "."
    if path.is_relative_to(root):
        return path.relative_to(root).as_posix()
    return str(path)


def name_glob(pattern: str) -> PathGlob:
    """The model's glob over '/'-separated relative paths (`globs.py`: `*` and `?` within one
    segment, `**/` zero or more directories, a trailing `**` everything below, `[...]` a class),
    matched in time linear in the path whatever the pattern says."""
    try:
        return path_glob(pattern)
    except ValueError as exc:
        raise ToolError(f"invalid glob {pattern!r}: {exc}") from exc
