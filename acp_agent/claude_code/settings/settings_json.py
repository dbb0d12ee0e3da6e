"""Claude Code's JSON files read as Claude Code reads them, and where the user's live.

Strict JSON, at most 1 MiB, a regular file opened without waiting on a FIFO; a file that is not
one is skipped with a warning that says why. Light on purpose (json, os, stat): the agent reads
the managed policy and the user's settings with it at start-up, before `initialize` is answered
(`agent_settings.py`), and `settings_files.py` reads every session's files with it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp_agent.claude_code.settings import json_text

__all__ = ["MAX_SETTINGS_BYTES", "claude_config_dir", "parse_json_object", "read_json_object"]

MAX_SETTINGS_BYTES = 1 << 20


def claude_config_dir(home: Path | None) -> Path | None:
    """The user's Claude Code directory: `$CLAUDE_CONFIG_DIR`, else `~/.claude`."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    if configured:
        return Path(os.path.expanduser(configured))
    return home / ".claude" if home is not None else None


def read_json_object(
    path: Path, shown: str, warn: Callable[[str], None], max_bytes: int = MAX_SETTINGS_BYTES
) -> dict[str, Any] | None:
    """A JSON object file of Claude Code's (strict JSON, at most `max_bytes`, a regular file opened
    without waiting on a FIFO); None when it is absent or skipped (with a warning saying why)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if not isinstance(exc, NotADirectoryError):
            warn(f"{shown}: not read ({exc.strerror or exc})")
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # before fdopen, which refuses a directory
            warn(f"{shown}: skipped (not a regular file)")
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            raw = f.read(max_bytes + 1)
    except OSError as exc:  # an I/O error
        warn(f"{shown}: not read ({exc.strerror or exc})")
        return None
    finally:
        os.close(fd)
    if len(raw) > max_bytes:
        warn(f"{shown}: skipped (larger than {max_bytes // 1024} KiB)")
        return None
    return parse_json_object(raw, shown, warn)


def parse_json_object(raw: bytes, shown: str, warn: Callable[[str], None]) -> dict[str, Any] | None:
    """`raw` as a strict JSON object, nested at most `json_text.MAX_DEPTH` levels; None when it is
    not one (with a warning saying why)."""
    try:
        data = json_text.loads(raw.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError included
        warn(f"{shown}: skipped (not valid JSON: {str(exc)[:120]})")
        return None
    if not isinstance(data, dict):
        warn(f"{shown}: skipped (not a JSON object)")
        return None
    return data
