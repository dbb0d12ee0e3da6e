"""Subagents as child sessions, for a client that advertises ACP's unstable `subagents`.

Each `task` call gets a fresh session id. The parent session is told of it first (a
`subagent_update` with the task's description as its title, state `running`, and the `cancel`
capability), then the child's session gets its task as a `session_message` from the parent, then
its own live events (its text, thoughts, tool calls and their updates) go out as `session/update`s
with the child's id, built by the same relay and builder as the parent's; when it ends, a last
`subagent_update` clears the capability and gives its state: `idle` with the stop reason
(`end_turn`, `max_tokens`, `max_turn_requests`, `refusal`, `cancelled`, or `error` with the
failure) and its usage.

While it runs, a `session/cancel` naming the child cancels that subagent alone (`Session.subagents`
holds how; the manager looks there for an id that is no session of its own): its partial answer
goes back to the parent's `task` call, and the parent's turn goes on. The answer is not sent again
as a `session_message` to the parent: the parent's `task` call shows it already.

A child session is shown, never kept: it is not journaled, so `session/list` never lists it,
and the manager does not know its id, so a request naming it (prompt, load, set_mode, …) is
answered with the usual unknown-session error.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from acp_agent.errors import INTERNAL_ERROR
from acp_agent.protocol.lifecycle import ClientCapabilities
from acp_agent.session.editor.relay import UPDATE, Relay
from acp_agent.session.editor.updates import session_message, subagent_update
from acp_agent.session.requester import Requester
from acp_agent.turn.meter import Subagent
from acp_agent.turn.record import SubagentRecord

__all__ = ["ChildSessionShown", "SubagentSessions", "ended_state"]

UNEXPECTED = "the subagent stopped unexpectedly"


@dataclass(slots=True)
class ChildSessionShown:
    """One subagent's session: its relay, and its parent told how it ended."""

    session_id: str
    parent_id: str
    requester: Requester
    sink: Relay
    running: dict[str, Callable[[], None]]
    """The parent session's running subagents (`Session.subagents`): this one leaves it when it ends."""

    async def ended(self, subagent: Subagent) -> None:
        self.running.pop(self.session_id, None)  # a cancel naming it from now on is ignored
        update = subagent_update(self.session_id, cancel=False, state=ended_state(subagent))
        await self.requester.notify(UPDATE, {"sessionId": self.parent_id, "update": update})


@dataclass(slots=True, frozen=True)
class SubagentSessions:
    """The `ChildSessions` of one parent session (the turn's `task` tool opens them)."""

    parent_id: str
    requester: Requester
    capabilities: ClientCapabilities
    running: dict[str, Callable[[], None]]
    """The parent session's `subagents`: where a `session/cancel` naming a child finds it."""

    async def open(self, title: str, task: str, cancel: Callable[[], None]) -> ChildSessionShown:
        child_id = f"sess_{uuid.uuid4().hex}"
        self.running[child_id] = cancel  # before the client hears of it, so it may cancel at once
        update = subagent_update(child_id, title=title, cancel=True, state={"state": "running"})
        told = session_message(str(uuid.uuid4()), self.parent_id, child_id, task)  # its task, from the parent
        try:
            await self.requester.notify(UPDATE, {"sessionId": self.parent_id, "update": update})
            await self.requester.notify(UPDATE, {"sessionId": child_id, "update": told})
        except BaseException:
            del self.running[child_id]
            raise
        relay = Relay(child_id, self.requester, journal=None, capabilities=self.capabilities)
        return ChildSessionShown(child_id, self.parent_id, self.requester, relay, self.running)


def ended_state(subagent: Subagent) -> dict[str, Any]:
    """The `idle` state of a subagent that ended: its stop reason, the failure, and its usage.

    The stop is the turn record's (`SubagentRecord`), but a subagent that ended with no stop of
    its own (an exception the tool did not expect) failed: it is an `error` here, not a cancel.
    """
    record = SubagentRecord.of(subagent)
    stop = record.stop if subagent.stop is not None or subagent.error else "error"
    state: dict[str, Any] = {"state": "idle", "stopReason": stop}
    if stop == "error":
        state["error"] = {"code": INTERNAL_ERROR, "message": subagent.error or UNEXPECTED}
    read, written = record.cache_read_input_tokens, record.cache_creation_input_tokens
    state["usage"] = {  # the API's input_tokens leave out the cached ones; ACP's total sums all
        "totalTokens": record.input_tokens + record.output_tokens + read + written,
        "inputTokens": record.input_tokens,
        "outputTokens": record.output_tokens,
        "cachedReadTokens": read,
        "cachedWriteTokens": written,
    }
    return state
