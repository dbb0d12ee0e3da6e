"""Rule globs match in time linear in what they are matched against (issue 41 item 8): a path
rule segment by segment, a command or name glob chunk by chunk; and they mean what they meant.

The timed tests are bounded by pytest-timeout only (a hang fails them); the figures are in
`bench/rule_matching.py`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_agent.permissions.path_rules import read_path_pattern, segment_glob
from acp_agent.permissions.question import PermissionQuestion
from acp_agent.tools.shell.command_analysis import analyse
from acp_agent.tools.shell.command_patterns import StarGlob, read_pattern
from tests.support.examples import examples
from tests.support.reference_glob import glob_source
from tests.unit.test_rule_engine import engine_with


@pytest.mark.timeout(30)
def test_a_deny_glob_full_of_double_stars_answers_at_once_on_a_deep_path(tmp_path: Path) -> None:
    """A repository's `Read(./**/**/…/zz)` deny froze the agent: the old expression backtracked
    (8 `**` on a 40-segment path: over 30 s)."""
    deny = "Read(./" + "/".join(["**"] * 40) + "/zz)"
    engine = engine_with(tmp_path, {"deny": [deny]})
    deep = "/".join(["a"] * 300)
    read = PermissionQuestion("c", "read_file", "Read", "read", "none", {"path": deep})
    assert engine.decide(read, "default").action == "allow"
    assert engine.path_denials().refusal(str(tmp_path / "workspace" / deep)) is None
    refused = PermissionQuestion("c", "read_file", "Read", "read", "none", {"path": deep + "/zz"})
    assert engine.decide(refused, "default").action == "deny"


@pytest.mark.timeout(30)
def test_stars_in_a_segment_a_command_or_a_name_never_backtrack(tmp_path: Path) -> None:
    many = "*a" * 200 + "*b"
    engine = engine_with(
        tmp_path,
        {"deny": [f"Read(./{many})", f"Bash({'* ' * 100}b)", f"Agent({many})", f"mcp__{many}"]},
    )
    long_name = "a" * 20_000
    read = PermissionQuestion("c", "read_file", "Read", "read", "none", {"path": long_name})
    assert engine.decide(read, "default").action == "allow"
    line = "echo " + "a " * 500
    command = PermissionQuestion("c", "run_command", "Run", "execute", "execute", {"command": line})
    assert engine.decide(command, "bypassPermissions").action == "allow"
    task = PermissionQuestion(
        "c", "task", "Task", "think", "none", {"prompt": "p", "subagent_type": long_name}
    )
    assert engine.decide(task, "default").action == "allow"
    assert (
        engine.decide(
            PermissionQuestion("c", "mcp__" + long_name, "M", "other", "execute", {}), "bypassPermissions"
        ).action
        == "allow"
    )


def test_a_deny_rule_past_the_segment_bound_matches_more_never_less(tmp_path: Path) -> None:
    long = "/".join(f"d{i}" for i in range(100))
    deny = read_path_pattern(long, anchor=tmp_path, cwd=tmp_path, home=None, anywhere=True)
    assert not isinstance(deny, str)
    assert deny.matches(f"{tmp_path}/{long}") and deny.matches(
        f"{tmp_path}/{'/'.join(f'd{i}' for i in range(64))}/x"
    )
    allow = read_path_pattern(long, anchor=tmp_path, cwd=tmp_path, home=None, anywhere=False)
    assert isinstance(allow, str)  # an allow rule may be skipped


def test_an_unreadable_class_or_user_in_a_deny_rule_is_taken_as_written(tmp_path: Path) -> None:
    engine = engine_with(tmp_path, {"deny": ["Read(./x[z-a]y)", "Read(~no_such_user_here/key)"]})
    assert [r.text for r in engine.rules()] == ["Read(./x[z-a]y)", "Read(~no_such_user_here/key)"]
    read = PermissionQuestion("c", "read_file", "Read", "read", "none", {"path": "x[z-a]y"})
    assert engine.decide(read, "default").action == "deny"


_SEGMENT = st.sampled_from(["a", "b", "ab", "*", "a*", "*b", "?", "a?b", "[ab]", "[!a]", "**"])
_NAME = st.sampled_from(["a", "b", "ab", "ba", "aab", "c"])


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(_SEGMENT, min_size=1, max_size=5).map("/".join),
    st.lists(_NAME, min_size=1, max_size=6).map("/".join),
)
def test_the_segment_matcher_agrees_with_the_old_expressions(glob: str, path: str) -> None:
    """On globs where `**` stands alone in its segment, the linear matcher says what the old
    expression (`glob_source`, then anything below) said."""
    old = re.compile(f"(?s:{glob_source(glob)}(?:/.*)?)\\Z")
    assert segment_glob(glob).matches(path) == (old.match(path) is not None), (glob, path)


_TEXT = st.text(alphabet="ab *", max_size=12)


@settings(max_examples=examples(300), deadline=None)
@given(st.text(alphabet="ab*", max_size=8), _TEXT)
def test_the_star_glob_agrees_with_an_expression(glob: str, text: str) -> None:
    expression = re.compile(".*".join(re.escape(p) for p in glob.split("*")), re.DOTALL)
    assert StarGlob.of(glob).fullmatch(text) == (expression.fullmatch(text) is not None)


@pytest.mark.timeout(30)
def test_a_kilobyte_line_full_of_wrappers_and_nesting_is_read_within_the_bounds() -> None:
    line = "sh -c " * 40 + "rm x"
    analysis = analyse(line)
    assert analysis.unresolved  # past the nesting bound: a deny rule may match
    deny = read_pattern("rm:*", wide=True)
    assert not isinstance(deny, str) and deny.reach(analysis) >= 1
    assert analyse("nice " * 200 + "rm x").invocations
