"""The sandbox tests need a working bwrap (and git, and a C compiler for the one test that builds a
library to preload): they say so when it is missing.

Without it they skip, naming what is missing; with `ACP_AGENT_REQUIRE_SANDBOX=1` (set by
`.ci/run`, which installs bubblewrap) they fail instead, so CI never passes them silently.
"""

from __future__ import annotations

import functools
import os
import shutil

import pytest

from acp_agent.tools.sandbox.bwrap import find_bwrap, probe_bwrap

__all__ = ["need", "require_bwrap", "require_cc", "require_git"]

REQUIRE = "ACP_AGENT_REQUIRE_SANDBOX"


@functools.cache
def _bwrap_problem() -> str | None:
    program = find_bwrap()
    if program is None:
        return "bubblewrap (bwrap) is not installed"
    return probe_bwrap(program, network=False)


def need(problem: str | None) -> None:
    """Fail (under ACP_AGENT_REQUIRE_SANDBOX=1) or skip, saying why, when `problem` is not None."""
    if problem is None:
        return
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"{REQUIRE}=1 but the sandbox tests cannot run: {problem}")
    pytest.skip(f"needs a working sandbox: {problem} (CI sets {REQUIRE}=1 and fails here instead)")


def require_bwrap() -> None:
    need(_bwrap_problem())


def require_git() -> None:
    need(None if shutil.which("git") else "git is not installed")


def require_cc() -> str:
    """A C compiler (the preloaded-library test of the launcher's environment builds one)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    need(None if compiler else "no C compiler (cc or gcc) is installed")
    assert compiler is not None
    return compiler
