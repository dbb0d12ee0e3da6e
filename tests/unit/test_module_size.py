"""Module size is a warning, not a rule: the modules over 400 lines are named in the run's summary.

A split that always changes together is one concept in two files, so no count decides where code
goes (issue 36 item 2); the summary line asks for a look (`tests/support/module_size.py`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.module_size import MARK, PROPERTY, long_modules

PACKAGE = Path(__file__).resolve().parents[2] / "acp_agent"


def test_long_modules_are_named_in_the_summary(record_property: pytest.RecordProperty) -> None:
    record_property(PROPERTY, long_modules(PACKAGE))


def test_the_list_names_exactly_the_modules_past_the_mark(tmp_path: Path) -> None:
    (tmp_path / "room").mkdir()
    (tmp_path / "short.py").write_text("x = 1\n" * MARK)
    (tmp_path / "room" / "long.py").write_text("x = 1\n" * (MARK + 1))
    assert long_modules(tmp_path) == {"room/long.py": MARK + 1}


def test_the_summary_shows_them(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        "from tests.support.module_size import report_long_modules\n"
        "def pytest_terminal_summary(terminalreporter):\n"
        "    report_long_modules(terminalreporter)\n"
    )
    pytester.makepyfile(
        "def test_x(record_property):\n    record_property('long_modules', {'session/manager.py': 407})\n"
    )
    result = pytester.runpytest_inprocess("-p", "no:randomly")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*modules over 400 lines*", "  session/manager.py: 407 lines"])
