"""Subagents as child sessions, in-process (ACP's unstable `subagents`, D27): the capability read
from `initialize`, what the parent is told when a child starts and how it ended, the child's events
under its own id, and every update valid against the official unstable schema."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest

from acp_agent.limits import Limits
from acp_agent.model.base import Usage
from acp_agent.protocol.lifecycle import ClientCapabilities, InitializeRequest
from acp_agent.session.subagent_sessions import UNEXPECTED, SubagentSessions
from acp_agent.turn.events import TextChunk, ToolCallStarted
from acp_agent.turn.meter import Limit, Subagent, TurnMeter
from acp_agent.turn.stop import TurnStop
from tests.support.schema import AcpSchema, SchemaNotFoundError

PARENT = f"sess_{'a' * 32}"


@pytest.fixture(scope="module")
def unstable() -> AcpSchema:
    try:
        return AcpSchema.load(unstable=True)
    except SchemaNotFoundError as exc:
        pytest.skip(str(exc))


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
    shown = await SubagentSessions(PARENT, requests, ClientCapabilities()).open("Find it")
    await shown.ended(subagent(**ended))
    announced, last = requests.sent
    assert announced["sessionId"] == last["sessionId"] == PARENT
    assert announced["update"] == {
        "sessionUpdate": "subagent_update",
        "sessionId": shown.session_id,
        "title": "Find it",
        "state": {"state": "running"},
    }
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
    sessions = SubagentSessions(PARENT, requests, ClientCapabilities())
    first, second = await sessions.open("A"), await sessions.open("B")
    assert len({first.session_id, second.session_id, PARENT}) == 3
    await first.sink.emit(TextChunk("looking", "msg_1"))
    await first.sink.emit(ToolCallStarted("toolu_1", "Read notes.txt", "read", {"path": "notes.txt"}))
    child_updates = requests.sent[2:]
    assert [p["sessionId"] for p in child_updates] == [first.session_id] * 2
    assert [p["update"]["sessionUpdate"] for p in child_updates] == ["agent_message_chunk", "tool_call"]
    for params in requests.sent:
        assert valid(unstable, params) == []


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
