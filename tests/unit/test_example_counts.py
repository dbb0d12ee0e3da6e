"""Every property test's example count goes through `examples()` (`support/examples.py`), so that
`make test` runs it in full and `make test-fast` a tenth of it: a literal count runs in full in both."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
LITERAL = re.compile(r"max_examples\s*=\s*(?!examples\()")


def test_no_property_test_fixes_its_example_count() -> None:
    fixed = [
        f"{path.relative_to(TESTS)}:{number}"
        for path in sorted(TESTS.rglob("*.py"))
        if path.name != "examples.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if LITERAL.search(line)
    ]
    assert not fixed, f"use max_examples=examples(N) (tests/support/examples.py): {fixed}"
