"""The journal directory's check, light enough to run before `initialize` is answered.

`initialize` advertises `session/load` and the other journal methods only when sessions can be
kept, so the state dir is checked at start; the journal machinery (`store.py`, `turn/journal/entries.py`)
is imported after the handshake (docs/decisions.md D4). A directory that cannot be used is
`StateDirError`: the agent still serves, without journals (issue 19).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from acp_agent.errors import AgentError

__all__ = ["StateDirError", "prepare_state_dir"]


class StateDirError(AgentError, OSError):
    """The journal directory cannot be used (not a directory, not writable)."""


def prepare_state_dir(directory: Path) -> None:
    """Create `directory` (0700) or check it; raises StateDirError saying what is wrong with it."""
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not directory.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "not a directory")
        os.chmod(directory, 0o700)
        if not os.access(directory, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, "not writable")
    except OSError as exc:
        raise StateDirError(
            exc.errno, f"the state dir {directory} cannot hold session journals: {exc.strerror or exc}"
        ) from exc
