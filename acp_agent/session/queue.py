"""A session's prompts in arrival order: the first one runs, the others wait their turn.

Toad (and any client that lets the user type while the agent works) sends `session/prompt` while a
turn runs; the prompt is queued, runs when the turns before it have ended, and is answered in
order (docs/decisions.md D3). At most `limit` prompts wait; a cancel ends the running one and every waiting
one, each still answered in order. Once `close`d (session/close or session/delete began) no new
prompt runs: a queued one ends `cancelled`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio

from acp_agent.errors import RpcError

__all__ = ["MAX_WAITING", "PromptLine", "RunningTurn"]

MAX_WAITING = 8
"""Prompts that may wait behind the running one in a session."""


@dataclass(slots=True)
class RunningTurn:
    """A turn of a session, running or waiting in its line."""

    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    done: anyio.Event = field(default_factory=anyio.Event)
    cancelled: bool = False


class PromptLine:
    """The turns of one session, running (the first) and waiting (the rest), in FIFO order."""

    def __init__(self, limit: int = MAX_WAITING) -> None:
        self.limit = limit
        self.turns: deque[RunningTurn] = deque()
        self.running: RunningTurn | None = None
        """The turn that holds the session now (None while idle, or while the head still waits
        for its caller to enter it)."""
        self.closing = False

    @property
    def waiting(self) -> int:
        return max(0, len(self.turns) - 1)

    @asynccontextmanager
    async def turn(self, session_id: str) -> AsyncIterator[RunningTurn]:
        """Wait for every turn ahead to end, then hold the session until the block exits.

        The turn's `cancelled` flag is already set when a cancel came while it waited: the caller
        answers `cancelled` without running it. Raises `RpcError.queue_full` (-32001) when the line is full.
        """
        self.check_room(session_id)
        turn = RunningTurn()
        self.turns.append(turn)
        try:
            while self.turns[0] is not turn:  # the head may leave early (its request cancelled)
                await self.turns[0].done.wait()
            self.running = turn
            yield turn
        finally:
            if self.running is turn:
                self.running = None
            self.turns.remove(turn)
            turn.done.set()

    def check_room(self, session_id: str) -> None:
        """Raises `RpcError.queue_full` (-32001) when no other prompt may wait in this line."""
        if self.waiting >= self.limit:
            raise RpcError.queue_full(
                f"The prompt queue of this session is full: {self.limit} "
                f"prompts are already waiting for the running turn; wait for one to "
                f"finish or cancel them",
                {"sessionId": session_id, "waiting": self.waiting},
            )

    def cancel(self) -> bool:
        """End the running turn and mark every waiting one cancelled; True when there was any."""
        for turn in self.turns:
            turn.cancelled = True
            turn.scope.cancel()
        return bool(self.turns)

    def close(self) -> None:
        """No new prompt runs from now on (a queued one ends `cancelled`)."""
        self.closing = True
