"""The one JSON-RPC client of a spawned agent, over its stdio pipes: the smoke runner, the harness
and the test suite all drive agents through it.

Not the `acp` SDK's client: these tools must see exactly what any agent writes (every stdout line
goes through a `wire.Transcript`, bad lines included), answer the agent's requests their own way,
and keep the agent's stderr drained so it never blocks.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from subprocess import DEVNULL, PIPE
from typing import IO, Any, Literal, Self, TypeVar

import anyio
from anyio.abc import ByteReceiveStream, Process, TaskGroup

from acp_agent.errors import HarnessError
from acp_agent.harness.wire import Transcript, id_key, message_kind

__all__ = [
    "STOP_SIGNALS",
    "AgentClient",
    "AgentExitedError",
    "AgentRpcError",
    "AgentSpawnError",
    "NotificationHandler",
    "RequestHandler",
    "StderrMode",
    "id_key",
    "spawn_agent",
]

RequestHandler = Callable[["AgentClient", dict[str, Any]], Awaitable[None]]
NotificationHandler = Callable[[dict[str, Any]], None]
StderrMode = Literal["pipe", "unread", "devnull"]
"""pipe: read, kept (see `stderr_keep`) and copied to `stderr`; unread: a pipe nobody reads (it
fills up); devnull: thrown away."""
STOP_SIGNALS: tuple[tuple[signal.Signals, float], ...] = ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0))
"""After EOF and the grace period: each signal, and how long to wait after it."""
TAIL_BYTES = 16 * 1024
_T = TypeVar("_T")
_IO_ERRORS = (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError)


class AgentRpcError(HarnessError):
    """The agent answered one of our requests with a JSON-RPC error."""

    def __init__(self, method: str, error: Mapping[str, Any]) -> None:
        self.method = method
        self.code: Any = error.get("code")
        self.message = str(error.get("message", ""))
        self.data: Any = error.get("data")
        super().__init__(f"{method}: error {self.code}: {self.message}")


class AgentExitedError(HarnessError):
    """The agent closed its stdout (usually: it exited) while we were waiting for it."""

    def __init__(self, when: str, returncode: int | None, stderr_tail: str, context: str = "") -> None:
        self.returncode, self.stderr_tail = returncode, stderr_tail
        status = "is still running" if returncode is None else f"exited with code {returncode}"
        super().__init__(f"the agent closed its stdout {when} (it {status}){context}")


class AgentSpawnError(HarnessError):
    """The agent command could not be started at all."""


async def _reply_method_not_found(client: AgentClient, message: dict[str, Any]) -> None:
    await client.respond(
        message.get("id"),
        error={"code": -32601, "message": "Method not found", "data": {"method": message.get("method")}},
    )


class AgentClient:
    """One spawned agent; make it with `async with AgentClient.spawn([...]) as client`.

    Every stdout line goes through `transcript`; each JSON object is kept in `messages`, in order.
    A response to one of our requests is matched by its id (`request`, `response`, `call`) and
    consumed; `next_message` and `wait_for` read the rest. Notifications go to `on_notification`
    (called in order, on the reader task); each request of the agent goes to `handle_request` in its
    own task, which by default calls `request_handler`: that answers with `respond`, or not at all
    (the harness holds a request for a later step).
    """

    def __init__(
        self,
        process: Process,
        *,
        on_request: RequestHandler | None = None,
        on_notification: NotificationHandler | None = None,
        stderr_sink: IO[bytes] | None = None,
        stderr_keep: int | None = TAIL_BYTES,
        transcript: Transcript | None = None,
        first_id: int = 0,
        verbose_errors: bool = False,
    ) -> None:
        assert process.stdin is not None
        self._process, self._stdin = process, process.stdin
        self.pid = process.pid
        self.transcript = transcript or Transcript()
        self.messages = self.transcript.messages  # every JSON object the agent wrote, in order
        self.stdout_lines = self.transcript.stdout_lines
        self.protocol_violations = self.transcript.protocol_violations
        self.schema_problems = self.transcript.schema_problems
        self.invalid_lines: list[str] = []  # stdout lines that were not JSON objects
        self.handler_errors: list[str] = []
        self.sent: list[dict[str, Any] | bytes] = []  # everything we wrote, in order
        self.request_handler: RequestHandler = on_request or _reply_method_not_found
        self.on_notification = on_notification
        self.verbose_errors = verbose_errors
        """Timeouts and early exits also show the last messages and the stderr tail."""
        self.stdout_closed = False
        self._sink, self._stderr_keep = stderr_sink, stderr_keep
        self._stderr = bytearray()
        self._next_id = first_id
        self._pending: dict[str, int | None] = {}  # id key → index of its response, once in
        self._answered: set[str] = set()
        self._consumed: set[int] = set()
        self._cursor = 0
        self._changed = anyio.Event()
        self._write_lock = anyio.Lock()
        self._tg: TaskGroup | None = None

    @classmethod
    @asynccontextmanager
    async def spawn(
        cls,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: IO[bytes] | None = None,
        stderr_mode: StderrMode = "pipe",
        stderr_keep: int | None = TAIL_BYTES,
        on_request: RequestHandler | None = None,
        on_notification: NotificationHandler | None = None,
        transcript: Transcript | None = None,
        first_id: int = 0,
        verbose_errors: bool = False,
        grace: float = 5.0,
        stop_signals: Sequence[tuple[signal.Signals, float]] = STOP_SIGNALS,
    ) -> AsyncIterator[Self]:
        """Spawn `command` in its own process group and talk to it.

        The agent's stderr (`stderr_mode` pipe) is read: copied to `stderr` when given, its last
        `stderr_keep` bytes (None: all) kept for reports. On exit: EOF on stdin, `grace` s to leave,
        then each of `stop_signals`, then SIGKILL to whatever is left in its process group.

        Raises:
            AgentSpawnError: the command could not be started.
        """
        try:
            process = await anyio.open_process(
                list(command),
                stdin=PIPE,
                stdout=PIPE,
                stderr=DEVNULL if stderr_mode == "devnull" else PIPE,
                cwd=cwd,
                env=dict(env) if env is not None else None,
                start_new_session=True,  # Ctrl-C at the terminal reaches us, not the agent
            )
        except OSError as exc:
            raise AgentSpawnError(f"cannot start {command[0]!r}: {exc.strerror or exc}") from exc
        client = cls(
            process,
            on_request=on_request,
            on_notification=on_notification,
            stderr_sink=stderr,
            stderr_keep=stderr_keep,
            transcript=transcript,
            first_id=first_id,
            verbose_errors=verbose_errors,
        )
        failure: BaseException | None = None
        try:
            async with anyio.create_task_group() as tg:
                client._tg = tg
                assert process.stdout is not None
                tg.start_soon(client._read_stdout, process.stdout)
                if stderr_mode == "pipe":
                    assert process.stderr is not None
                    tg.start_soon(client._drain_stderr, process.stderr)
                try:
                    yield client
                except anyio.get_cancelled_exc_class():
                    raise
                except BaseException as exc:  # re-raised below, so no exception group wraps it
                    failure = exc
                finally:
                    with anyio.CancelScope(shield=True):
                        await client._shutdown(grace, stop_signals)
                    tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await client._reap()
        if failure is not None:
            raise failure

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    def stderr_text(self) -> str:
        """All the agent's stderr that was kept."""
        return self._stderr.decode("utf-8", "replace")

    def stderr_tail(self, limit: int = 4000) -> str:
        return self.stderr_text()[-limit:]

    # --- sending ---------------------------------------------------------------------------

    async def send(self, message: Mapping[str, Any] | bytes, timeout: float = 30) -> None:
        """Write one message as one line, or bytes as they are (the agent reading slowly makes
        this wait, bounded). Requests among raw bytes still get their answers checked.

        Raises:
            AgentExitedError: the agent's stdin is closed.
        """
        payload: dict[str, Any] | bytes = message if isinstance(message, bytes) else dict(message)
        if isinstance(payload, bytes):
            data = payload
        else:
            data = (json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        self.sent.append(payload)
        self._answered.difference_update(self.transcript.note_sent(payload))  # asked anew
        try:
            with anyio.fail_after(timeout):
                async with self._write_lock:
                    await self._stdin.send(data)
        except _IO_ERRORS as exc:
            raise AgentExitedError(
                "before it read our message", self.returncode, self.stderr_tail(), self._context()
            ) from exc

    async def send_raw(self, data: bytes | str, *, timeout: float = 30) -> None:
        """Write bytes as they are."""
        await self.send(data.encode() if isinstance(data, str) else data, timeout)

    async def send_request(
        self, method: str, params: Any = None, *, id: Any = None, timeout: float = 30
    ) -> Any:
        """Send a request without waiting; return its id (the next integer unless given)."""
        if id is None:
            id, self._next_id = self._next_id, self._next_id + 1
        key = id_key(id)
        if key in self._pending:
            raise ValueError(f"request id {id!r} is already waiting for a response")
        self._pending[key] = None
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        try:
            await self.send(message if params is None else {**message, "params": params}, timeout)
        except BaseException:
            self._pending.pop(key, None)
            raise
        return id

    async def response(self, id: Any, timeout: float | None = 30) -> dict[str, Any]:
        """Wait for the whole response message to the request `id` and forget the request.

        Raises:
            KeyError: no request with that id is waiting.
        """
        key = id_key(id)
        if key not in self._pending:
            raise KeyError(f"no request with id {id!r} is waiting")
        what = f"response to {self.transcript.method_for_id(id) or 'a request'} (id {id!r})"
        index = await self.wait_until(lambda: self._pending.get(key), timeout, what)
        del self._pending[key]
        return self.messages[index]

    async def request(
        self, method: str, params: Any = None, *, id: Any = None, timeout: float = 30
    ) -> dict[str, Any]:
        """Send a request; return the whole response message (with `result` or `error`)."""
        rid = await self.send_request(method, params, id=id, timeout=timeout)
        try:
            return await self.response(rid, timeout)
        finally:
            self._pending.pop(id_key(rid), None)

    async def call(self, method: str, params: Any = None, *, timeout: float = 30) -> Any:
        """Send a request and return its `result`.

        Raises:
            AgentRpcError: the agent answered with an error.
        """
        answer = await self.request(method, params, timeout=timeout)
        if "error" in answer:
            error = answer["error"]
            raise AgentRpcError(method, error if isinstance(error, dict) else {"message": repr(error)})
        return answer.get("result")

    async def notify(self, method: str, params: Any = None, *, timeout: float = 30) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        await self.send(message if params is None else {**message, "params": params}, timeout)

    async def respond(self, id: Any, *, result: Any = None, error: Mapping[str, Any] | None = None) -> None:
        """Answer one of the agent's requests (quietly, if the agent is already gone)."""
        body: dict[str, Any] = {"error": dict(error)} if error is not None else {"result": result}
        with contextlib.suppress(AgentExitedError):
            await self.send({"jsonrpc": "2.0", "id": id, **body})

    async def close_stdin(self) -> None:
        """EOF on the agent's stdin: how a client says goodbye."""
        with contextlib.suppress(*_IO_ERRORS):
            await self._stdin.aclose()

    def send_signal(self, signum: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            self._process.send_signal(signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    # --- waiting ---------------------------------------------------------------------------

    async def next_message(self, timeout: float = 5) -> dict[str, Any]:
        """The oldest message not yet consumed (by `next_message`, `wait_for` or a response)."""
        return await self._take(lambda _: True, None, timeout, "new message")

    async def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 10, *, since: int = 0
    ) -> dict[str, Any]:
        """The first message from index `since` on, already seen or still to come, that matches.

        A predicate raising LookupError or TypeError counts as no match, so it may index freely.
        The match is marked consumed: `next_message` will not return it again.
        """
        return await self._take(predicate, since, timeout, "matching message")

    async def wait_until(self, probe: Callable[[], _T | None], timeout: float | None, what: str) -> _T:
        """Re-run `probe` after each message until it gives a value; bounded by `timeout`.

        Raises:
            AgentExitedError: stdout closed first.
            TimeoutError: `timeout` s passed first (the message says "no {what} within …").
        """
        with anyio.move_on_after(timeout):
            while (found := probe()) is None:
                if self.stdout_closed:
                    with anyio.move_on_after(1):  # so the report can give the exit code
                        await self._process.wait()
                    raise AgentExitedError(
                        f"before any {what}", self.returncode, self.stderr_tail(), self._context()
                    )
                await self._changed.wait()
            return found
        raise TimeoutError(f"no {what} within {timeout} s{self._context()}")

    async def wait_exit(self, timeout: float = 10) -> int:
        """The agent's exit code, once it has exited.

        Raises:
            TimeoutError: it was still running after `timeout` s.
        """
        with anyio.move_on_after(timeout):
            return await self._process.wait()
        raise TimeoutError(f"the agent was still running after {timeout} s{self._context()}")

    async def _take(
        self, predicate: Callable[[dict[str, Any]], bool], since: int | None, timeout: float, what: str
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

        return await self.wait_until(probe, timeout, what)

    def _context(self) -> str:
        if not self.verbose_errors:
            return ""
        code = self.returncode
        status = "still running" if code is None else f"exit code {code}"
        return f"\n--- agent {status}; last messages:{self.transcript.recent()}{self._stderr_report()}"

    def _stderr_report(self, limit: int = 3000) -> str:
        text = self.stderr_text()
        return f"\n--- stderr tail ---\n{text[-limit:]}" if text else ""

    # --- the agent's requests ------------------------------------------------------------------

    async def handle_request(self, message: dict[str, Any]) -> None:
        """Answer (or hold) one request of the agent; the default hands it to `request_handler`."""
        await self.request_handler(self, message)

    async def _answer(self, message: dict[str, Any]) -> None:
        try:
            await self.handle_request(message)
        except Exception as exc:
            self.handler_errors.append(f"on_request({message.get('method')!r}) raised {exc!r}")
            await self.respond(
                message.get("id"), error={"code": -32603, "message": f"the client's handler failed: {exc!r}"}
            )

    # --- reading ---------------------------------------------------------------------------

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def _read_stdout(self, stdout: ByteReceiveStream) -> None:
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
        self.stdout_closed = True
        self._wake()

    def _on_line(self, raw: bytes, *, terminated: bool) -> None:
        index = self.transcript.feed(raw, terminated=terminated)
        if index is None:
            if raw.strip():
                self.invalid_lines.append(raw.decode("utf-8", "replace")[:300])
            self._wake()
            return
        message = self.messages[index]
        kind, key, method = message_kind(message), id_key(message.get("id")), message.get("method")
        if kind == "response" and "id" in message:
            if self._pending.get(key, -1) is None:
                self._pending[key] = index
                self._consumed.add(index)
                self._answered.add(key)
            elif key in self._answered:
                self.protocol_violations.append(f"message #{index}: a second response to id {key}")
        elif kind == "request" and isinstance(method, str):
            if self._tg is not None:
                self._tg.start_soon(self._answer, message)
        elif isinstance(method, str) and self.on_notification is not None:
            try:
                self.on_notification(message)
            except Exception as exc:  # a display bug must not stop the reader
                self.handler_errors.append(f"on_notification({method!r}) raised {exc!r}")
        self._wake()

    async def _drain_stderr(self, stderr: ByteReceiveStream) -> None:
        with contextlib.suppress(*_IO_ERRORS):
            async for chunk in stderr:
                self._stderr += chunk
                if self._stderr_keep is not None:
                    del self._stderr[: -self._stderr_keep]
                if self._sink is not None:
                    with contextlib.suppress(OSError, ValueError):
                        self._sink.write(chunk)
                        self._sink.flush()

    # --- ending ----------------------------------------------------------------------------

    async def _shutdown(self, grace: float, stop_signals: Sequence[tuple[signal.Signals, float]]) -> None:
        await self.close_stdin()
        for signum, wait in ((None, grace), *stop_signals):
            if signum is not None and self.returncode is None:
                self.send_signal(signum)
            with anyio.move_on_after(wait):
                await self._process.wait()
            if self.returncode is not None:
                break
        with anyio.move_on_after(2):  # let the reader record the last lines
            while not self.stdout_closed:
                await self._changed.wait()

    async def _reap(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)  # whatever the agent left in its process group
        self.kill()
        with anyio.move_on_after(5):
            await self._process.aclose()


spawn_agent = AgentClient.spawn
"""`async with spawn_agent(command, ...) as client`: see `AgentClient.spawn`."""
