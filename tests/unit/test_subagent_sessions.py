"""Subagents as child sessions, in-process (ACP's unstable `subagents`, D27): the capability read
from `initialize`, what the parent is told when a child starts and how it ended, the child's events
under its own id, and every update valid against the official unstable schema."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from acp_agent.limits import Limits
from acp_agent.model.base import Usage
from acp_agent.protocol.lifecycle import ClientCapabilities, InitializeRequest
from acp_agent.session.state import Session, cancel_subagent
from acp_agent.session.subagents.sessions import UNEXPECTED, SubagentSessions
from acp_agent.turn.events import TextChunk, ToolCallStarted
from acp_agent.turn.meter import Limit, Subagent, TurnMeter
from acp_agent.turn.settings import RunnerSettings
from acp_agent.turn.stop import TurnStop
from tests.support.schema import AcpSchema
from tests.support.sessions import make_session

PARENT = f"sess_{'a' * 32}"


@pytest.fixture(scope="module")
def unstable(acp_unstable_schema: AcpSchema) -> AcpSchema:
    return acp_unstable_schema


class Requests:
    """A Requester that keeps what it was asked to send."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        assert method == "session/update"
        self.sent.append(params)

    def notifier(
        self, method: str, params: dict[str, Any], path: Sequence[str]
    ) -> Callable[[str], Awaitable[None]]:
        async def send(value: str) -> None:
            update = dict(params["update"], content={"type": "text", "text": value})
            await self.notify(method, {**params, "update": update})

        return send

    async def request(self, method: str, params: dict[str, Any], *, timeout: float | None = None) -> Any:
        raise AssertionError("a child session asks the client nothing")


def subagent(**ended: Any) -> Subagent:
    child = TurnMeter(Limits()).child("Find it")
    child.meter.tokens_used(Usage(input_tokens=7, output_tokens=3, cache_read_input_tokens=100))
    if ended:
        child.ended(**ended)
    return child


def valid(schema: AcpSchema, params: dict[str, Any]) -> list[str]:
    return schema.validate("SessionNotification", params)


@pytest.mark.parametrize(
    ("caps", "shown"),
    [({"subagents": {}}, True), ({"subagents": None}, False), ({"subagents": "yes"}, False), ({}, False)],
)
def test_only_an_object_advertises_subagents(caps: dict[str, Any], shown: bool) -> None:
    request = InitializeRequest.model_validate({"protocolVersion": 1, "clientCapabilities": caps})
    assert request.client_capabilities.subagent_sessions is shown


@pytest.mark.parametrize(
    ("ended", "stop"),
    [
        ({"stop": TurnStop.END_TURN}, "end_turn"),
        ({"stop": TurnStop.LIMIT, "limit": Limit.REQUESTS}, "max_turn_requests"),
        ({"stop": TurnStop.MAX_TOKENS}, "max_tokens"),
        ({"stop": TurnStop.REFUSAL}, "refusal"),
        ({"stop": TurnStop.CANCELLED}, "cancelled"),
        ({"stop": TurnStop.END_TURN, "error": "the API is down"}, "error"),
        ({}, "error"),  # no stop of its own: it failed, it was not cancelled
    ],
)
async def test_the_parent_is_told_how_a_child_ended_in_a_schema_valid_update(
    unstable: AcpSchema, ended: dict[str, Any], stop: str
) -> None:
    requests = Requests()
    running: dict[str, Callable[[], None]] = {}
    shown = await SubagentSessions(PARENT, requests, ClientCapabilities(), running).open(
        "Find it", "find it", _no
    )
    assert list(running) == [shown.session_id]
    await shown.ended(subagent(**ended))
    assert running == {}  # ended: a cancel naming it is ignored from now on
    announced, task, last = requests.sent
    assert announced["sessionId"] == last["sessionId"] == PARENT
    assert announced["update"] == {
        "sessionUpdate": "subagent_update",
        "sessionId": shown.session_id,
        "title": "Find it",
        "capabilities": {"cancel": {}},
        "state": {"state": "running"},
    }
    assert task["sessionId"] == shown.session_id
    assert last["update"]["capabilities"] is None  # cleared: no mutation of an ended child
    state = last["update"]["state"]
    assert last["update"]["sessionId"] == shown.session_id and "title" not in last["update"]
    assert (state["state"], state["stopReason"]) == ("idle", stop)
    assert state["usage"] == {
        "totalTokens": 110,
        "inputTokens": 7,
        "outputTokens": 3,
        "cachedReadTokens": 100,
        "cachedWriteTokens": 0,
    }
    if stop == "error":
        assert state["error"] == {"code": -32603, "message": ended.get("error", UNEXPECTED)}
    else:
        assert "error" not in state
    for params in requests.sent:
        assert valid(unstable, params) == []


async def test_a_childs_events_go_out_under_its_own_id_and_each_child_has_a_fresh_one(
    unstable: AcpSchema,
) -> None:
    requests = Requests()
    sessions = SubagentSessions(PARENT, requests, ClientCapabilities(), {})
    first, second = await sessions.open("A", "task A", _no), await sessions.open("B", "task B", _no)
    assert len({first.session_id, second.session_id, PARENT}) == 3
    await first.sink.emit(TextChunk("looking", "msg_1"))
    await first.sink.emit(ToolCallStarted("toolu_1", "Read notes.txt", "read", {"path": "notes.txt"}))
    child_updates = requests.sent[4:]
    assert [p["sessionId"] for p in child_updates] == [first.session_id] * 2
    assert [p["update"]["sessionUpdate"] for p in child_updates] == ["agent_message_chunk", "tool_call"]
    for params in requests.sent:
        assert valid(unstable, params) == []


async def test_each_child_session_is_told_its_task_as_a_message_from_the_parent(unstable: AcpSchema) -> None:
    """The incoming view, in the child's transcript (the RFD's "session_message from parent"); no
    outgoing view on the parent, where the `task` call shows the prompt already."""
    requests = Requests()
    shown = await SubagentSessions(PARENT, requests, ClientCapabilities(), {}).open(
        "A", "find the retry policy", _no
    )
    announced, told = requests.sent
    assert announced["sessionId"] == PARENT and told["sessionId"] == shown.session_id
    update = dict(told["update"])
    assert isinstance(update.pop("messageId"), str)
    assert update == {
        "sessionUpdate": "session_message",
        "senderSessionId": PARENT,
        "recipientSessionId": shown.session_id,
        "content": [{"type": "text", "text": "find the retry policy"}],
    }
    for params in requests.sent:
        assert valid(unstable, params) == []


async def test_a_cancel_naming_a_running_child_reaches_only_that_child_and_an_ended_ones_is_ignored() -> None:
    parent, other = Requests(), Requests()
    cancelled: list[str] = []
    session, neighbour = _session(PARENT), _session(f"sess_{'c' * 32}")
    first = await SubagentSessions(PARENT, parent, ClientCapabilities(), session.subagents).open(
        "A", "a", lambda: cancelled.append("A")
    )
    second = await SubagentSessions(neighbour.id, other, ClientCapabilities(), neighbour.subagents).open(
        "B", "b", lambda: cancelled.append("B")
    )
    sessions = [session, neighbour]
    assert cancel_subagent(sessions, second.session_id) is True
    assert cancelled == ["B"]
    await first.ended(subagent(stop=TurnStop.END_TURN))
    assert cancel_subagent(sessions, first.session_id) is False  # ended: ignored
    assert cancel_subagent(sessions, f"sess_{'0' * 32}") is False  # never made
    assert cancel_subagent(sessions, PARENT) is False  # a session is no subagent
    assert cancelled == ["B"]


async def test_a_child_whose_announcement_failed_is_not_left_cancellable() -> None:
    class Broken(Requests):
        async def notify(self, method: str, params: dict[str, Any]) -> None:
            raise OSError("the client went away")

    running: dict[str, Callable[[], None]] = {}
    with pytest.raises(OSError):
        await SubagentSessions(PARENT, Broken(), ClientCapabilities(), running).open("A", "a", _no)
    assert running == {}


def _no() -> None:
    raise AssertionError("not cancelled in this test")


def _session(session_id: str) -> Session:
    return make_session(
        session_id,
        Path("/tmp"),
        Requests(),  # type: ignore[arg-type]
        settings=RunnerSettings(model="claude-sonnet-4-5", max_tokens=1024),
    )


def test_the_stable_schema_does_not_know_subagent_update(acp_schema: AcpSchema, unstable: AcpSchema) -> None:
    """Why the wire tests with the capability check against `schema.unstable.json`."""
    params = {
        "sessionId": PARENT,
        "update": {"sessionUpdate": "subagent_update", "sessionId": f"sess_{'b' * 32}", "title": "x"},
    }
    assert valid(acp_schema, params) != []
    assert valid(unstable, params) == []
    bad = {**params, "update": {**params["update"], "state": {"state": "idle", "stopReason": 3}}}
    assert valid(unstable, bad) != []
