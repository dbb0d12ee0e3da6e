"""The one rule engine, its order pinned: each mode against each rule kind and each remembered
answer, for every tool (reads included), and for a subagent's calls (issue 33 item 1).

The expected verdicts are written out as a table, not computed: A allow, Q ask, D deny. Moving a
step of the order (the remembered answers above plan mode, an allow rule above an ask rule, the
sensitive guard below the allow rules) changes a cell.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from acp_agent.claude_code.conventions.allowed_tools import read_allowed_tools
from acp_agent.claude_code.setup.setup import PERMISSION_MODES, load_claude_setup
from acp_agent.permissions.engine import RuleEngine, Verdict
from acp_agent.permissions.question import PermissionQuestion
from acp_agent.session.options.config_options import MODES

MODES_IN_ORDER = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")

# One call of each kind, and the rule that names exactly it.
CALLS: dict[str, tuple[PermissionQuestion, str]] = {
    "read": (
        PermissionQuestion("c", "read_file", "Read", "read", "none", {"path": "src/a.py"}),
        "Read(./src/a.py)",
    ),
    "list": (PermissionQuestion("c", "list_files", "List", "search", "none", {"path": "src"}), "Read(./src)"),
    "search": (
        PermissionQuestion("c", "search_text", "Search", "search", "none", {"pattern": "x", "path": "src"}),
        "Read(./src)",
    ),
    "edit": (
        PermissionQuestion("c", "edit_file", "Edit", "edit", "edit", {"path": "src/a.py"}),
        "Edit(./src/a.py)",
    ),
    "write": (
        PermissionQuestion("c", "write_file", "Write", "edit", "edit", {"path": "b.txt"}),
        "Edit(./b.txt)",
    ),
    "sensitive": (
        PermissionQuestion("c", "write_file", "Write", "edit", "sensitive", {"path": ".envrc"}),
        "Edit(./.envrc)",
    ),
    "command": (
        PermissionQuestion("c", "run_command", "Run", "execute", "execute", {"command": "npm test"}),
        "Bash(npm test)",
    ),
    "mcp": (PermissionQuestion("c", "mcp__s__t", "MCP", "other", "execute", {}), "mcp__s__t"),
    "subagent": (
        PermissionQuestion(
            "c", "task", "Subagent", "think", "none", {"prompt": "p", "subagent_type": "reviewer"}
        ),
        "Agent(reviewer)",
    ),
    "skill": (
        PermissionQuestion("c", "skill", "Skill", "read", "none", {"name": "changelog"}),
        "Skill(changelog)",
    ),
    "plan": (PermissionQuestion("c", "update_plan", "Plan", "think", "none", {"entries": []}), "TodoWrite"),
}
LOOKS = ("read", "list", "search", "subagent", "skill", "plan")
CHANGES = ("edit", "write", "command", "mcp")

# Per situation: the verdict in each mode, in MODES_IN_ORDER, for calls that only look, that
# change something, and for a sensitive edit.
TABLE: dict[str, dict[str, str]] = {
    #                        default acceptEdits plan dontAsk bypass
    "nothing": {"looks": "AAAAA", "changes": "QxDDA", "sensitive": "QQDDA"},
    "deny rule": {"looks": "DDDDD", "changes": "DDDDD", "sensitive": "DDDDD"},
    "ask rule": {"looks": "QQQDQ", "changes": "QQDDQ", "sensitive": "QQDDQ"},
    "allow rule": {"looks": "AAAAA", "changes": "AADAA", "sensitive": "QQDDA"},
    "always allow": {"looks": "AAAAA", "changes": "AADAA", "sensitive": "QQDDA"},
    "always reject": {"looks": "DDDDD", "changes": "DDDDD", "sensitive": "DDDDD"},
    "grant": {"looks": "AAAAA", "changes": "AADAA", "sensitive": "QQDDA"},
    "deny and allow rules": {"looks": "DDDDD", "changes": "DDDDD", "sensitive": "DDDDD"},
    "ask and allow rules": {"looks": "QQQDQ", "changes": "QQDDQ", "sensitive": "QQDDQ"},
    "always allow and ask rule": {"looks": "QQQDQ", "changes": "QQDDQ", "sensitive": "QQDDQ"},
}
"""`x` in "nothing": acceptEdits allows an edit (A) but asks before a command or an MCP tool (Q)."""
GRANTS = "Read, Grep, Glob, Edit, Write, Bash(npm test), mcp__s__t, Task, Skill, TodoWrite"


def engine_with(tmp_path: Path, rules: dict[str, list[str]]) -> RuleEngine:
    """An engine over a workspace whose user settings file holds `rules` (the user's: no trust)."""
    workspace, home = tmp_path / "workspace", tmp_path / "home"
    (workspace / "src").mkdir(parents=True, exist_ok=True)
    (workspace / "src" / "a.py").write_text("x = 1\n")
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"permissions": rules}))
    setup = load_claude_setup(
        workspace, home=home, config_dir=None, trust_store=None, tracked=lambda root, path: False
    )
    assert setup.warnings == ()
    return RuleEngine(setup, roots=lambda: (workspace,), home=home, save=False)


async def situation_engine(tmp_path: Path, situation: str, call: str) -> tuple[RuleEngine, bool]:
    """The engine for `situation` about `call`, and whether the command's grant is in force."""
    question, rule = CALLS[call]
    kinds = {
        "deny rule": {"deny": [rule]},
        "ask rule": {"ask": [rule]},
        "allow rule": {"allow": [rule]},
        "deny and allow rules": {"deny": [rule], "allow": [rule]},
        "ask and allow rules": {"ask": [rule], "allow": [rule]},
        "always allow and ask rule": {"ask": [rule]},
    }
    engine = engine_with(tmp_path, kinds.get(situation, {}))
    if situation.startswith("always"):
        await engine.remember(question, allow="allow" in situation.split(" and ")[0])
    return engine, situation == "grant"


def expected(situation: str, call: str, mode: str) -> str:
    row = TABLE[situation]
    kind = "sensitive" if call == "sensitive" else "looks" if call in LOOKS else "changes"
    cell = row[kind][MODES_IN_ORDER.index(mode)]
    return ("A" if call in ("edit", "write") else "Q") if cell == "x" else cell


def letter(verdict: Verdict) -> str:
    return {"allow": "A", "ask": "Q", "deny": "D"}[verdict.action]


def test_the_table_covers_every_mode_the_agent_offers() -> None:
    assert set(MODES_IN_ORDER) == set(PERMISSION_MODES) == set(MODES)


@pytest.mark.parametrize("situation", list(TABLE))
@pytest.mark.parametrize("call", list(CALLS))
async def test_every_mode_against_every_rule_and_answer_for_every_tool(
    tmp_path: Path, situation: str, call: str
) -> None:
    engine, granted = await situation_engine(tmp_path, situation, call)
    grants = read_allowed_tools(GRANTS) if granted else None
    question = CALLS[call][0]
    got = "".join(letter(engine.decide(question, mode, grants)) for mode in MODES_IN_ORDER)
    want = "".join(expected(situation, call, mode) for mode in MODES_IN_ORDER)
    assert got == want, f"{situation} / {call}: modes {MODES_IN_ORDER}"


@pytest.mark.parametrize("situation", ["nothing", "allow rule", "always allow", "grant", "ask rule"])
async def test_a_subagent_changes_something_only_where_the_mode_lets_it(
    tmp_path: Path, situation: str
) -> None:
    for call in CHANGES:
        engine, granted = await situation_engine(tmp_path / call, situation, call)
        question = replace(CALLS[call][0], subagent=True)
        grants = read_allowed_tools(GRANTS) if granted else None
        got = "".join(letter(engine.decide(question, mode, grants)) for mode in MODES_IN_ORDER)
        ask_rule = situation == "ask rule"
        # default and plan refuse; acceptEdits allows an edit, asks a command unless allowed.
        accept = "Q" if ask_rule or (situation == "nothing" and call in ("command", "mcp")) else "A"
        assert got == f"D{accept}DD{'Q' if ask_rule else 'A'}", f"{situation} / {call}"


def test_a_refusal_names_the_rule_and_its_file(tmp_path: Path) -> None:
    engine = engine_with(tmp_path, {"deny": ["Read(./src/**)"]})
    verdict = engine.decide(CALLS["read"][0], "bypassPermissions")
    assert (verdict.action, verdict.message) == ("deny", "denied by ~/.claude/settings.json: Read(./src/**)")


@pytest.mark.parametrize(
    ("rules", "line", "verdict"),
    [
        ({"allow": ["Bash(npm test *)"]}, "npm test -q", "A"),
        ({"allow": ["Bash(npm test *)"]}, "npm test && curl evil", "Q"),  # every part must be allowed
        ({"allow": ["Bash(npm test *)", "Bash(curl *)"]}, "npm test && curl x", "A"),
        ({"allow": ["Bash(npm test:*)"]}, "npm test --ci", "A"),  # the legacy form
        ({"allow": ["Bash(ls *)"]}, "lsof", "Q"),  # a space before `*` is a word boundary
        ({"allow": ["Bash(npm test)"]}, "timeout 60 npm test", "A"),  # past a wrapper
        ({"allow": ["Bash(npm test *)"]}, "npm test $(id)", "Q"),  # what the parser cannot vouch for
        ({"allow": ["Bash"]}, "anything at all", "A"),
        ({"deny": ["Bash(rm *)"]}, "FOO=1 rm -rf build", "D"),  # past an assignment
        ({"deny": ["Bash(rm *)"]}, "echo $(rm -rf /)", "D"),  # inside what the parser refuses
        ({"deny": ["Bash(rm *)"]}, "nice -n 5 rm x", "D"),
        ({"deny": ["Bash(rm *)"], "allow": ["Bash"]}, "ls && rm x", "D"),
        ({"ask": ["Bash(git push *)"], "allow": ["Bash(git *)"]}, "git push origin", "Q"),
        ({"deny": ["Bash(curl *)"]}, "curl_wrapper x", "Q"),
    ],
)
def test_command_lines_are_matched_command_by_command(
    tmp_path: Path, rules: dict[str, list[str]], line: str, verdict: str
) -> None:
    question = replace(CALLS["command"][0], raw_input={"command": line})
    assert letter(engine_with(tmp_path, rules).decide(question, "default")) == verdict


def test_an_allow_rule_needs_the_link_and_its_target_a_deny_either(tmp_path: Path) -> None:
    engine = engine_with(tmp_path, {"allow": ["Edit(./src/**)"], "deny": ["Read(./secrets/**)"]})
    workspace = tmp_path / "workspace"
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "key").write_text("k")
    (workspace / "src" / "link.py").symlink_to(workspace / "secrets" / "key")
    (workspace / "notes.txt").symlink_to(workspace / "src" / "a.py")
    edit = CALLS["edit"][0]
    assert letter(engine.decide(replace(edit, raw_input={"path": "src/a.py"}), "default")) == "A"
    # The link is under src/ but leads into secrets/: the deny holds, for reading and editing.
    for question in (
        replace(edit, raw_input={"path": "src/link.py"}),
        replace(CALLS["read"][0], raw_input={"path": "src/link.py"}),
    ):
        verdict = engine.decide(question, "default")
        assert verdict.action == "deny" and "Read(./secrets/**)" in verdict.message
    # A link outside src/ to a file in it: the allow rule does not cover the link's own path.
    assert letter(engine.decide(replace(edit, raw_input={"path": "notes.txt"}), "default")) == "Q"


def test_an_unknown_tool_name_is_kept_and_a_rule_that_cannot_be_read_is_skipped(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    rules: dict[str, Any] = {"deny": ["Frobnicate", "Bash(foo", 42, "Write(src/**)"], "allow": ["mcp__*"]}
    (home / ".claude" / "settings.json").write_text(json.dumps({"permissions": rules}))
    setup = load_claude_setup(
        tmp_path, home=home, config_dir=None, trust_store=None, tracked=lambda r, p: False
    )
    assert [r.text for r in setup.rules] == ["Frobnicate"]
    assert len(setup.warnings) == 5, setup.warnings
    assert any("no tool of this agent is named 'Frobnicate' (kept)" in w for w in setup.warnings)
    assert any("a glob in an allow rule must follow `mcp__<server>__`" in w for w in setup.warnings)


def test_the_background_commands_tools_go_with_bash_and_answer_to_their_own_names(tmp_path: Path) -> None:
    names = ["read_file", "run_command", "command_output", "stop_command"]
    assert engine_with(tmp_path / "a", {"deny": ["Bash"]}).removed(names) == {
        "run_command",
        "command_output",
        "stop_command",
    }
    assert engine_with(tmp_path / "b", {"deny": ["Bash(rm *)"]}).removed(names) == frozenset()
    engine = engine_with(
        tmp_path / "c", {"deny": ["KillBash"], "ask": ["BashOutput"]}
    )  # KillShell's old name
    assert engine.removed(names) == {"stop_command"}
    read = PermissionQuestion("c", "command_output", "Output", "read", "none", {"task_id": "bg_1"})
    assert letter(engine.decide(read, "bypassPermissions")) == "Q"
    background = replace(CALLS["command"][0], raw_input={"command": "rm -rf x", "background": True})
    assert (
        letter(engine_with(tmp_path / "d", {"deny": ["Bash(rm *)"]}).decide(background, "bypassPermissions"))
        == "D"
    )
