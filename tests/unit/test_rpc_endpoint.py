"""The endpoint over two real os.pipe()s: dispatch, errors, cancel, outgoing calls, EOF."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
import structlog

from acp_agent.errors import ConnectionClosed, RpcError
from acp_agent.rpc.endpoint import Endpoint
from acp_agent.rpc.framing import LineReader, LineWriter
from acp_agent.rpc.outgoing import Outgoing

TIMEOUT = 10


class ScriptedHandler:
    """A handler whose methods each exercise one endpoint rule."""

    def __init__(self) -> None:
        self.outgoing: Outgoing | None = None
        self.release_slow = anyio.Event()
        self.self_cancelled = anyio.Event()
        self.notifications: list[tuple[str, Any]] = []
        self.cancel_calls: list[str] = []
        self.hang_started = anyio.Event()

    async def handle_request(self, method: str, params: Any) -> Any:
        if method == "echo":
            return params
        if method == "slow":
            await self.release_slow.wait()
            return "slow done"
        if method == "hang":
            self.hang_started.set()
            await anyio.sleep_forever()
        if method == "prompt":  # answers its own cancellation, like session/prompt
            await self.self_cancelled.wait()
            return {"stopReason": "cancelled"}
        if method == "crash":
            raise ValueError("secret detail that must not reach the client")
        if method == "invalid":
            raise RpcError.invalid_params("cwd must be absolute", {"field": "cwd"})
        if method == "grouped":
            async with anyio.create_task_group():
                raise RpcError.auth_required("log in first")
        if method == "not_json":
            return {"value": object()}
        if method == "ask_client":
            assert self.outgoing is not None
            return {"client said": await self.outgoing.request("fs/read", params, timeout=5)}
        raise RpcError.method_not_found(method)

    async def handle_notification(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))

    def cancel_request(self, method: str, params: Any) -> bool:
        self.cancel_calls.append(method)
        if method == "prompt":
            self.self_cancelled.set()
            return True
        return False


class Client:
    """The client's side of the two pipes."""

    def __init__(
        self, outgoing: Outgoing, to_agent: LineWriter, to_agent_fd: int, from_agent: LineReader
    ) -> None:
        self.outgoing = outgoing
        self._to_agent = to_agent
        self._to_agent_fd: int | None = to_agent_fd
        self._from_agent = from_agent
        self.served = anyio.Event()

    async def send(self, message: dict[str, Any]) -> None:
        await self.send_raw(json.dumps(message).encode())

    async def send_raw(self, line: bytes) -> None:
        await self._to_agent.send(line + b"\n")

    async def request(self, request_id: Any, method: str, params: Any = None) -> None:
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})

    async def recv(self) -> dict[str, Any]:
        with anyio.fail_after(TIMEOUT):
            line = await self._from_agent.read_line()
        assert line is not None, "the agent's output ended"
        message: dict[str, Any] = json.loads(line)
        return message

    async def recv_eof(self) -> None:
        with anyio.fail_after(TIMEOUT):
            assert await self._from_agent.read_line() is None

    async def close_input(self) -> None:
        """EOF on the agent's stdin."""
        if self._to_agent_fd is not None:
            assert await self._to_agent.flush(TIMEOUT)
            await self._to_agent.aclose()
            os.close(self._to_agent_fd)
            self._to_agent_fd = None


@asynccontextmanager
async def connected(
    handler: ScriptedHandler,
    *,
    max_line_bytes: int = 50 * 1024 * 1024,
    on_eof: Callable[[], Awaitable[None]] | None = None,
    grace: float = 1.5,
) -> AsyncIterator[Client]:
    c2a_r, c2a_w = os.pipe()
    a2c_r, a2c_w = os.pipe()
    agent_out = LineWriter(a2c_w)
    outgoing = Outgoing(agent_out)
    handler.outgoing = outgoing  # a test double's field: the app passes Outgoing at construction
    endpoint = Endpoint(handler, outgoing)
    to_agent = LineWriter(c2a_w)
    client = Client(outgoing, to_agent, c2a_w, LineReader(a2c_r))
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent_out.run)
            tg.start_soon(to_agent.run)

            async def serve() -> None:
                await endpoint.serve(LineReader(c2a_r, max_line_bytes), on_eof=on_eof, grace=grace)
                await agent_out.flush(TIMEOUT)
                await agent_out.aclose()
                os.close(a2c_w)  # the agent exits: the client sees EOF
                client.served.set()

            tg.start_soon(serve)
            with anyio.fail_after(TIMEOUT * 3):
                yield client
                await client.close_input()
                await client.served.wait()
    finally:
        for fd in (c2a_r, a2c_r):
            os.close(fd)


def error_of(message: dict[str, Any]) -> tuple[Any, int]:
    return message["id"], message["error"]["code"]


@pytest.mark.parametrize("request_id", [0, "abc", -5, None, 2**63, "0"])
async def test_each_request_gets_one_response_echoing_its_id_and_type(request_id: Any) -> None:
    async with connected(ScriptedHandler()) as client:
        await client.request(request_id, "echo", {"n": 1})
        answer = await client.recv()
        assert answer == {"jsonrpc": "2.0", "id": request_id, "result": {"n": 1}}
        assert type(answer["id"]) is type(request_id)
        await client.request("next", "echo", [])  # nothing else was sent in between
        assert (await client.recv())["id"] == "next"


async def test_bad_lines_are_answered_and_the_agent_keeps_serving() -> None:
    async with connected(ScriptedHandler()) as client:
        await client.send_raw(b'{"jsonrpc":"2.0","id":1,"method":')
        assert error_of(await client.recv()) == (None, -32700)
        await client.send_raw(b"\xff\xfe")
        assert error_of(await client.recv()) == (None, -32700)
        for line in (
            b"[]",
            b"42",
            b'{"jsonrpc":"2.0"}',
            b'[{"jsonrpc":"2.0","id":1,"method":"a"}]',
        ):
            await client.send_raw(line)
            answer = await client.recv()
            assert error_of(answer) == (None, -32600)
            assert "id" in answer  # "id": null is kept, never dropped
        await client.send_raw(b'{"jsonrpc":"2.0","id":9,"method":"echo","params":7}')
        assert error_of(await client.recv()) == (9, -32600)
        await client.send_raw(b"")  # a blank line is no message: no answer
        await client.request(1, "echo", {"still": "here"})
        assert await client.recv() == {"jsonrpc": "2.0", "id": 1, "result": {"still": "here"}}


async def test_unknown_method_is_method_not_found() -> None:
    async with connected(ScriptedHandler()) as client:
        await client.request(1, "_vendor/x", {})
        answer = await client.recv()
        assert error_of(answer) == (1, -32601)
        assert answer["error"]["data"] == {"method": "_vendor/x"}


async def test_handler_rpc_errors_keep_code_message_and_data() -> None:
    async with connected(ScriptedHandler()) as client:
        await client.request(1, "invalid", {})
        assert (await client.recv())["error"] == {
            "code": -32602,
            "message": "cwd must be absolute",
            "data": {"field": "cwd"},
        }
        await client.request(2, "grouped", {})  # raised inside the handler's task group
        assert error_of(await client.recv()) == (2, -32000)


async def test_handler_crash_is_internal_error_with_traceback_logged_not_leaked() -> None:
    with structlog.testing.capture_logs() as logs:
        async with connected(ScriptedHandler()) as client:
            await client.request(1, "crash", {})
            answer = await client.recv()
            await client.request(2, "not_json", {})
            not_json = await client.recv()
    assert error_of(answer) == (1, -32603)
    assert "secret" not in json.dumps(answer)
    assert answer["error"]["data"] == {"exception": "ValueError"}
    assert error_of(not_json) == (2, -32603)
    failures = [e for e in logs if e["event"] == "rpc.handler_failed"]
    assert [e["method"] for e in failures] == ["crash", "not_json"]
    assert all(e["log_level"] == "error" and e["exc_info"] for e in failures)


async def test_notifications_are_handled_in_order_and_never_answered() -> None:
    handler = ScriptedHandler()
    async with connected(handler) as client:
        for i in range(20):
            await client.send({"jsonrpc": "2.0", "method": "foo/bar", "params": {"i": i}})
        await client.send({"jsonrpc": "2.0", "method": "$/other", "params": {}})
        await client.request(1, "echo", ["after"])
        assert await client.recv() == {"jsonrpc": "2.0", "id": 1, "result": ["after"]}
    assert handler.notifications == [("foo/bar", {"i": i}) for i in range(20)] + [("$/other", {})]


async def test_a_slow_request_does_not_block_a_fast_one() -> None:
    handler = ScriptedHandler()
    async with connected(handler) as client:
        await client.request(1, "slow")
        await client.request(2, "echo", ["fast"])
        assert (await client.recv())["id"] == 2
        handler.release_slow.set()
        assert await client.recv() == {"jsonrpc": "2.0", "id": 1, "result": "slow done"}


async def test_cancel_request_answers_a_generic_request_with_request_cancelled() -> None:
    handler = ScriptedHandler()
    async with connected(handler) as client:
        await client.request("h", "hang")
        with anyio.fail_after(TIMEOUT):
            await handler.hang_started.wait()
        await client.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "h"}})
        assert error_of(await client.recv()) == ("h", -32800)
        await client.send(
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": "h"}}
        )  # already answered: ignored
        await client.request(2, "echo", ["x"])
        assert (await client.recv())["id"] == 2  # no second answer for "h"
    assert handler.cancel_calls == ["hang"]
    assert handler.notifications == []  # the endpoint handles $/cancel_request itself


async def test_cancel_request_matches_the_id_type() -> None:
    handler = ScriptedHandler()
    async with connected(handler) as client:
        await client.request(1, "slow")
        for wrong in ("1", True, 1.0, None, {"id": 1}, [1]):  # an object or a list: no crash either
            await client.send(
                {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": wrong}}
            )
        await client.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {}})
        await client.request(2, "echo", ["x"])
        assert (await client.recv())["id"] == 2
        assert handler.cancel_calls == []
        handler.release_slow.set()
        assert (await client.recv())["result"] == "slow done"


async def test_handler_can_answer_a_cancelled_request_itself() -> None:
    handler = ScriptedHandler()
    async with connected(handler) as client:
        await client.request(5, "prompt", {})
        await client.send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 5}})
        assert await client.recv() == {
            "jsonrpc": "2.0",
            "id": 5,
            "result": {"stopReason": "cancelled"},
        }
        await client.request(6, "echo", [1])
        assert (await client.recv())["id"] == 6  # exactly one answer for 5
    assert handler.cancel_calls == ["prompt"]


async def test_over_cap_line_is_answered_and_the_next_line_served() -> None:
    async with connected(ScriptedHandler(), max_line_bytes=1024) as client:
        await client.request(1, "echo", ["x" * 5000])
        answer = await client.recv()
        assert error_of(answer) == (None, -32600)
        assert "1024" in answer["error"]["message"]
        await client.request(2, "echo", ["ok"])
        assert await client.recv() == {"jsonrpc": "2.0", "id": 2, "result": ["ok"]}


async def test_a_one_mebibyte_request_is_accepted() -> None:
    text = "é" * (512 * 1024)  # 1 MiB of UTF-8
    async with connected(ScriptedHandler()) as client:
        await client.request(1, "echo", {"prompt": text})
        assert (await client.recv())["result"] == {"prompt": text}


async def test_outgoing_requests_are_matched_by_id_in_any_order() -> None:
    handler = ScriptedHandler()
    results: dict[str, Any] = {}
    async with connected(handler) as client, anyio.create_task_group() as tg:

        async def call(name: str) -> None:
            results[name] = await client.outgoing.request("fs/read", {"n": name}, timeout=5)

        tg.start_soon(call, "a")
        first = await client.recv()
        tg.start_soon(call, "b")
        second = await client.recv()
        assert (first["id"], second["id"]) == (0, 1)  # integer ids from 0
        assert first["method"] == "fs/read"
        await client.send({"jsonrpc": "2.0", "id": 99, "result": "unknown id: dropped"})
        await client.send({"jsonrpc": "2.0", "id": "0", "result": "wrong type: dropped"})
        await client.send({"jsonrpc": "2.0", "id": 1, "result": f"for {second['params']['n']}"})
        await client.send({"jsonrpc": "2.0", "id": 0, "result": f"for {first['params']['n']}"})
    assert results == {"a": "for a", "b": "for b"}


async def test_outgoing_request_from_a_handler_round_trips() -> None:
    async with connected(ScriptedHandler()) as client:
        await client.request("p", "ask_client", {"path": "/x"})
        outgoing = await client.recv()
        assert outgoing == {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "fs/read",
            "params": {"path": "/x"},
        }
        await client.send({"jsonrpc": "2.0", "id": 0, "result": None})
        assert await client.recv() == {"jsonrpc": "2.0", "id": "p", "result": {"client said": None}}


async def test_client_error_reply_raises_its_rpc_error() -> None:
    async with connected(ScriptedHandler()) as client, anyio.create_task_group() as tg:
        caught: list[RpcError] = []

        async def call() -> None:
            with pytest.raises(RpcError) as info:
                await client.outgoing.request("fs/read_text_file", {}, timeout=5)
            caught.append(info.value)

        tg.start_soon(call)
        request = await client.recv()
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": request["id"],
                "error": {"code": -32002, "message": "no such file", "data": {"path": "/x"}},
            }
        )
    assert [(e.code, e.message, e.data) for e in caught] == [(-32002, "no such file", {"path": "/x"})]


async def test_outgoing_timeout_raises_and_tells_the_client() -> None:
    async with connected(ScriptedHandler()) as client:  # each recv() is bounded: a hang fails it
        async with anyio.create_task_group() as tg:
            outcome: list[BaseException] = []

            async def call() -> None:
                try:
                    await client.outgoing.request("session/request_permission", {}, timeout=0.2)
                except TimeoutError as exc:
                    outcome.append(exc)

            tg.start_soon(call)
            request = await client.recv()
            assert await client.recv() == {
                "jsonrpc": "2.0",
                "method": "$/cancel_request",
                "params": {"requestId": request["id"]},
            }
        assert len(outcome) == 1
        # A late answer to the forgotten id is dropped, and the agent still serves.
        await client.send({"jsonrpc": "2.0", "id": request["id"], "result": {}})
        await client.request(1, "echo", ["x"])
        assert (await client.recv())["id"] == 1


async def test_cancelled_caller_forgets_the_id_and_tells_the_client() -> None:
    async with connected(ScriptedHandler()) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                functools.partial(client.outgoing.request, "terminal/wait_for_exit", {}, timeout=None)
            )
            request = await client.recv()
            tg.cancel_scope.cancel()
        assert await client.recv() == {
            "jsonrpc": "2.0",
            "method": "$/cancel_request",
            "params": {"requestId": request["id"]},
        }


async def test_eof_calls_on_eof_and_winds_down_within_grace() -> None:
    handler = ScriptedHandler()
    eof_seen = anyio.Event()

    async def on_eof() -> None:
        eof_seen.set()
        handler.release_slow.set()  # as the app does: running turns are told to stop

    outgoing_errors: list[BaseException] = []
    async with connected(handler, on_eof=on_eof, grace=0.3) as client:
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                try:
                    await client.outgoing.request("fs/read", {}, timeout=None)
                except ConnectionClosed as exc:
                    outgoing_errors.append(exc)

            tg.start_soon(call)
            assert (await client.recv())["method"] == "fs/read"
            await client.request(1, "slow")
            await client.request(2, "hang")
            with anyio.fail_after(TIMEOUT):
                await handler.hang_started.wait()
            await client.close_input()
        answers = {}
        for _ in range(2):
            answer = await client.recv()
            answers[answer["id"]] = answer
        await client.recv_eof()  # nothing more: serve() returned and the agent closed stdout
        await client.served.wait()
    assert eof_seen.is_set()
    assert answers[1]["result"] == "slow done"  # finished within the grace period
    assert answers[2]["error"]["code"] == -32800  # cancelled when the grace period ran out
    assert len(outgoing_errors) == 1
    with pytest.raises(ConnectionClosed):
        await client.outgoing.request("fs/read", {}, timeout=1)
