"""The table of one decision: the same call put by every caller, in every mode, under each set of
rules, and the one outcome the rule engine gives it (`tests/wire/test_one_decision.py`).

A row's oracle is `RuleEngine.decide`, run here in-process on the question the caller should put
(the same rules, read from the same files); the agent under test must show that outcome: the call
ran unasked, was refused unasked with the engine's words, or was asked (the editor answers every
question "reject_once").
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_agent.claude_code.setup.setup import load_claude_setup
from acp_agent.permissions.engine import Grants, RuleEngine, Verdict
from acp_agent.permissions.question import HookVerdict, PermissionQuestion

__all__ = [
    "MODES",
    "RULE_SETS",
    "Editor",
    "Outcome",
    "expected",
    "outcome_of",
    "write_rules",
]

MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
HOOK_REASON = "the policy says no"
HOOK_SCRIPT = Path(__file__).resolve().parent / "hook_script.py"
RULE_SETS: dict[str, dict[str, Any]] = {
    "no rule": {},
    "a deny rule": {"permissions": {"deny": ["Edit(**/notes.txt)", "Read(**/notes.txt)"]}},
    "an ask rule": {"permissions": {"ask": ["Edit(**/notes.txt)", "Read(**/notes.txt)"]}},
    "a PreToolUse hook's deny": {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Write|Read",
                    "hooks": [
                        {
                            "type": "command",
                            "command": f"{shlex.quote(sys.executable)} {shlex.quote(str(HOOK_SCRIPT))} "
                            "deny-notes /dev/null",
                        }
                    ],
                }
            ]
        }
    },
}
"""Each written as the user's own settings (`~/.claude/settings.json`): no trust question."""


def write_rules(home: Path, rules: Mapping[str, Any]) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rules), encoding="utf-8")


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a call came to: "ran" (unasked), "refused" (unasked, with what the model was told) or
    "asked" (the user was asked; the editor here declines)."""

    what: str
    told: str = ""

    def __str__(self) -> str:
        return f"{self.what}: {self.told}" if self.told else self.what


def expected(
    workspace: Path,
    home: Path,
    mode: str,
    question: PermissionQuestion,
    *,
    hooked: bool,
    granted: Grants | None = None,
    read_only: str | None = None,
) -> Outcome:
    """The engine's outcome for `question` in `mode`, the rules read from the same files the agent
    reads (`hooked`: the rule set's PreToolUse hook denies the call)."""
    setup = load_claude_setup(workspace, home=home, config_dir=None, trust_store=None)
    engine = RuleEngine(setup, roots=lambda: (workspace,), home=home, save=False)
    if hooked:
        question = PermissionQuestion(
            question.call_id,
            question.tool_name,
            question.title,
            question.kind,
            question.permission,
            question.raw_input,
            subagent=question.subagent,
            hook=HookVerdict("deny", f"Blocked by a PreToolUse hook: {HOOK_REASON}"),
        )
    return outcome_of(engine.decide(question, mode, granted, read_only=read_only))


def outcome_of(verdict: Verdict) -> Outcome:
    if verdict.action == "allow":
        return Outcome("ran")
    if verdict.action == "deny":
        return Outcome("refused", verdict.message)
    return Outcome("asked")


class Editor:
    """The editor's side: declines every permission question ("reject_once"), keeping each."""

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []

    async def __call__(self, method: str, params: Any) -> Any:
        assert method == "session/request_permission", method
        self.asked.append(params)
        return {"outcome": {"outcome": "selected", "optionId": "reject_once"}}

    def questions(self, session: str) -> list[dict[str, Any]]:
        return [p["toolCall"] for p in self.asked if p["sessionId"] == session]
