"""The steering inbox (issue 41 item 11): open from the moment a turn that takes messages is on its
way until that turn's driver ends it, and only then; a turn queued behind keeps it open."""

from __future__ import annotations

from acp_agent.turn.steering import Steering, SteeringMessage

MESSAGE = SteeringMessage([{"type": "text", "text": "m"}], [{"type": "text", "text": "m"}])


def test_a_turn_on_its_way_takes_messages_until_its_driver_ends_it() -> None:
    inbox = Steering()
    assert not inbox.put(MESSAGE)  # nothing runs or starts: the session starts a turn instead
    first = inbox.expect()  # a prompt queues
    assert inbox.put(MESSAGE)  # before its driver starts: it waits for the turn
    inbox.holds(first)  # it takes the session
    inbox.start()
    assert inbox.put(MESSAGE) and len(inbox.take()) == 2
    inbox.stop()  # its driver ends it: no later message is taken by it
    assert not inbox.open and not inbox.put(MESSAGE)
    inbox.withdraw(first)  # the slot's end: nothing more to do
    assert not inbox.open


def test_a_queued_turn_keeps_the_inbox_open_after_the_running_one_ends() -> None:
    inbox = Steering()
    running, queued = inbox.expect(), inbox.expect()
    inbox.holds(running)
    inbox.start()
    inbox.stop()
    assert inbox.put(MESSAGE)  # for the queued turn, about to run
    inbox.holds(queued)
    inbox.start()
    inbox.stop()
    assert not inbox.put(MESSAGE)


def test_a_turn_that_never_ran_withdraws_and_a_command_turn_takes_nothing() -> None:
    inbox = Steering()
    cancelled = inbox.expect()
    inbox.withdraw(cancelled)  # cancelled while it waited
    assert not inbox.open
    inbox.holds(None)  # a command's turn
    inbox.stop()
    assert not inbox.put(MESSAGE)
