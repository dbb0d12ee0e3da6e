"""What the editor sees of a subagent, and how it asks permission: through the parent's tool call.

A subagent's loop emits the same events as any loop; `ChildProgress` is its sink, and turns them
into the content of the one tool call the editor knows, the parent's `task` call: a short line per
tool call the subagent makes ("Read src/app.py", "Search 'retry'"), replaced as it goes (ACP's
`tool_call_update` replaces content). Its text, thoughts and usage are not shown: only its final
answer is, as the call's result. A call that asks permission (a subagent allowed to edit) is also
shown as a call of its own, announced before its question, so the editor can show the question,
the diff and the outcome where it expects them (`ChildPermissions`).

A client that advertises ACP's unstable `subagents` may also be shown each subagent as a child
session of its own (`ChildSessions`, implemented by the session layer): its whole live traffic,
text included, goes there too (`Both`), while the parent's tool call stays as it is; and it may
cancel that subagent alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from acp_agent.permissions.question import (
    ALLOW,
    PermissionAsker,
    PermissionDecision,
    PermissionQuestion,
    RuledAsker,
)
from acp_agent.turn.events import (
    EventSink,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    ToolCallUpdated,
    TurnEvent,
)

if TYPE_CHECKING:
    from acp_agent.turn.meter import Subagent

__all__ = ["MAX_LINES", "Both", "ChildPermissions", "ChildProgress", "ChildSession", "ChildSessions"]

MAX_LINES = 40
"""The most lines shown while a subagent runs (the earlier ones are counted), so the bytes sent
for one subagent grow with its tool calls, never with their square."""
CHANGES_REFUSED = (
    "Refused: a subagent may edit files or run commands only when the session's mode is "
    "acceptEdits or bypassPermissions. Report what should change instead."
)


@dataclass(slots=True)
class ChildProgress:
    """A subagent's EventSink: its tool calls become lines of the parent call `call_id`."""

    sink: EventSink
    """The parent loop's sink (the session's relay)."""
    call_id: str
    lines: list[str] = field(default_factory=list)
    _line_of: dict[str, int] = field(default_factory=dict)
    _own: set[str] = field(default_factory=set)
    """The subagent's calls shown as calls of their own (they asked permission)."""

    async def emit(self, event: TurnEvent) -> None:
        call_id = getattr(event, "call_id", None)
        if call_id in self._own and isinstance(event, ToolCallUpdated | ToolCallProgress | ToolCallFinished):
            await self.sink.emit(event)
        if isinstance(event, ToolCallStarted):
            self._line_of[event.call_id] = len(self.lines)
            self.lines.append(event.title)
        elif isinstance(event, ToolCallFinished) and event.shown.status == "failed":
            index = self._line_of.get(event.call_id)
            if index is None:
                return
            self.lines[index] += " (failed)"
        else:
            return  # text, thoughts, usage: the subagent's answer is its result, nothing else
        await self.sink.emit(ToolCallProgress(self.call_id, self.text()))

    def text(self) -> str:
        """The lines as shown: the latest `MAX_LINES`, after a count of the earlier ones."""
        lines = self.lines
        if len(lines) <= MAX_LINES:
            return "\n".join(lines)
        return "\n".join([f"… {len(lines) - MAX_LINES} earlier tool calls", *lines[-MAX_LINES:]])

    async def show_own(self, call_id: str, title: str, kind: str, raw_input: dict[str, Any]) -> None:
        """Announce one of the subagent's calls as a call of its own (before its question)."""
        if call_id not in self._own:
            self._own.add(call_id)
            await self.sink.emit(ToolCallStarted(call_id, title, kind, raw_input))


class ChildSession(Protocol):
    """One subagent shown as a session of its own: where its events go, and how it ends."""

    @property
    def sink(self) -> EventSink:
        """Where the subagent's events go, to be shown in its own session."""
        ...

    async def ended(self, subagent: Subagent) -> None:
        """The subagent ended as `subagent` says (its stop, limit or error, and its figures)."""
        ...


class ChildSessions(Protocol):
    """Where a client that shows subagents as sessions of their own is told of a new one."""

    async def open(self, title: str, task: str, cancel: Callable[[], None]) -> ChildSession:
        """Announce a subagent (before any of its traffic) and tell its session its `task`; until it
        ends, the client may `cancel()` it alone (the turn goes on). Return its session."""
        ...


@dataclass(slots=True, frozen=True)
class Both:
    """An EventSink that hands every event to two sinks, in order."""

    first: EventSink
    second: EventSink

    async def emit(self, event: TurnEvent) -> None:
        await self.first.emit(event)
        await self.second.emit(event)


@dataclass(slots=True)
class ChildPermissions:
    """A subagent's PermissionAsker: the session's own, asked the questions the user would see,
    one at a time across the turn's subagents, each titled with the subagent's description.

    Its questions are marked as a subagent's (`PermissionQuestion.subagent`): an asker that weighs
    rules (`RuledAsker`, the session's) decides on them, and lets a subagent change something only
    in the modes that allow it. For any other asker, `may_change()` says whether the mode lets a
    subagent edit or execute now; when it does not, the call is refused without a question.
    """

    asker: PermissionAsker
    progress: ChildProgress
    description: str
    may_change: Callable[[], bool]
    asking: anyio.Lock
    """Shared by the session's subagents: one question at a time."""

    def settle(self, question: PermissionQuestion) -> PermissionDecision | None:
        """What is decided without a question (`RuledAsker`)."""
        if isinstance(self.asker, RuledAsker):
            return self.asker.settle(self._marked(question))
        if question.permission == "none":
            return ALLOW
        return None if self.may_change() else PermissionDecision(False, message=CHANGES_REFUSED)

    async def ask(self, question: PermissionQuestion) -> PermissionDecision:
        decision = self.settle(question)
        if decision is not None:
            return decision
        question = self._marked(question)
        async with self.asking:
            await self.progress.show_own(question.call_id, question.title, question.kind, question.raw_input)
            return await self.asker.ask(question)

    def _marked(self, question: PermissionQuestion) -> PermissionQuestion:
        return replace(question, title=f"{self.description}: {question.title}", subagent=True)
