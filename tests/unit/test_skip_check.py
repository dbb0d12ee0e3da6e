"""No silent skips: a test skips only for a reason listed in `tests/support/skips.py`, and a run
with another skip, or more skips than `--max-skips`, fails (`support/skips.py`)."""

from __future__ import annotations

import re

import pytest

from tests.support import REPO_ROOT
from tests.support.skips import ALLOWED, allowed_reason

CONFTEST = """
import pytest
from tests.support.skips import register

def pytest_addoption(parser):
    parser.addoption("--max-skips", type=int, default=None)

def pytest_configure(config):
    register(config)
"""

TESTS = """
import pytest

def test_runs():
    pass

@pytest.mark.skipif(True, reason="reads /proc")
def test_listed():
    pass

@pytest.mark.xfail(reason="a known bug")
def test_expected_to_fail():
    assert False
"""


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_suite=TESTS)
    return pytester


def test_a_skip_for_a_listed_reason_passes_and_is_counted(suite: pytest.Pytester) -> None:
    result = suite.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=1, xfailed=1)
    result.stdout.fnmatch_lines(["1 skipped, 0 for a reason not listed"])


def test_a_skip_for_another_reason_fails_the_run_and_is_named(suite: pytest.Pytester) -> None:
    suite.makepyfile(test_more="import pytest\n\ndef test_quiet():\n    pytest.skip('schema not found')\n")
    result = suite.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*test_more.py::test_quiet: schema not found", "FAILED: 2 skipped, 1 for a reason not listed"]
    )


def test_more_skips_than_allowed_fail_the_run(suite: pytest.Pytester) -> None:
    result = suite.runpytest("-p", "no:cacheprovider", "--max-skips=0")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["FAILED: 1 skipped (at most 0 allowed), 0 for a reason not listed"])
    assert suite.runpytest("-p", "no:cacheprovider", "--max-skips=1").ret == pytest.ExitCode.OK


def test_a_failed_run_stays_failed(suite: pytest.Pytester) -> None:
    suite.makepyfile(test_more="def test_broken():\n    assert False\n")
    assert suite.runpytest("-p", "no:cacheprovider", "--max-skips=5").ret == pytest.ExitCode.TESTS_FAILED


_LITERAL = r"""\s*f?(["'])(?P<text>.*?)(?:\{|\1)"""  # a reason's text up to its first {field}
_MARKED = re.compile(r"(?:skipif|mark\.skip)\((?:[^()]|\([^()]*\))*?reason\s*=" + _LITERAL, re.DOTALL)
_CALLED = re.compile(r"pytest\.skip\(" + _LITERAL)
_UNWRITTEN = re.compile(r"""pytest\.skip\((?!\s*f?["'])|importorskip\(""")


def test_every_skip_written_in_the_suite_gives_a_listed_reason() -> None:
    """Also those that never fire here (a Linux machine runs what skips elsewhere)."""
    unlisted = []
    for path in sorted((REPO_ROOT / "tests").rglob("*.py")):
        if path.name == "test_skip_check.py":
            continue
        text, where = path.read_text(encoding="utf-8"), path.relative_to(REPO_ROOT)
        reasons = [m["text"] for pattern in (_MARKED, _CALLED) for m in pattern.finditer(text)]
        unlisted += [f"{where}: {reason!r}" for reason in reasons if not allowed_reason(reason)]
        unlisted += [f"{where}: a reason not written out" for _ in _UNWRITTEN.finditer(text)]
    assert unlisted == []


def test_each_listed_reason_says_what_the_machine_lacks() -> None:
    assert all(start.strip() and why.strip() for start, why in ALLOWED.items())
