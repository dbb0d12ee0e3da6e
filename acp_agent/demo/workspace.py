"""The offline demo's parts: the cassette's path, the model it names, and a scratch copy of the sample.

`--model demo` replays `demo.jsonl` through the real SDK (no key, no network); the smoke runner
copies `sample/` to a scratch workspace so the demo never edits the user's own files.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

__all__ = ["DEMO_MODEL", "DEMO_PROMPT", "cassette_path", "make_workspace", "sample_dir"]

DEMO_MODEL = "demo"
DEMO_PROMPT = "The average test fails in this project. Find the bug and fix it."

_HERE = Path(__file__).resolve().parent


def cassette_path() -> Path:
    return _HERE / "demo.jsonl"


def sample_dir() -> Path:
    return _HERE / "sample"


def make_workspace(parent: Path | None = None) -> Path:
    """A fresh copy of the sample project in a scratch directory."""
    root = Path(tempfile.mkdtemp(prefix="acp-agent-demo-", dir=parent))
    shutil.copytree(sample_dir(), root, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    return root
