"""A session's roots: its cwd and the client's additional directories, checked once.

ACP's `additionalDirectories` (advertised as `sessionCapabilities.additionalDirectories`) widen
where the tools may work without moving the cwd, which stays the base of relative paths. Each
must be an absolute path to an existing directory (-32602 names the bad one); `null` means none.
On session/load and session/resume the request's list is the session's whole list: omitted or
empty, no additional root is active (the schema's words), whatever the journal held before. The
journal keeps the list in force (the header, then a `RootsEntry` when a load changes it), so
session/list reports it and an editor can send it back.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from acp_agent.errors import RpcError

__all__ = ["extra_roots", "session_root"]


def session_root(cwd: str) -> Path:
    """The cwd, resolved (-32602 when it is not an existing directory)."""
    root = Path(cwd)
    if not root.is_dir():
        raise RpcError.invalid_params(
            f"Invalid params: cwd: {cwd!r} is not an existing directory", {"cwd": cwd}
        )
    return root.resolve()


def extra_roots(directories: Sequence[str] | None, cwd: Path) -> tuple[Path, ...]:
    """The additional roots, resolved, in order, each once (the cwd itself left out).

    Raises:
        RpcError: -32602 naming the first entry that is not an existing directory.
    """
    found: list[Path] = []
    for index, directory in enumerate(directories or ()):
        path = Path(directory)
        if not path.is_dir():
            raise RpcError.invalid_params(
                f"Invalid params: additionalDirectories.{index}: {directory!r} is not an existing directory",
                {"additionalDirectories": directory},
            )
        found.append(path.resolve())
    return tuple(path for path in dict.fromkeys(found) if path != cwd)
