"""The cwd check cannot be raced: a directory swapped for a symlink to the outside while the file
tools use it never lets a read or a write escape (issue 19, item 4). The long campaign (≥ 600
operations) is `bench/hostile.py race`; this keeps CI bounded."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.race import run_race

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux syscalls")


def test_no_read_or_write_escapes_while_a_directory_is_swapped_with_a_symlink(tmp_path: Path) -> None:
    """Text reads, writes and image reads (issue 29 item 4: 142/600 image reads escaped)."""
    counts = run_race(tmp_path, operations=300)
    assert counts.swaps > 100, counts  # the race really ran
    assert counts.reads == counts.writes == counts.image_reads == 100
    assert counts.escapes == 0, counts
