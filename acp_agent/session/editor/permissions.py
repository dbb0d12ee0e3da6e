"""Asking the user: the session's asker, which only asks.

What may run without a question, what is refused and what is asked is the rule engine's, through
the turn's gate (`permissions/gate.py`, `permissions/engine.py`: the settings' rules, the mode,
the "always" answers, a command's `allowed-tools`, the sensitive-path guard, in one documented
order); this module asks the user what the engine leaves to them (`ask_about`, told why), and
keeps their "always" answers through the engine (in
`.claude/settings.local.json` where Claude Code keeps them, or for the session: the option's name
says which). A rejection tells the model the user declined; a cancelled question ends the turn
`cancelled`. Only a `selected` outcome naming an offered option allows anything: every other
answer is a rejection, and the log says why.

Under the managed policy's `allowManagedPermissionRulesOnly` the policy's rules are the only
ones (the engine's to weigh, `RuleSource.only_policy_rules`): no "always" answer is offered (nor
kept), and a command's `allowed-tools` allows nothing without a question (Claude Code ignores
`--allowedTools` under it: stricter here, a command file is a file the policy does not govern).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from acp_agent.claude_code.setup.setup import PERMISSION_MODES, ClaudeSetup
from acp_agent.claude_code.setup.write_guard import what_it_enables
from acp_agent.errors import RpcError
from acp_agent.permissions.engine import PLAN_REFUSED, RuleEngine, Verdict
from acp_agent.permissions.gate import SessionMode
from acp_agent.permissions.question import ALLOW, PermissionDecision, PermissionQuestion
from acp_agent.session.editor.updates import permission_tool_call
from acp_agent.session.requester import Requester
from acp_agent.turn.journal.entries import ToolCallShown

if TYPE_CHECKING:
    from acp_agent.turn.strategies.phased import PlanQuestion

__all__ = ["PLAN_REFUSED", "SessionPermissions", "read_answer"]

log = structlog.get_logger(__name__)

OPTIONS = [
    {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
    {"optionId": "reject_always", "name": "Always reject", "kind": "reject_always"},
]

OPTION_IDS = frozenset(o["optionId"] for o in OPTIONS)
CONFIRM_OPTIONS = [
    ("allow_once", "Go ahead", "allow_once", "once"),
    ("reject_once", "Cancel", "reject_once", "reject"),
]
"""(option id, name, kind, answer) of a question about what the user asked for (`confirm`)."""
LOGGED_ANSWER_CHARS = 200

DECLINED = "The user declined this tool call. Do not retry it; ask the user or try another way."
UNREADABLE = (
    "The editor's answer to the permission question was not a valid choice, so the tool "
    "call was not run. Ask the user before trying it again."
)


def default_engine() -> RuleEngine:
    """An engine with no settings and nothing saved (an asker built without a session's)."""
    root = Path("/")
    return RuleEngine.without_rules(lambda: (root,))


class SessionPermissions:
    """The session's PermissionAsker: the user answers what the rule engine asks; with its mode
    (`SessionMode`, the cell the session's gate reads) and its way to switch it."""

    def __init__(
        self,
        session_id: str,
        requester: Requester,
        mode: str = "default",
        *,
        on_switch: Callable[[str], Awaitable[None]] | None = None,
        engine: RuleEngine | None = None,
        modes: tuple[str, ...] = PERMISSION_MODES,
        setup: ClaudeSetup | None = None,
    ) -> None:
        self.session_id = session_id
        self.requester = requester
        self.cell = SessionMode(mode, modes, on_switch)
        """The session's mode and the modes it offers (no bypassPermissions where a settings file
        disables it); its gate reads the mode at each decision."""
        self.engine = engine or default_engine()
        """The session's rule engine: what an "always" option would keep, and keeping it."""
        self.setup = setup
        """The session's Claude Code setup (a governance write's question says what it enables)."""
        self.notify: Callable[[str, str], Awaitable[None]] | None = None
        """The session's Notification hooks (`claude/hooks.py`), told before a question is sent."""

    @property
    def mode(self) -> str:
        return self.cell.current

    @mode.setter
    def mode(self, mode: str) -> None:
        self.cell.current = mode

    @property
    def modes(self) -> tuple[str, ...]:
        return self.cell.offered

    async def switch_mode(self, mode_id: str) -> None:
        """For a strategy (phased: "allow always" switches to acceptEdits): the session's switch
        (journaled, the editor told), or here alone without one."""
        await self.cell.switch(mode_id)

    async def approve_plan(self, question: PlanQuestion) -> str:
        """The plan → act question; answers always | once | reject | cancelled."""
        tool_call = permission_tool_call(
            question.call_id,
            question.title,
            "switch_mode",
            question.raw_input,
            ToolCallShown(text=question.text),
        )
        return await self._choose(tool_call, [(o, n, k, a) for o, n, k, a in question.options])

    async def confirm(self, call_id: str, title: str, kind: str, shown: ToolCallShown) -> str:
        """A yes/no question about something the user asked for (`/rewind N`, with what it will
        change), once the engine left it to the user; answers once | reject | cancelled."""
        tool_call = permission_tool_call(call_id, title, kind, {}, shown)
        options = [
            ("allow_once", "Go ahead", "allow_once", "once"),
            ("reject_once", "Cancel", "reject_once", "reject"),
        ]
        return await self._choose(tool_call, options)

    async def _choose(self, tool_call: dict[str, Any], options: list[tuple[str, str, str, str]]) -> str:
        """Ask with these (option id, name, kind, answer) options; the chosen answer, "cancelled",
        or "reject" for anything else (an error, an option not offered)."""
        params = {
            "sessionId": self.session_id,
            "options": [{"optionId": o, "name": n, "kind": k} for o, n, k, _ in options],
            "toolCall": tool_call,
        }
        try:
            answer = await self.requester.request("session/request_permission", params)
        except RpcError as exc:
            log.warning("permission.client_error", code=exc.code)
            return "reject"
        answers = {o: a for o, _, _, a in options}
        kind, option = read_answer(answer, answers)
        if kind == "cancelled":
            return "cancelled"
        return answers[option] if kind == "selected" and option else "reject"

    async def ask(self, question: PermissionQuestion) -> PermissionDecision:
        """Ask the user about `question` (an asker's plain form: as the mode would ask)."""
        return await self.ask_about(question, Verdict("ask", step="default"))

    async def ask_about(self, question: PermissionQuestion, verdict: Verdict) -> PermissionDecision:
        """Ask the user what the engine left to them (`verdict`, an "ask": why it asks decides
        which "always" options are offered), and keep an "always" answer through the engine."""
        options = self._options(question, verdict)
        grants: dict[str, str] = {}
        shown = await question.preview() if question.preview is not None else None
        if question.permission == "governance" and shown is not None and shown.diffs:
            diff = shown.diffs[0]  # the agent's own settings, hooks, servers or imports: say what
            setup = self.setup or ClaudeSetup(self.engine.setup.cwd, self.engine.setup.cwd)
            enables = what_it_enables(diff.path, diff.old_text, diff.new_text, setup)
            shown = replace(shown, text=f"{shown.text}\n\n{enables}" if shown.text else enables)
        # Shown before approval: the diff, or the command and its cwd, as the final update shows it.
        tool_call = permission_tool_call(
            question.call_id,
            question.title,
            question.kind,
            question.raw_input,
            None if shown is None else ToolCallShown.of_preview(shown),
            question.tool_name,
        )
        if shown is not None and shown.grants:  # e.g. "Allow once, with .git hooks writable"
            grants = {f"allow_once:{g.id}": g.id for g in shown.grants}
            extra = [
                {"optionId": f"allow_once:{g.id}", "name": g.label, "kind": "allow_once"}
                for g in shown.grants
            ]
            options = [options[0], *extra, *options[1:]]
        params = {"sessionId": self.session_id, "options": options, "toolCall": tool_call}
        if self.notify is not None:
            await self.notify(f"acp-agent needs your permission: {question.title}", "permission_prompt")
        try:
            answer = await self.requester.request("session/request_permission", params)
        except RpcError as exc:
            log.warning("permission.client_error", code=exc.code)
            return PermissionDecision(
                False, message=f"Could not ask the user ({exc.message}); the tool call was not run."
            )
        offered = {o["optionId"] for o in options}
        return await self._decide(question, answer, grants, offered)

    def _options(self, question: PermissionQuestion, verdict: Verdict) -> list[dict[str, str]]:
        """The four choices, each "always" named with the rules it keeps and where (`Always allow
        Bash(npm test *) (saved to .claude/settings.local.json)`), and "Always allow" left out
        where an ask rule forced the question: the rule would ask again anyway."""
        options = []
        for option in OPTIONS:
            if option["kind"] in ("allow_always", "reject_always"):
                lasting = self.engine.lasting(question, verdict, allow=option["kind"] == "allow_always")
                if lasting is None:
                    continue
                where, rules = lasting
                saved = "saved to " + where if where.endswith(".json") else where
                named = (
                    ", ".join(rules)
                    if rules
                    else "this exact command line"
                    if question.tool_name == "run_command"
                    else ""
                )
                option = {**option, "name": " ".join(filter(None, (option["name"], named, f"({saved})")))}
            options.append(option)
        return options

    async def _decide(
        self, question: PermissionQuestion, answer: Any, grants: dict[str, str], offered: set[str]
    ) -> PermissionDecision:
        """`grants`: the offered grant options (option id → grant id), never remembered."""
        kind, option = read_answer(answer, offered | grants.keys())
        if kind == "cancelled":
            return PermissionDecision(False, cancelled=True)
        if kind != "selected":
            return PermissionDecision(False, message=UNREADABLE)
        if option in grants:
            return PermissionDecision(True, grants=frozenset({grants[option]}))
        if option in ("allow_always", "reject_always"):
            where = await self.engine.remember(question, allow=option == "allow_always")
            log.info("permission.remembered", tool=question.tool_name, answer=option, where=where)
        if option in {"allow_once", "allow_always"}:
            return ALLOW
        return PermissionDecision(False, message=DECLINED)


def read_answer(answer: Any, offered: Collection[str]) -> tuple[str, str | None]:
    """("selected", optionId), ("cancelled", None) or ("invalid", None) for a permission answer.

    Valid answers are `{"outcome": {"outcome": "cancelled"}}` and `{"outcome": {"outcome":
    "selected", "optionId": <one of the offered ids>}}`; anything else is logged with the reason.
    """
    outcome = answer.get("outcome") if isinstance(answer, dict) else None
    kind = outcome.get("outcome") if isinstance(outcome, dict) else None
    option = outcome.get("optionId") if isinstance(outcome, dict) else None
    if kind == "cancelled":
        return "cancelled", None
    if kind == "selected" and isinstance(option, str) and option in offered:
        return "selected", option
    if not isinstance(outcome, dict):
        why = "the answer has no outcome object"
    elif kind != "selected":
        why = f'outcome.outcome is {_short(kind)}, not "selected" or "cancelled"'
    elif not isinstance(option, str):
        why = f"outcome.optionId is not a string: {_short(option)}"
    else:
        why = f"outcome.optionId {_short(option)} was not offered"
    log.warning("permission.invalid_answer", why=why, answer=_short(answer), treated_as="rejected")
    return "invalid", None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= LOGGED_ANSWER_CHARS else text[:LOGGED_ANSWER_CHARS] + "…"
