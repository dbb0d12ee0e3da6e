"""The model's globs (`list_files`, `search_text`) matched without backtracking (`tools/globs.py`).

They were one regular expression, and `re` backtracks on nested repeats: `**/` sixteen times before
a name never finished on a path 30 directories deep, pinning a core for as long as the model liked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_agent.claude_code.memory.memory_paths import PathPatterns
from acp_agent.errors import ToolError
from acp_agent.tools.globs import MAX_SEGMENTS, few_stars, path_glob
from acp_agent.tools.paths import name_glob
from acp_agent.tools.search.ignore import _spec as gitignore_spec
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


@pytest.mark.parametrize(
    ("pattern", "read"),
    [
        ("*.py", "*.py"),
        ("src/**/*.min.*.js", "src/**/*.min.*.js"),  # three stars in one segment: as written
        ("*a*a*a*a*ab", "*ab"),
        ("logs/x*a*a*a*a*z.log/**", "logs/x*z.log/**"),
    ],
)
def test_a_pathspec_pattern_keeps_at_most_three_stars_per_segment(pattern: str, read: str) -> None:
    assert few_stars(pattern) == read


@settings(max_examples=examples(300), deadline=None)
@given(st.text(alphabet="ab*", min_size=1, max_size=14), st.text(alphabet="ab", max_size=10))
def test_fewer_stars_match_every_name_the_pattern_did(pattern: str, name: str) -> None:
    if path_glob(pattern).matches(name):
        assert path_glob(few_stars(pattern)).matches(name), (pattern, name)


@pytest.mark.timeout(30)  # a hang guard: pathspec never finished these with the pattern as written
def test_a_hostile_gitignore_or_memory_rule_ends_at_once(tmp_path: Path) -> None:
    hostile = "*a" * 12 + "b"
    name = "a" * 255
    (tmp_path / ".gitignore").write_text(hostile + "\n")
    (tmp_path / name).write_text("x")
    spec = gitignore_spec(tmp_path / ".gitignore")
    assert spec is not None and not spec.match_file(name)
    assert not PathPatterns.of([hostile]).matches(name)
