"""The permission question: what a caller asks before a call runs, and the seam that asks the user.

`permission` is "edit", "execute", "sensitive" (an edit of a file that makes tools run code,
`tools/files/sensitive.py`: asked in every mode but bypassPermissions), "governance" (an edit of
a file that decides what the agent itself may run: asked in every mode), "switch_mode" (plan →
act), or "none": a call that asks nothing by default (a read, the plan, a subagent), which a rule
may still refuse or ask about.

The rule engine (`engine.py`) decides on every question, through the gate (`gate.py`); an asker
(`PermissionAsker`: the session's, `session/editor/permissions.py`, sends
`session/request_permission`; an embedder's is its own) only asks the user what the engine leaves
to them.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol

from acp_agent.tools.base import Preview

__all__ = [
    "ALLOW",
    "ALLOW_ALL",
    "HookVerdict",
    "PermissionAsker",
    "PermissionDecision",
    "PermissionQuestion",
    "question_asker",
]


@dataclass(frozen=True, slots=True)
class HookVerdict:
    """What the PreToolUse hooks decided of a call (deny over ask over allow), for the permission
    asker to weigh with its rules: a hook's allow never overrides a deny or ask rule, its deny
    refuses whatever an allow rule says. `reason` is what the model is told of a deny."""

    decision: Literal["allow", "deny", "ask"]
    reason: str = ""


@dataclass(frozen=True, slots=True)
class PermissionDecision:
    """`allowed` runs the tool; `cancelled` ends the turn; otherwise `message` tells the model why not.

    `grants`: the ids of the preview's `Grant`s the user chose for this one call.
    """

    allowed: bool
    cancelled: bool = False
    message: str = ""
    grants: frozenset[str] = frozenset()


ALLOW = PermissionDecision(True)


@dataclass(frozen=True, slots=True)
class PermissionQuestion:
    """One tool call that asks before it runs: what the asker decides on, and what the user sees.

    `permission` is "edit", "execute", "sensitive", "governance" (above), "switch_mode" (the phased
    strategy's plan → act question, for an asker that is no `PlanApprover`) or "none" (a call that asks
    nothing by default: a read, the plan, a `task` call, whose `Agent(name)` rules read the type in
    `raw_input["subagent_type"]`); `title` and `kind` are the call's as the editor shows them,
    `raw_input` its validated arguments. `preview()` computes what the call would change (a diff,
    a command line): await it only when asking the user. `subagent`: a subagent makes the call.
    `hook`: what the PreToolUse hooks answered, weighed with the rules (a hook's allow never beats
    a deny or ask rule; its deny refuses).
    """

    call_id: str
    tool_name: str
    title: str
    kind: str
    permission: str
    raw_input: dict[str, Any]
    preview: Callable[[], Awaitable[Preview | None]] | None = None
    subagent: bool = False
    hook: HookVerdict | None = None


class PermissionAsker(Protocol):
    async def ask(self, question: PermissionQuestion) -> PermissionDecision: ...


class AllowAll:
    """For runs with nobody to ask (and for tests of the loop alone)."""

    async def ask(self, question: PermissionQuestion) -> PermissionDecision:
        return ALLOW


ALLOW_ALL = AllowAll()
"""The one `AllowAll` (it holds nothing)."""


class _KeywordAsker:
    """An embedder's asker written for the keyword form of `ask` (`ask(*, call_id, tool_name,
    title, kind, permission, raw_input, preview=None)`, up to 0.2), asked with a question."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def ask(self, question: PermissionQuestion) -> PermissionDecision:
        keywords = asdict(question)
        del keywords["subagent"], keywords["hook"]  # newer than the keyword form
        decision: PermissionDecision = await self.inner.ask(**keywords)
        return decision


def question_asker(asker: PermissionAsker) -> PermissionAsker:
    """`asker` as the loop asks it (`ask(question)`). One written for the keyword form of `ask` (up
    to 0.2) is wrapped, with a DeprecationWarning: it keeps working for one more release."""
    first = next(iter(inspect.signature(asker.ask).parameters.values()), None)
    if first is None or first.kind not in (first.KEYWORD_ONLY, first.VAR_KEYWORD):
        return asker
    warnings.warn(
        f"{type(asker).__name__}.ask takes keyword arguments: the loop now asks "
        "`ask(question: PermissionQuestion)`; the keyword form goes in the release after next",
        DeprecationWarning,
        stacklevel=3,
    )
    return _KeywordAsker(asker)
