"""Steering: what the user sends while a turn runs, for that turn, not the next one.

A session has one `Steering` inbox. It is open from the moment a turn that takes messages is on its
way (`expect`: a prompt queued, or starting: its runtime built, its trust settled) until that turn's
driver ends it (`stop`); the driver opens it too while it runs (`start`). While it is open a
message put there joins the running turn, or the turn about to run, at its next request boundary
(`TurnRunner.join_steering`): after the pending tool results, as user text, before the next
request is counted, so a turn's request limit holds however many messages come. A message that no
request carried by the end of the turn (a budget or a cancel ended it) joins the history then, so
the next turn's first request carries it: nothing the user sent is lost, and no request is added
for it. A closed inbox refuses a message (`put` is False): no turn exists or is starting, and the
session runs it as a prompt of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Expected", "Steering", "SteeringMessage"]


@dataclass(frozen=True, slots=True)
class SteeringMessage:
    """A message for the running turn: `blocks` as the model gets them, `shown` as the editor sent
    them (shown back to it as the user's message, live and on replay)."""

    blocks: list[dict[str, Any]]
    shown: list[dict[str, Any]]


class Expected:
    """A turn on its way that will take the session's messages (`Steering.expect`)."""

    __slots__ = ()


class Steering:
    """A session's inbox of messages for its running turn (or the one about to run), in arrival order."""

    def __init__(self) -> None:
        self._pending: list[SteeringMessage] = []
        self._open = False
        self._expected: list[Expected] = []
        self._holder: Expected | None = None

    @property
    def open(self) -> bool:
        """Whether a turn runs, or is on its way, that takes messages now."""
        return self._open or bool(self._expected)

    def expect(self) -> Expected:
        """A turn that takes messages is queued or starting: messages wait for it from now on,
        until its driver ends it, or `withdraw` (it never ran)."""
        expected = Expected()
        self._expected.append(expected)
        return expected

    def withdraw(self, expected: Expected) -> None:
        """The expected turn is over, or never ran (cancelled while it waited, failed to start)."""
        if expected in self._expected:
            self._expected.remove(expected)
        if self._holder is expected:
            self._holder = None

    def holds(self, expected: Expected | None) -> None:
        """The turn holding the session now (None: one that takes no messages, a command's): its
        driver's `stop` ends its expectation."""
        self._holder = expected

    def start(self) -> None:
        """A turn began: messages join it from now on."""
        self._open = True

    def stop(self) -> None:
        """The turn ends: refuse messages from now on, unless another turn is on its way (those
        waiting stay, to be taken)."""
        self._open = False
        if self._holder is not None:
            self.withdraw(self._holder)

    def put(self, message: SteeringMessage) -> bool:
        """Give the running turn, or the one on its way, `message`; False when none takes it."""
        if not self.open:
            return False
        self._pending.append(message)
        return True

    def pending(self) -> bool:
        return bool(self._pending)

    def take(self) -> list[SteeringMessage]:
        """The messages waiting, oldest first; the inbox is empty after."""
        taken, self._pending = self._pending, []
        return taken
