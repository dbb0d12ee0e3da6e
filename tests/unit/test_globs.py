"""The model's globs (`list_files`, `search_text`) matched without backtracking (`tools/globs.py`).

They were one regular expression, and `re` backtracks on nested repeats: `**/` sixteen times before
a name never finished on a path 30 directories deep, pinning a core for as long as the model liked.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_agent.errors import ToolError
from acp_agent.tools.globs import MAX_SEGMENTS
from acp_agent.tools.paths import name_glob
from tests.support.examples import examples
from tests.support.reference_glob import glob_source

_SEGMENT = st.sampled_from(["a", "b", "ab", "*", "a*", "*b", "*a*", "?", "a?b", "[ab]", "[!a]", "**"])
_NAME = st.sampled_from(["a", "b", "ab", "ba", "aab", "c", "abab"])


@settings(max_examples=examples(500), deadline=None)
@given(
    st.lists(_SEGMENT, min_size=1, max_size=5).map("/".join),
    st.lists(_NAME, min_size=1, max_size=6).map("/".join),
)
def test_the_linear_matcher_says_what_the_old_expression_said(glob: str, path: str) -> None:
    """Where `**` stands alone in its segment, the same answer as the regular expression it replaces."""
    old = re.compile(f"(?s:{glob_source(glob)})\\Z")
    assert name_glob(glob).matches(path) == (old.match(path) is not None), (glob, path)


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**.py", "src/deep/app.py", True),  # `**` beginning a segment crosses directories
        ("**.py", "app.py", True),
        ("build**", "build", True),  # and ending one: the name and anything below
        ("build**", "buildx/y/z", True),
        ("build**", "src/build", False),
        ("a**b", "axb", True),  # in the middle: a `*`
        ("a**b", "a/b", False),
        ("src/**", "src", False),  # a trailing `**` is what is below
        ("**", "a/b", True),
        ("[a", "[a", True),  # a class that does not close is a literal `[`
    ],
)
def test_a_double_star_that_shares_its_segment(pattern: str, path: str, matches: bool) -> None:
    assert name_glob(pattern).matches(path) is matches


@pytest.mark.timeout(30)  # a hang guard: the old expression never finished these
def test_patterns_that_made_the_expression_backtrack_end_at_once() -> None:
    deep = "/".join(["a"] * 30) + "/y"
    assert not name_glob("**/" * 16 + "zz").matches(deep)
    assert not name_glob("**/a/" * 10 + "zz").matches(deep)
    assert not name_glob("*a" * 20 + "b").matches("a" * 5_000)
    assert name_glob("**/" * 16 + "y").matches(deep)


def test_a_pattern_past_the_segment_bound_is_a_tool_error() -> None:
    with pytest.raises(ToolError, match="invalid glob"):
        name_glob("/".join(["a"] * (MAX_SEGMENTS + 1)))
