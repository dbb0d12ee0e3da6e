"""What the editor sees of a subagent, and how it asks permission: through the parent's tool call.

A subagent's loop emits the same events as any loop; `ChildProgress` is its sink, and turns them
into the content of the one tool call the editor knows, the parent's `task` call: a short line per
tool call the subagent makes ("Read src/app.py", "Search 'retry'"), replaced as it goes (ACP's
`tool_call_update` replaces content). Its text, thoughts and usage are not shown: only its final
answer is, as the call's result. A call that asks permission (a subagent allowed to edit) is also
shown as a call of its own, announced before its question, so the editor can show the question,
the diff and the outcome where it expects them (`ChildAsker`).

A client that advertises ACP's unstable `subagents` may also be shown each subagent as a child
session of its own (`ChildSessions`, implemented by the session layer): its whole live traffic,
text included, goes there too (`Both`), while the parent's tool call stays as it is; and it may
cancel that subagent alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from acp_agent.permissions.engine import Verdict
from acp_agent.permissions.gate import ExplainedAsker
from acp_agent.permissions.question import PermissionAsker, PermissionDecision, PermissionQuestion
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

__all__ = ["MAX_LINES", "Both", "ChildAsker", "ChildProgress", "ChildSession", "ChildSessions"]

MAX_LINES = 40
"""The most lines shown while a subagent runs (the earlier ones are counted), so the bytes sent
for one subagent grow with its tool calls, never with their square."""


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
class ChildAsker:
    """A subagent's asker: the session's own, asked the questions the user would see, each titled
    with the subagent's description and shown as a call of its own first (one at a time across
    the turn's subagents: the gate's). It only asks: what the subagent may do is the engine's,
    through the turn's gate bound to its questions (`PermissionGate.bound(subagent=True)`), so a
    rule, a hook's deny and the mode hold for a subagent as for the session."""

    asker: PermissionAsker
    progress: ChildProgress
    description: str

    async def ask(self, question: PermissionQuestion) -> PermissionDecision:
        return await self.asker.ask(await self._shown(question))

    async def ask_about(self, question: PermissionQuestion, verdict: Verdict) -> PermissionDecision:
        """As `ask`, telling the session's asker why the engine asks (`ExplainedAsker`)."""
        if not isinstance(self.asker, ExplainedAsker):
            return await self.ask(question)
        return await self.asker.ask_about(await self._shown(question), verdict)

    async def _shown(self, question: PermissionQuestion) -> PermissionQuestion:
        question = replace(question, title=f"{self.description}: {question.title}", subagent=True)
        await self.progress.show_own(question.call_id, question.title, question.kind, question.raw_input)
        return question
