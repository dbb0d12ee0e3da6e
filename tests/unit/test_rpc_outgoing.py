"""Outgoing: our calls to the client, and the client's errors reaching the session layer as themselves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.errors import ConnectionClosed, RpcError, ToolError
from acp_agent.permissions.question import PermissionQuestion
from acp_agent.rpc.messages import ErrorObject, Response
from acp_agent.rpc.outgoing import Outgoing
from acp_agent.session.editor.client_io import EditorFileSystem
from acp_agent.session.editor.permissions import SessionPermissions
from acp_agent.session.requester import Requester

TIMEOUT = 5


class Sink:
    """Collects the lines the agent would write to stdout."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.sent = anyio.Event()

    async def send(self, data: bytes) -> None:
        self.lines.append(json.loads(data))
        self.sent.set()


async def _call_then(outgoing: Outgoing, sink: Sink, after_sent: Any) -> BaseException | Any:
    """Start one request, run `after_sent` once it is on the wire, return its result or error."""
    outcome: list[Any] = []

    async def call() -> None:
        try:
            outcome.append(await outgoing.request("fs/read_text_file", {"path": "/x"}))
        except Exception as exc:
            outcome.append(exc)

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await sink.sent.wait()
            after_sent(sink.lines[-1]["id"])
    return outcome[0]


async def test_an_answer_is_matched_to_its_request_by_id() -> None:
    sink = Sink()
    outgoing = Outgoing(sink)
    result = await _call_then(
        outgoing, sink, lambda rid: outgoing.answered(Response(rid, {"content": "hi"}, None))
    )
    assert result == {"content": "hi"}
    assert sink.lines == [
        {"jsonrpc": "2.0", "id": 0, "method": "fs/read_text_file", "params": {"path": "/x"}}
    ]


async def test_an_error_answer_raises_the_one_rpc_error_with_code_message_and_data() -> None:
    sink = Sink()
    outgoing = Outgoing(sink)
    error = ErrorObject(-32002, "no such file", {"path": "/x"})
    raised = await _call_then(outgoing, sink, lambda rid: outgoing.answered(Response(rid, None, error)))
    assert type(raised) is RpcError
    assert (raised.code, raised.message, raised.data) == (-32002, "no such file", {"path": "/x"})


async def test_eof_fails_a_pending_request_with_connection_closed_and_later_ones_at_once() -> None:
    sink = Sink()
    outgoing = Outgoing(sink)
    raised = await _call_then(outgoing, sink, lambda rid: outgoing.close())
    assert type(raised) is ConnectionClosed
    with pytest.raises(ConnectionClosed):
        await outgoing.request("fs/read_text_file", {})
    assert len(sink.lines) == 1  # nothing written after the close


async def test_a_timeout_tells_the_client_to_stop() -> None:
    sink = Sink()
    outgoing = Outgoing(sink)
    with pytest.raises(TimeoutError):
        await outgoing.request("session/request_permission", {}, timeout=0.05)
    assert sink.lines[-1] == {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 0}}


def _closed() -> Outgoing:
    outgoing = Outgoing(Sink())
    outgoing.close()
    return outgoing


async def test_the_session_layer_gets_connection_closed_as_itself() -> None:
    requester: Requester = _closed()  # the app hands Outgoing to the session layer as is
    with pytest.raises(ConnectionClosed):
        await requester.request("session/request_permission", {})


async def test_a_permission_question_to_a_closed_client_does_not_run_the_call() -> None:
    permissions = SessionPermissions("sess_1", _closed())
    decision = await permissions.ask(
        PermissionQuestion("c1", "write_file", "Write a.txt", "edit", "edit", {})
    )
    assert not decision.allowed
    assert "the client closed the connection" in (decision.message or "")


async def test_an_editor_file_read_from_a_closed_client_is_a_tool_error() -> None:
    files = EditorFileSystem("sess_1", _closed(), can_read=True, can_write=True, local=None)
    with pytest.raises(ToolError, match="the editor refused fs/read_text_file: the client closed"):
        await files.read_text(Path("/x"))
