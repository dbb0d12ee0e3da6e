"""The gate every "may this run?" passes: a session's tool calls, its subagents', a command's turn,
a phase of the phased strategy, the plan → act question, a `/rewind`, and an embedder's turn.

A `PermissionGate` holds the one rule engine (`engine.py`), the session's mode (`SessionMode`, the
one live cell: `session/set_mode` and the phased strategy's "allow always" change it mid-turn, so
the gate reads it at each decision) and the asker that asks the user what the engine leaves to
them. A turn's variations are bound on it, never swapped on the asker: a command's `allowed-tools`
(`grants`), a subagent's questions (`subagent`), the plan phase (`read_only`, what a change is
told there: the engine's plan step refuses what changes something).

`verdict` classifies an edit first (a file that makes tools run code is "sensitive", one that
decides what the agent itself may run is "governance": `tools/files/sensitive.py`), then asks the
engine; `check` also asks the asker when the engine says "ask" (one question at a time, the engine
asked again once it is that question's turn). So the order is the engine's for every caller, and
nothing decides elsewhere: an asker only asks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, TypeVar, runtime_checkable

import anyio
import structlog

from acp_agent.permissions.engine import Grants, RuleEngine, Verdict
from acp_agent.permissions.question import (
    ALLOW,
    ALLOW_ALL,
    PermissionAsker,
    PermissionDecision,
    PermissionQuestion,
)
from acp_agent.tools.files.sensitive import guarded_write
from acp_agent.tools.hidden import NOTHING_HIDDEN, HiddenPaths

__all__ = ["ExplainedAsker", "PermissionGate", "SessionMode", "decision_of"]

T = TypeVar("T")

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class SessionMode:
    """A session's permission mode and the modes it offers; `switch` changes it as the session
    does (journaled, the editor told: `on_switch`), or here alone without one."""

    current: str = "default"
    offered: tuple[str, ...] = ()
    on_switch: Callable[[str], Awaitable[None]] | None = None

    async def switch(self, mode: str) -> None:
        if self.on_switch is not None:
            await self.on_switch(mode)
        else:
            self.current = mode


@runtime_checkable
class ExplainedAsker(Protocol):
    """An asker told why the engine asks (the session's: an ask rule's question offers no lasting
    "allow", which the rule would outrank anyway)."""

    async def ask_about(self, question: PermissionQuestion, verdict: Verdict) -> PermissionDecision: ...


def decision_of(verdict: Verdict, question: PermissionQuestion) -> PermissionDecision | None:
    """The decision an allow or a deny is (logged with the step that took it); None for "ask"."""
    if verdict.action == "allow":
        if verdict.step not in ("looks only", "bypass"):
            log.info("permission.allowed", tool=question.tool_name, call_id=question.call_id, by=verdict.step)
        return ALLOW
    if verdict.action == "deny":
        log.info("permission.refused", tool=question.tool_name, call_id=question.call_id, by=verdict.step)
        return PermissionDecision(False, message=verdict.message)
    return None


@dataclass(frozen=True, slots=True)
class PermissionGate:
    """One turn's way to the engine: the engine, the session's mode, the asker, and what the turn
    binds (a command's grants, a subagent's questions, a read-only phase)."""

    engine: RuleEngine
    mode: SessionMode
    asker: PermissionAsker
    grants: Grants | None = None
    subagent: bool = False
    read_only: str | None = None
    """A read-only phase: what a call that changes something is told (None: not read-only)."""
    asking: anyio.Lock = field(default_factory=anyio.Lock, compare=False)
    """One question at a time, across the calls a reply runs at once and the session's subagents
    (every gate bound from this one shares it)."""

    @classmethod
    def without_rules(
        cls,
        roots: Sequence[Path],
        asker: PermissionAsker = ALLOW_ALL,
        hidden: HiddenPaths = NOTHING_HIDDEN,
    ) -> PermissionGate:
        """The gate of a turn with no settings and no session (an embedder's, `turn/inprocess.py`;
        a test's): the engine's order with no rule to weigh, in the default mode, `asker` asked."""
        kept = tuple(roots)
        return cls(RuleEngine.without_rules(lambda: kept, hidden), SessionMode(), asker)

    def bound(
        self,
        *,
        grants: Grants | None = None,
        subagent: bool | None = None,
        read_only: str | None = None,
        asker: PermissionAsker | None = None,
    ) -> PermissionGate:
        """This gate with a turn's variation bound on it (what is not given stays)."""
        return replace(
            self,
            grants=self.grants if grants is None else grants,
            subagent=self.subagent if subagent is None else subagent,
            read_only=self.read_only if read_only is None else read_only,
            asker=self.asker if asker is None else asker,
        )

    async def classified(self, question: PermissionQuestion) -> PermissionQuestion:
        """`question` with an edit's guard named: "governance", "sensitive", or the edit as it is."""
        if question.permission != "edit":
            return question
        raw = question.raw_input
        path = raw.get("path")
        if not isinstance(path, str):
            return question
        new_text = raw.get("content", raw.get("new_string"))
        replacing = raw.get("old_string")
        guard = await guarded_write(
            self.engine.roots(),
            path,
            new_text if isinstance(new_text, str) else None,
            replacing=replacing if isinstance(replacing, str) and "content" not in raw else None,
        )
        return replace(question, permission=guard) if guard is not None else question

    async def verdict(self, question: PermissionQuestion) -> tuple[PermissionQuestion, Verdict]:
        """The engine's verdict on `question` (classified, and marked a subagent's where bound),
        in the mode as it is now; with the question as decided."""
        question = await self.classified(question)
        if self.subagent and not question.subagent:
            question = replace(question, subagent=True)
        return question, self._decide(question)

    def _decide(self, question: PermissionQuestion) -> Verdict:
        return self.engine.decide(question, self.mode.current, self.grants, read_only=self.read_only)

    async def ask(self, question: PermissionQuestion, verdict: Verdict) -> PermissionDecision:
        """Ask the user what the engine left to them (`verdict` is an "ask", from `verdict`): one
        question at a time; once it is this one's turn the engine is asked again, since an
        "always" answered meanwhile (or a mode switched) may settle it with no question."""
        asker = self.asker

        async def asking(verdict: Verdict) -> PermissionDecision:
            if isinstance(asker, ExplainedAsker):
                return await asker.ask_about(question, verdict)
            return await asker.ask(question)

        return await self.ask_in_turn(question, asking)

    async def ask_in_turn(
        self, question: PermissionQuestion, asking: Callable[[Verdict], Awaitable[T]]
    ) -> PermissionDecision | T:
        """One question at a time: once it is this one's turn the engine is asked again (an
        "always" answered meanwhile, or a mode switched, may settle it), and `asking` puts what it
        left to the user (`ask`'s question, or the plan → act question, answered with more than
        allow or reject)."""
        async with self.asking:
            verdict = self._decide(question)
            decided = decision_of(verdict, question)
            if decided is not None:
                return decided
            return await asking(verdict)

    def settled(self, questions: Sequence[PermissionQuestion]) -> PermissionDecision | None:
        """The engine's decision on one change made of several calls (a rewind's files, each as
        `verdict` gave it), in the mode as it is now: the first refusal, else allowed when every
        call is, else None (the user is asked)."""
        decisions = [decision_of(self._decide(q), q) for q in questions]
        refused = next((d for d in decisions if d is not None and not d.allowed), None)
        if refused is not None:
            return refused
        return ALLOW if all(d is not None for d in decisions) else None

    async def confirm(
        self, questions: Sequence[PermissionQuestion], go_ahead: Callable[[], Awaitable[bool]]
    ) -> PermissionDecision:
        """`ask` for one change made of `questions` that the user answers only "go ahead" or
        "cancel" (a rewind: there is no "always" to offer): one question at a time, the engine
        asked again once it is this one's turn (`settled`), then `go_ahead` (the editor's question)
        decides what it left to the user; a cancel's message is ""."""
        async with self.asking:
            decided = self.settled(questions)
            if decided is not None:
                return decided
            return ALLOW if await go_ahead() else PermissionDecision(False, message="")

    async def check(self, question: PermissionQuestion) -> PermissionDecision:
        """Decide, and ask the asker when the engine says "ask"."""
        question, verdict = await self.verdict(question)
        decided = decision_of(verdict, question)
        return decided if decided is not None else await self.ask(question, verdict)
