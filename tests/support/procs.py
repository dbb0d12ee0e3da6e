"""Processes as /proc shows them: the one check the tests make of a pid they started."""

from __future__ import annotations

from pathlib import Path

__all__ = ["alive"]


def alive(pid: int) -> bool:
    """Whether `pid` still runs: gone, a zombie (Z) or dead (X) all count as not running."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"
