"""The permission seam: the loop asks before a tool that edits or executes, and obeys the answer.

`permission` is "edit", "execute", or "sensitive": an edit of a file that makes tools run code
(`tools/files/sensitive.py`), which is asked in every mode but bypassPermissions; or "none", a
call that asks nothing by default (a read, the plan, a subagent), which only an asker that weighs
rules sees (`RuledAsker`: a settings rule may refuse it or ask).

The rule engine (`engine.py`) decides on a question; the session's asker (`session/editor/`,
`session/request_permission`) asks the user what the engine leaves to them.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from acp_agent.tools.base import Preview

__all__ = [
    "ALLOW",
    "ALLOW_ALL",
    "HookVerdict",
    "PermissionAsker",
    "PermissionDecision",
    "PermissionQuestion",
    "RuledAsker",
    "question_asker",
    "settle",
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

    `permission` is "edit", "execute", "sensitive" (above), "switch_mode" (the phased strategy's
    plan → act question, for an asker that is no `PlanApprover`) or "none" (a call that asks
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


@runtime_checkable
class RuledAsker(Protocol):
    """An asker that weighs rules: it decides every call, those that need no permission included,
    and says first, without asking anyone, what it can (`settle`)."""

    def settle(self, question: PermissionQuestion) -> PermissionDecision | None:
        """The decision on `question` without a question to the user, or None when the user must
        be asked (then `ask` asks)."""
        ...


def settle(asker: PermissionAsker, question: PermissionQuestion) -> PermissionDecision | None:
    """What `asker` decides on `question` without asking the user: a `RuledAsker` says; any other
    allows a call that needs no permission ("none") and leaves the rest to `ask`."""
    if isinstance(asker, RuledAsker):
        return asker.settle(question)
    if question.hook is not None and question.hook.decision == "deny":  # no rules: the hook's deny holds
        return PermissionDecision(False, message=question.hook.reason)
    return ALLOW if question.permission == "none" else None


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
