"""Code run in a fresh interpreter from the repository's root, answering with a JSON line.

What a test checks about imports, the collector or the SDK's lean import must not see the test
process's own modules: the code runs in its own interpreter and prints its answer last.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]


def fresh_answer(
    code: str,
    args: Sequence[str] = (),
    *,
    stdin: str = "",
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> Any:
    """Run `code` (dedented) with `args` as `sys.argv[1:]`; its last stdout line, parsed as JSON."""
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=timeout,
        check=True,
        env=None if env is None else dict(env),
        input=stdin,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])
