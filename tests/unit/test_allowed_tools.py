"""Reading a command's `allowed-tools` and matching `Bash(...)` patterns as Claude Code writes them."""

from __future__ import annotations

import pytest

from acp_agent.claude_code.conventions.allowed_tools import command_matches, read_allowed_tools


def test_a_value_maps_claude_codes_names_and_keeps_mcp_and_own_names() -> None:
    grants = read_allowed_tools(
        "Bash(git status:*), Read, Edit MultiEdit, glob, mcp__github, mcp__db__*, mcp__x__query, write_file"
    )
    assert grants.tools == {
        "read_file",
        "edit_file",
        "list_files",
        "mcp__github",
        "mcp__db",
        "mcp__x__query",
        "write_file",
    }
    assert [str(p) for p in grants.commands] == ["git status:*"] and grants.ignored == ()
    assert grants.covers("mcp__github__create_issue", {}) and grants.covers("mcp__db__drop", {})
    assert grants.covers("mcp__x__query", {}) and not grants.covers("mcp__x__delete", {})
    assert not grants.covers("run_command", {"command": "git push"})
    assert grants.covers("run_command", {"command": "git status --short"})


def test_unknown_names_and_patterns_on_other_tools_are_ignored_and_said() -> None:
    grants = read_allowed_tools("Frobnicate, Read(src/**), Bash(npm test), ??")
    assert grants.tools == frozenset() and [str(p) for p in grants.commands] == ["npm test"]
    assert grants.ignored == (
        "Frobnicate (no such tool here)",
        "Read(src/**) (a pattern is honoured on Bash only)",
        "?? (not a tool name)",
    )
    assert not read_allowed_tools("") and not read_allowed_tools("Nothing")


def test_bare_bash_grants_every_command() -> None:
    assert read_allowed_tools("Bash").covers("run_command", {"command": "rm -rf build && make"})


@pytest.mark.parametrize(
    ("pattern", "command", "matches"),
    [
        ("git status:*", "git status", True),
        ("git status:*", "git status -s", True),
        ("git status:*", "git  status\t-s", True),  # words, not text
        ("git status:*", "git 'status' -s", True),
        ("git status:*", "git statusx", False),
        ("git status:*", "git stash", False),
        ("git status:*", "git -c core.pager=sh status", False),
        ("git *", "git", True),
        ("git *", "git log -1", True),
        ("git *", "gitk", False),
        ("ls*", "lsof", True),
        ("npm test", "npm test", True),
        ("npm test", "npm  test", True),
        ("npm test", "npm test --watch", False),
        ("npm run * --silent", "npm run build --silent", True),
        ("npm run * --silent", "npm run build", False),
        ("npm run * --silent", "npm run 'build --silent'", False),  # one word, not the option
        ('git commit -m "wip":*', "git commit -m wip --amend", True),
        ("*", "anything at all", True),
        ("a.b", "axb", False),  # no regex leaks through
        ("echo:*", "echo 'a; b' \"c | d\"", True),  # quoted: plain words
        # A chain, a pipe or a list: every part must be granted on its own.
        ("git status:*", "git status; rm -rf /", False),
        ("git status:*", "git status && curl evil", False),
        ("git status:*", "git status | sh", False),
        ("git status:*", "git status\nrm -rf /", False),
        ("git status:*", "git status; git status -s", True),
        ("echo GRANTED:*", "echo GRANTED now; touch pwned", False),
        ("echo GRANTED:*", "echo GRANTED now && touch pwned", False),
        ("echo GRANTED:*", "echo GRANTED now || touch pwned", False),
        ("echo GRANTED:*", "echo GRANTED now | touch pwned", False),
        ("echo GRANTED:*", "echo GRANTED now\ntouch pwned", False),
        # Anything bash expands or treats specially: asked, whatever the prefix says.
        ("git status:*", "git status ${x:=\\$\\(touch pwned\\)} ${x@P}", False),
        ("echo GRANTED:*", "echo GRANTED $[y]", False),
        ("echo GRANTED:*", "echo GRANTED ${PWD:y:0}", False),
        ("echo GRANTED:*", "echo GRANTED $(touch pwned)", False),
        ("echo GRANTED:*", "echo GRANTED `touch pwned`", False),
        ("echo GRANTED:*", "echo GRANTED '$(touch pwned)'", False),  # `$` in any form
        ("echo GRANTED:*", "echo GRANTED $'\\x41'", False),
        ("echo GRANTED:*", "echo GRANTED $HOME", False),
        ("echo GRANTED:*", "echo GRANTED <(touch pwned)", False),
        ("echo GRANTED:*", "echo GRANTED >(touch pwned)", False),
        ("echo GRANTED:*", "echo GRANTED !!", False),
        ("echo GRANTED:*", "echo GRANTED !-1:p", False),
        ("echo GRANTED:*", "echo GRANTED > ~/.bashrc", False),
        ("echo GRANTED:*", "echo GRANTED 2>&1", False),
        ("echo GRANTED:*", "echo GRANTED <<EOF\nx\nEOF", False),
        ("echo GRANTED:*", "echo GRANTED <<< x", False),
        ("echo GRANTED:*", "echo GRANTED &", False),
        ("echo GRANTED:*", "echo GRANTED & touch pwned", False),
        ("echo GRANTED:*", "echo GRANTED |& touch pwned", False),
        ("echo GRANTED:*", "echo GRANTED (touch pwned)", False),
        ("echo GRANTED:*", "echo GRANTED; { touch pwned; }", False),
        ("echo GRANTED:*", "echo GRANTED {a,b}", False),
        ("echo GRANTED:*", "echo GRANTED *", False),  # a file named `--x` would be an option
        ("echo GRANTED:*", "echo GRANTED ?", False),
        ("echo GRANTED:*", "echo GRANTED [ab]", False),
        ("echo GRANTED:*", "echo GRANTED ~root", False),
        ("echo GRANTED:*", "echo GRANTED --dir=~", False),
        ("echo GRANTED:*", "echo GRANTED #; touch pwned", False),
        ("echo GRANTED:*", "echo GRANTED \\\ntouch pwned", False),
        ("echo GRANTED:*", "echo GRANTED\r", False),
        ("echo GRANTED:*", "echo GRANTED\x00", False),
        ("echo GRANTED:*", "echo GRANTED 'unclosed", False),
        ("echo GRANTED:*", "echo GRANTED;; touch pwned", False),
        ("echo GRANTED:*", "echo GRANTED; ; echo GRANTED", False),
        ("git status:*", "PAGER='sh -c id' git status", False),
        ("*", "time ls", False),  # a reserved word: the parser does not vouch for it
        ("*", "a; b", True),  # `*` grants every simple command (`Bash(*)` is every line)
        ("git status:*", "", False),
        ("git status:*", " \n ", False),
    ],
)
def test_command_patterns(pattern: str, command: str, matches: bool) -> None:
    assert command_matches(pattern, command) is matches


def test_each_part_of_a_list_must_be_granted_by_some_pattern() -> None:
    grants = read_allowed_tools("Bash(git status:*), Bash(git diff:*)")
    assert grants.covers("run_command", {"command": "git status -s && git diff --stat"})
    assert not grants.covers("run_command", {"command": "git status -s && git log"})
    assert not grants.covers("run_command", {"command": "git status -s && git diff $(id)"})


def test_a_pattern_that_is_not_one_simple_command_is_ignored_and_said() -> None:
    grants = read_allowed_tools("Bash(git status; rm:*), Bash(echo $HOME), Bash(ls -la)")
    assert [str(p) for p in grants.commands] == ["ls -la"]
    assert grants.ignored == (
        "Bash(git status; rm:*) (not one simple command: it names more than one command)",
        "Bash(echo $HOME) (not one simple command: a `$` expands parameters, arithmetic and commands ('$'))",
    )
