"""Steering: what the user sends while a turn runs, for that turn, not the next one.

A session has one `Steering` inbox. The driver opens it when a turn starts and closes it when the
turn ends; while it is open a message put there joins the running turn at its next request
boundary (`TurnRunner.join_steering`): after the pending tool results, as user text, before the
next request is counted. A message that no request carried by the end of the turn (a budget or a
cancel ended it) joins the history then, so the next turn's first request carries it: nothing the
user sent is lost, and no request is added for it. A closed inbox refuses a message (`put` is
False): the session then runs it as a prompt of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Steering", "SteeringMessage"]


@dataclass(frozen=True, slots=True)
class SteeringMessage:
    """A message for the running turn: `blocks` as the model gets them, `shown` as the editor sent
    them (shown back to it as the user's message, live and on replay)."""

    blocks: list[dict[str, Any]]
    shown: list[dict[str, Any]]


class Steering:
    """A session's inbox of messages for its running turn, in arrival order."""

    def __init__(self) -> None:
        self._pending: list[SteeringMessage] = []
        self._open = False

    @property
    def open(self) -> bool:
        """Whether a turn runs that takes messages now."""
        return self._open

    def start(self) -> None:
        """A turn began: messages join it from now on."""
        self._open = True

    def stop(self) -> None:
        """The turn ends: refuse messages from now on (those waiting stay, to be taken)."""
        self._open = False

    def put(self, message: SteeringMessage) -> bool:
        """Give the running turn `message`; False when no turn takes it (none runs, or it ends)."""
        if not self._open:
            return False
        self._pending.append(message)
        return True

    def pending(self) -> bool:
        return bool(self._pending)

    def take(self) -> list[SteeringMessage]:
        """The messages waiting, oldest first; the inbox is empty after."""
        taken, self._pending = self._pending, []
        return taken
