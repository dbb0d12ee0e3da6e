"""The Python search path refuses patterns whose compiled size would run away, and a cancel stops
it within one short regex call (issue 29 item 7)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from acp_agent.errors import ToolError
from acp_agent.tools.base import ToolContext
from acp_agent.tools.search import text as search_text
from acp_agent.tools.search.python import search_in_python
from acp_agent.tools.search.regex_bounds import MAX_PATTERN_CHARS, check_pattern
from acp_agent.tools.search.ripgrep import find_rg
from acp_agent.tools.search.text import SearchText


@pytest.mark.parametrize(
    "pattern",
    [
        "(?:x{65535}){65535}",  # the campaign's: 2.6 GB in `regex`
        "(?:x{1000}){1000}",  # 273 MB
        "((((x{20}){20}){20}){20})",
        "(?:ab{400}|c){300}",
        "x{100001}",
        "(?:x{1000}){100,1000}",
        "(?:\\d{30}-){4000}",
    ],
)
def test_counted_repetitions_that_multiply_past_the_bound_are_refused(pattern: str) -> None:
    with pytest.raises(ToolError, match="multiply to more than 100,000 pieces"):
        check_pattern(pattern)


@pytest.mark.parametrize(
    "pattern",
    [
        r"def \w+\(",
        r"(?:\d{1,3}\.){3}\d{1,3}",
        r"x{65535}",
        r"(?:x{300}){300}",
        r"(?:a{0,1000})*b+",  # open-ended repetition is a loop, not copies
        r"[{]{3}\{5}",  # braces in a class or escaped are literals
        r"\p{Lu}{2}\x{41}{3}",
        r"a{,5}b{}c{,}",
        r"(?#{99999}{99999})x",
        r"[]{99999}]{2}",
        r"(a|aa)+$",
    ],
)
def test_ordinary_patterns_pass(pattern: str) -> None:
    check_pattern(pattern)


def test_a_very_long_or_deeply_nested_pattern_is_refused() -> None:
    with pytest.raises(ToolError, match="characters long"):
        check_pattern("a" * (MAX_PATTERN_CHARS + 1))
    with pytest.raises(ToolError, match="nests groups more than 100 deep"):
        check_pattern("(" * 101 + "x" + ")" * 101)
    check_pattern("(" * 100 + "x" + ")" * 100)


async def test_the_python_search_refuses_the_pattern_before_compiling_it(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    with pytest.raises(ToolError, match="multiply to more than"):
        await SearchText(ripgrep=False).run({"pattern": "(?:x{65535}){65535}"}, ToolContext(cwd=tmp_path))
    if find_rg() is not None:  # rg refuses it too, and the fallback must not compile it
        with pytest.raises(ToolError, match="multiply to more than"):
            await SearchText().run({"pattern": "(?:x{65535}){65535}"}, ToolContext(cwd=tmp_path))


async def test_a_cancelled_python_search_frees_its_core_promptly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker thread a cancel abandons stops within about one regex call (0.25 s of CPU),
    not at the end of the 600 s budget: it keeps no core busy."""
    (tmp_path / "evil.txt").write_text("a" * 5000 + "b\n")
    started, ended = threading.Event(), threading.Event()

    def watched(*args: Any, **kwargs: Any) -> Any:
        started.set()
        try:
            return search_in_python(*args, **kwargs)
        finally:
            ended.set()

    async def cancel_once_started(scope: anyio.CancelScope) -> None:
        # A cancel before the worker picks the call up would mean it never runs at all (and a
        # loaded box makes that likely), so the cancel waits for the search to be running.
        await anyio.to_thread.run_sync(started.wait, 15)
        scope.cancel()

    monkeypatch.setattr(search_text, "search_in_python", watched)
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_once_started, scope)
            await SearchText(ripgrep=False, budget_seconds=600.0).run(
                {"pattern": r"(a+)+$"}, ToolContext(cwd=tmp_path)
            )
    assert started.is_set() and scope.cancelled_caught
    await anyio.to_thread.run_sync(ended.wait, 15)  # a bound on the wait, far below the budget
    assert ended.is_set()
