"""A hook's matcher and answer as Claude Code reads them (issue 33 item 2): a hostile matcher ends
in its time limit, and each exit code and JSON shape means what Claude Code's protocol says."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from acp_agent.claude_code.hooks.hook_config import Matcher, read_hooks
from acp_agent.claude_code.hooks.hook_payloads import MAX_CONTEXT_CHARS, claude_input, own_input, read_answer
from acp_agent.claude_code.hooks.hook_process import HookProcess
from acp_agent.claude_code.settings.settings_files import SettingsFile
from acp_agent.claude_code.setup.setup import ClaudeSetup
from acp_agent.errors import ToolError


def test_matchers_are_exact_lists_or_unanchored_expressions() -> None:
    assert Matcher.read("").matches("Bash") and Matcher.read("*").matches(None)
    listed = Matcher.read("Edit|Write, Read")
    assert listed.matches("Write") and listed.matches("Read") and not listed.matches("NotebookEdit")
    assert Matcher.read("Edit.*").matches("NotebookEdit")  # unanchored, as JavaScript's
    assert Matcher.read("mcp__memory__.*").matches("mcp__memory__create") and not Matcher.read(
        "mcp__memory"
    ).matches("mcp__memory__create")


def test_a_catastrophic_matcher_ends_in_its_time_limit_and_a_huge_one_is_refused() -> None:
    hostile = Matcher.read("^(a|aa)+$")
    start = time.monotonic()
    assert not hostile.matches("a" * 5_000 + "b")
    assert time.monotonic() - start < 5  # a hang guard: the limit is 50 ms of CPU
    with pytest.raises(ToolError, match="bounds"):
        Matcher.read("(?:x{65535}){65535}")


@pytest.mark.parametrize(
    ("run", "event", "expected"),
    [
        (HookProcess(2, stderr="no rm\n"), "PreToolUse", {"blocked": "no rm"}),
        (HookProcess(1, stderr="boom\nmore"), "PreToolUse", {"warning": "exit code 1: boom"}),
        (HookProcess(0, stdout="{nope"), "PostToolUse", {"warning": "printed invalid JSON"}),
        (HookProcess(0, stdout="plain"), "PostToolUse", {"context": ""}),
        (HookProcess(0, stdout="plain"), "UserPromptSubmit", {"context": "plain"}),
        (
            HookProcess(1, stdout='{"hookSpecificOutput": {"permissionDecision": "deny"}}'),
            "PreToolUse",
            {"decision": "deny"},  # a JSON object decides, whatever the exit code
        ),
        (HookProcess(0, stdout='{"decision": "approve"}'), "PreToolUse", {"decision": "allow"}),
        (HookProcess(0, stdout='{"decision": "block", "reason": "tests"}'), "Stop", {"blocked": "tests"}),
        (HookProcess(0, stdout='{"continue": false, "stopReason": "enough"}'), "Stop", {"halt": "enough"}),
        (HookProcess(None, timed_out=True, error="timed out after 1 s"), "Stop", {"warning": "timed out"}),
        # could not start for a reason of ours (its sandbox): a guard blocks, other events warn
        (
            HookProcess(None, error="cannot start in the sandbox: it names /x", ours=True),
            "PreToolUse",
            {
                "blocked": "the hook did not run: cannot start in the sandbox: it names /x; the call is "
                "blocked rather than run unguarded",
                "warning": "it names /x",
            },
        ),
        (HookProcess(None, error="cannot start in the sandbox", ours=True), "Stop", {"blocked": None}),
        (HookProcess(None, error="could not start: no such file"), "PreToolUse", {"blocked": None}),
    ],
)
def test_exit_codes_and_json_answers(run: HookProcess, event: str, expected: dict[str, str]) -> None:
    answer = read_answer(run, event)
    for field, value in expected.items():
        found = getattr(answer, field)
        assert (value in found) if field == "warning" and value else found == value, (field, found)


def test_context_is_capped_and_inputs_take_claude_codes_shapes() -> None:
    long = '{"hookSpecificOutput": {"additionalContext": "' + "x" * 20_000 + '"}}'
    assert len(read_answer(HookProcess(0, stdout=long), "PostToolUse").context) < MAX_CONTEXT_CHARS + 40
    cwd = Path("/work/repo")
    shaped = claude_input("edit_file", {"path": "src/a.py", "old_string": "a", "new_string": "b"}, cwd)
    assert shaped == {"file_path": "/work/repo/src/a.py", "old_string": "a", "new_string": "b"}
    assert claude_input("run_command", {"command": "ls", "timeout": 5}, cwd)["timeout"] == 5000
    assert own_input("edit_file", shaped)["path"] == "/work/repo/src/a.py"
    assert own_input("run_command", {"command": "ls", "timeout": 120000, "description": "x"}) == {
        "command": "ls",
        "timeout": 120,
    }
    assert own_input("run_command", {"command": "ls", "run_in_background": True}) == {
        "command": "ls",
        "background": True,
    }
    assert own_input("edit_file", {**shaped, "replace_all": False}) == own_input("edit_file", shaped)


def claude_file(data: dict[str, Any], tmp_path: Path) -> ClaudeSetup:
    user = SettingsFile("user", tmp_path / "settings.json", "~/.claude/settings.json", tmp_path, data)
    return ClaudeSetup(tmp_path, tmp_path, files=(user,))


@pytest.mark.parametrize(
    ("timeout", "said", "gets"),
    [
        (
            5000,
            "timeout 5000 looks like milliseconds: hook timeouts are in seconds (as in Claude Code)",
            600.0,
        ),
        (10000, "write 10 for 10 s", 600.0),
        (7_200_000, "timeout 7200000 is more than 3600 s (hook timeouts are in seconds)", 600.0),
        (0, "timeout 0 is not a number of seconds above 0", 600.0),
        ("30", 'timeout "30" is not a number of seconds above 0', 600.0),
        (30, None, 30.0),
    ],
)
def test_a_timeout_that_is_changed_says_so_and_what_the_hook_gets(
    timeout: Any, said: str | None, gets: float, tmp_path: Path
) -> None:
    """Issue 42 item 9: 5000 is not read as 5000 s (past the cap) nor, silently, as 600 s."""
    handler = {"type": "command", "command": "guard.sh", "timeout": timeout}
    hooks = read_hooks(claude_file({"hooks": {"PreToolUse": [{"hooks": [handler]}]}}, tmp_path))
    [read] = hooks.handlers
    assert read.timeout == gets
    if said is None:
        assert hooks.warnings == ()
    else:
        [warning] = hooks.warnings
        assert said in warning and "this hook gets 600 s (the default)" in warning, warning


def test_a_hooks_name_is_its_script_even_in_a_quoted_path_with_a_space(tmp_path: Path) -> None:
    command = "'/tmp/a clone/.venv/bin/python3' '/tmp/a clone/tests/support/hook_script.py' log x"
    handler = {"type": "command", "command": command}
    hooks = read_hooks(claude_file({"hooks": {"Stop": [{"hooks": [handler]}]}}, tmp_path))
    assert hooks.handlers[0].name == "hook_script.py"
