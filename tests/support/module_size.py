"""The modules over the style's size mark, said at the end of a run as a warning, never a failure.

Modules are sized by concept (docs/architecture.md, "Sizes"): past `MARK` lines, look for a second
concept inside; if there is none, the module stays whole. `tests/unit/test_module_size.py` hands the
list to the run's summary (as a test's user property, so it crosses pytest-xdist's workers), and
`report_long_modules` prints it there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["MARK", "PROPERTY", "long_modules", "report_long_modules"]

MARK = 400
"""Lines past which a module is named in the run's summary."""
PROPERTY = "long_modules"


def long_modules(package: Path, mark: int = MARK) -> dict[str, int]:
    """Each module of `package` over `mark` lines, by its path inside it, with its length."""
    return {
        str(path.relative_to(package)): lines
        for path in sorted(package.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > mark
    }


def report_long_modules(terminal: pytest.TerminalReporter) -> None:
    """A summary section naming the long modules that a test of this run found, if any."""
    found: dict[str, int] = {}
    for report in terminal.stats.get("passed", []):
        for name, value in report.user_properties:
            if name == PROPERTY:
                found.update(value)
    if found:
        terminal.write_sep("-", f"modules over {MARK} lines: look for a second concept inside")
        for module, lines in sorted(found.items(), key=lambda item: -item[1]):
            terminal.write_line(f"  {module}: {lines} lines")
