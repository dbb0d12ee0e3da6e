"""Drive a real agent subprocess over real pipes, the way an editor does, and record all it writes.

Every stdout line goes through a `Transcript` (framing, envelope and, given an `AcpSchema`, the
message's ACP definition); on a clean exit the context manager fails the test if anything was
wrong. Agent→client requests are answered by `on_request`, so a test can play the editor.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from subprocess import DEVNULL, PIPE
from typing import Any, Literal, TypeVar

import anyio
from anyio.abc import ByteReceiveStream, Process, TaskGroup

from tests.support import REPO_ROOT, base_env
from tests.support.schema import AcpSchema, Transcript, id_key, message_kind, shorten

__all__ = [
    "REPO_ROOT",
    "AgentExitedError",
    "AgentProcess",
    "RequestHandler",
    "RpcError",
    "base_env",
    "method_not_found",
]

RequestHandler = Callable[[str, Any], Awaitable[Any]]
Blocks = str | dict[str, Any] | Sequence[dict[str, Any]]
_T = TypeVar("_T")
_IO_ERRORS = (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError)


class RpcError(Exception):
    """An error answer to an agent→client request: `on_request` may return it or raise it."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code, self.message, self.data = code, message, data

    def to_dict(self) -> dict[str, Any]:
        extra = {} if self.data is None else {"data": self.data}
        return {"code": self.code, "message": self.message, **extra}


class AgentExitedError(AssertionError):
    """The agent closed stdout while the test was still waiting for a message."""


async def method_not_found(method: str, params: Any) -> RpcError:
    """The default client supports no agent→client method, like one with no capabilities."""
    return RpcError(-32601, "Method not found", {"method": method})


class AgentProcess:
    """One agent subprocess; make it with `async with AgentProcess.start(...) as agent`."""

    def __init__(self, process: Process, schema: AcpSchema | None, first_id: int) -> None:
        assert process.stdin is not None
        self._process, self._stdin = process, process.stdin
        self.pid = process.pid
        self.transcript = Transcript(schema)
        self.messages = self.transcript.messages  # every JSON object the agent wrote, in order
        self.stdout_lines = self.transcript.stdout_lines
        self.protocol_violations = self.transcript.protocol_violations
        self.schema_problems = self.transcript.schema_problems
        self.handler_errors: list[str] = []
        self.sent: list[dict[str, Any] | bytes] = []  # everything the test wrote, in order
        self.on_request: RequestHandler = method_not_found
        self._stderr = bytearray()
        self._next_id = first_id
        self._pending: dict[str, int | None] = {}  # id key → index of its response, once in
        self._answered: set[str] = set()
        self._consumed: set[int] = set()
        self._cursor = 0
        self._changed = anyio.Event()
        self._stdout_closed = False
        self._write_lock = anyio.Lock()
        self._tg: TaskGroup | None = None

    @classmethod
    @asynccontextmanager
    async def start(
        cls,
        *,
        args: Sequence[str] = (),
        command: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        schema: AcpSchema | None = None,
        stderr: Literal["pipe", "unread", "devnull"] = "pipe",
        check_on_exit: bool = True,
        first_id: int = 1,
        exit_timeout: float = 10.0,
        on_request: RequestHandler | None = None,
    ) -> AsyncIterator[AgentProcess]:
        """Spawn `python -m acp_agent *args` (or `command + args`) with exactly `env` as its
        environment. On exit: EOF on stdin, `exit_timeout` s to leave, then SIGKILL to its group.
        """
        process = await anyio.open_process(
            [*(command or (sys.executable, "-m", "acp_agent")), *args],
            stdin=PIPE,
            stdout=PIPE,
            stderr=DEVNULL if stderr == "devnull" else PIPE,
            cwd=cwd,
            env=dict(env) if env is not None else {"PATH": os.environ.get("PATH", os.defpath)},
            start_new_session=True,  # its own process group: nothing it spawns outlives the test
        )
        agent = cls(process, schema, first_id)
        agent.on_request = on_request or method_not_found
        failure: BaseException | None = None
        try:
            async with anyio.create_task_group() as tg:
                agent._tg = tg
                tg.start_soon(agent._read_stdout, process.stdout)
                if stderr == "pipe":
                    tg.start_soon(agent._drain_stderr, process.stderr)
                try:
                    yield agent
                except anyio.get_cancelled_exc_class():
                    raise
                except BaseException as exc:  # re-raised below, so no task group wraps it
                    failure = exc
                finally:
                    with anyio.CancelScope(shield=True):
                        await agent._shutdown(exit_timeout)
                    tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await agent._reap()
        if failure is not None:
            raise failure
        if check_on_exit:
            agent.assert_clean()

    async def request(
        self, method: str, params: Any = None, *, id: int | str | None = None, timeout: float = 30
    ) -> dict[str, Any]:
        """Send a request; return the whole response message (with `result` or `error`)."""
        rid: int | str = self._take_id() if id is None else id
        key = id_key(rid)
        if key in self._pending:
            raise ValueError(f"request id {rid!r} is already waiting for a response")
        self._answered.discard(key)
        self._pending[key] = None
        message = {"jsonrpc": "2.0", "id": rid, "method": method}
        try:
            await self._write(message if params is None else {**message, "params": params}, timeout)
            what = f"a response to {method} (id {rid!r})"
            index = await self._wait(lambda: self._pending[key], timeout, what)
        finally:
            self._pending.pop(key, None)
        return self.messages[index]

    async def notify(self, method: str, params: Any = None, *, timeout: float = 30) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        await self._write(message if params is None else {**message, "params": params}, timeout)

    async def send_raw(self, data: bytes | str, *, timeout: float = 30) -> None:
        """Write bytes as they are (requests among them still get their answers checked)."""
        await self._write(data.encode() if isinstance(data, str) else data, timeout)

    async def next_message(self, timeout: float = 5) -> dict[str, Any]:
        """The oldest message not yet consumed (by `next_message`, `wait_for` or `request`)."""
        return await self._take(lambda _: True, None, timeout, "another message")

    async def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 10, *, since: int = 0
    ) -> dict[str, Any]:
        """The first message from index `since` on, already seen or still to come, that matches.

        A predicate raising LookupError or TypeError counts as no match, so it may index freely.
        The match is marked consumed: `next_message` will not return it again.
        """
        return await self._take(predicate, since, timeout, "a matching message")

    async def initialize(
        self, *, protocol_version: Any = 1, client_info: dict[str, Any] | None = None, **caps: Any
    ) -> dict[str, Any]:
        """`initialize`; `clientCapabilities` is sent only when some are given (as the SDK does)."""
        params: dict[str, Any] = {"protocolVersion": protocol_version}
        params |= {"clientCapabilities": caps} if caps else {}
        params |= {"clientInfo": client_info} if client_info is not None else {}
        return self._result(await self.request("initialize", params))

    async def new_session(
        self,
        cwd: str | os.PathLike[str],
        meta: dict[str, Any] | None = None,
        *,
        mcp_servers: Sequence[dict[str, Any]] = (),
        **extra: Any,
    ) -> str:
        params = {"cwd": os.fspath(cwd), "mcpServers": list(mcp_servers), **extra}
        params |= {"_meta": meta} if meta is not None else {}
        session_id = self._result(await self.request("session/new", params)).get("sessionId")
        assert isinstance(session_id, str) and session_id, f"no sessionId{self._context()}"
        return session_id

    async def prompt(
        self, session_id: str, text_or_blocks: Blocks, meta: Any = None, *, timeout: float = 30
    ) -> dict[str, Any]:
        """Send `session/prompt` (a string is one text block); return the whole response message."""
        if isinstance(text_or_blocks, str):
            text_or_blocks = {"type": "text", "text": text_or_blocks}
        blocks = [text_or_blocks] if isinstance(text_or_blocks, dict) else list(text_or_blocks)
        params: dict[str, Any] = {"sessionId": session_id, "prompt": blocks}
        params |= {"_meta": meta} if meta is not None else {}
        return await self.request("session/prompt", params, timeout=timeout)

    def updates(self, session_id: str) -> list[dict[str, Any]]:
        """The params of every `session/update` for that session received so far."""
        notes = [m for m in self.messages if m.get("method") == "session/update" and "id" not in m]
        return [
            n["params"]
            for n in notes
            if isinstance(n.get("params"), dict) and n["params"].get("sessionId") == session_id
        ]

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    def stderr_text(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    async def close_stdin(self) -> None:
        """EOF on the agent's stdin: the editor's way of saying goodbye."""
        with contextlib.suppress(*_IO_ERRORS):
            await self._stdin.aclose()

    async def wait_exit(self, timeout: float = 10) -> int:
        with anyio.move_on_after(timeout):
            return await self._process.wait()
        raise TimeoutError(f"the agent was still running after {timeout} s{self._context()}")

    def send_signal(self, signum: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            self._process.send_signal(signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def assert_clean(self) -> None:
        """Fail, listing every protocol violation, schema problem and handler error so far."""
        handler = ("errors in the test's on_request handler", self.handler_errors)
        if report := self.transcript.problems_report(handler):
            raise AssertionError(f"the agent broke the protocol\n{report}{self._stderr_tail()}")

    def _result(self, response: dict[str, Any]) -> dict[str, Any]:
        result = response.get("result")
        if "error" in response or not isinstance(result, dict):
            raise AssertionError(f"wanted an object result, got {shorten(response, 500)}")
        return result

    def _take_id(self) -> int:
        self._next_id += 1
        return self._next_id - 1

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def _take(
        self,
        predicate: Callable[[dict[str, Any]], bool],
        since: int | None,
        timeout: float,
        what: str,
    ) -> dict[str, Any]:
        def probe() -> dict[str, Any] | None:  # since=None: only messages nobody consumed yet
            for index in range(self._cursor if since is None else since, len(self.messages)):
                if since is None and index in self._consumed:
                    continue
                with contextlib.suppress(LookupError, TypeError):
                    if predicate(self.messages[index]):
                        self._consumed.add(index)
                        self._cursor = index + 1 if since is None else self._cursor
                        return self.messages[index]
            return None

        return await self._wait(probe, timeout, what)

    async def _wait(self, probe: Callable[[], _T | None], timeout: float, what: str) -> _T:
        with anyio.move_on_after(timeout):
            while (found := probe()) is None:
                if self._stdout_closed:
                    with anyio.move_on_after(1):  # so the report can give the exit code
                        await self._process.wait()
                    raise AgentExitedError(f"the agent closed stdout before {what}{self._context()}")
                await self._changed.wait()
            return found
        raise TimeoutError(f"no {what} within {timeout} s{self._context()}")

    async def _write(self, payload: dict[str, Any] | bytes, timeout: float) -> None:
        if isinstance(payload, bytes):
            data = payload
        else:
            data = (json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        self.sent.append(payload)
        self._answered.difference_update(self.transcript.note_sent(payload))  # asked anew
        with anyio.fail_after(timeout):
            async with self._write_lock:
                await self._stdin.send(data)

    async def _read_stdout(self, stdout: ByteReceiveStream | None) -> None:
        assert stdout is not None
        buffer, scan_from = bytearray(), 0
        with contextlib.suppress(*_IO_ERRORS):
            async for chunk in stdout:
                buffer += chunk
                while (end := buffer.find(b"\n", scan_from)) >= 0:
                    line, scan_from = bytes(buffer[:end]), 0
                    del buffer[: end + 1]
                    self._on_line(line, terminated=True)
                scan_from = len(buffer)
        if buffer:
            self._on_line(bytes(buffer), terminated=False)
        self._stdout_closed = True
        self._notify()

    async def _drain_stderr(self, stderr: ByteReceiveStream | None) -> None:
        assert stderr is not None
        with contextlib.suppress(*_IO_ERRORS):
            async for chunk in stderr:
                self._stderr += chunk

    def _on_line(self, raw: bytes, *, terminated: bool) -> None:
        index = self.transcript.feed(raw, terminated=terminated)
        if index is None:
            return
        message = self.messages[index]
        kind, key = message_kind(message), id_key(message.get("id"))
        if kind == "response" and "id" in message:
            if self._pending.get(key, -1) is None:
                self._pending[key] = index
                self._consumed.add(index)
                self._answered.add(key)
            elif key in self._answered:
                self.protocol_violations.append(f"message #{index}: a second response to id {key}")
        elif kind == "request" and isinstance(message.get("method"), str) and self._tg:
            self._tg.start_soon(self._answer, message)
        self._notify()

    async def _answer(self, message: dict[str, Any]) -> None:
        method = message["method"]
        try:
            outcome = await self.on_request(method, message.get("params"))
        except RpcError as exc:
            outcome = exc
        except Exception as exc:
            self.handler_errors.append(f"on_request({method!r}) raised {exc!r}")
            outcome = RpcError(-32603, f"the test client's handler failed: {exc!r}")
        answer = {"error": outcome.to_dict()} if isinstance(outcome, RpcError) else {"result": outcome}
        with contextlib.suppress(*_IO_ERRORS):  # if the agent is gone, the test sees it elsewhere
            await self._write({"jsonrpc": "2.0", "id": message.get("id"), **answer}, 30)

    async def _shutdown(self, exit_timeout: float) -> None:
        await self.close_stdin()
        with anyio.move_on_after(exit_timeout):
            await self._process.wait()
        if self._process.returncode is None:
            self.kill()
            with anyio.move_on_after(5):
                await self._process.wait()
        with anyio.move_on_after(2):  # let the reader record the last lines
            while not self._stdout_closed:
                await self._changed.wait()

    async def _reap(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)  # whatever the agent left in its process group
        self.kill()
        with anyio.move_on_after(5):
            await self._process.aclose()

    def _stderr_tail(self, limit: int = 3000) -> str:
        text = self.stderr_text()
        return f"\n--- stderr tail ---\n{text[-limit:]}" if text else ""

    def _context(self) -> str:
        code = self.returncode
        status = "still running" if code is None else f"exit code {code}"
        recent = self.transcript.recent()
        return f"\n--- agent {status}; last messages:{recent}{self._stderr_tail()}"
