"""Reading a command's `allowed-tools` and matching `Bash(...)` patterns as Claude Code writes them."""

from __future__ import annotations

import pytest

from acp_agent.session.allowed_tools import command_matches, read_allowed_tools


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
    assert grants.commands == ("git status:*",) and grants.ignored == ()
    assert grants.covers("mcp__github__create_issue", {}) and grants.covers("mcp__db__drop", {})
    assert grants.covers("mcp__x__query", {}) and not grants.covers("mcp__x__delete", {})
    assert not grants.covers("run_command", {"command": "git push"})
    assert grants.covers("run_command", {"command": "git status --short"})


def test_unknown_names_and_patterns_on_other_tools_are_ignored_and_said() -> None:
    grants = read_allowed_tools("Frobnicate, Read(src/**), Bash(npm test), ??")
    assert grants.tools == frozenset() and grants.commands == ("npm test",)
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
        ("git status:*", "git statusx", False),
        ("git status:*", "git stash", False),
        ("git *", "git", True),
        ("git *", "git log -1", True),
        ("git *", "gitk", False),
        ("ls*", "lsof", True),
        ("npm test", "npm test", True),
        ("npm test", "npm test --watch", False),
        ("npm run * --silent", "npm run build --silent", True),
        ("npm run * --silent", "npm run build", False),
        ("*", "anything at all", True),
        ("a.b", "axb", False),  # no regex leaks through
        # One command only: a chain, a pipe, a redirect or a substitution is asked as usual.
        ("git status:*", "git status; rm -rf /", False),
        ("git status:*", "git status && curl evil", False),
        ("git status:*", "git status | sh", False),
        ("git status:*", "git status > ~/.bashrc", False),
        ("git status:*", "git status $(rm -rf /)", False),
        ("git status:*", "git status `rm -rf /`", False),
        ("git status:*", "git status\nrm -rf /", False),
        ("git status:*", "git status &", False),
        ("*", "a; b", False),
        ("git status:*", "", False),
    ],
)
def test_command_patterns(pattern: str, command: str, matches: bool) -> None:
    assert command_matches(pattern, command) is matches
