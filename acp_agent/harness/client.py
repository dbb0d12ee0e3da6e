"""A small async JSON-RPC client over a spawned agent's stdio pipes, for the smoke runner and harness.

Not the `acp` SDK's client: these tools must see exactly what any agent writes (bad lines included),
answer the agent's requests their own way, and keep the agent's stderr drained so it never blocks.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from subprocess import PIPE
from typing import IO, Any, TypeVar

import anyio
from anyio.abc import ByteReceiveStream, Process, TaskGroup

from acp_agent.errors import HarnessError

__all__ = [
    "AgentClient",
    "AgentExitedError",
    "AgentRpcError",
    "AgentSpawnError",
    "NotificationHandler",
    "RequestHandler",
    "id_key",
    "spawn_agent",
]

RequestHandler = Callable[["AgentClient", dict[str, Any]], Awaitable[None]]
NotificationHandler = Callable[[dict[str, Any]], None]
_T = TypeVar("_T")
_IO_ERRORS = (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError)
_TAIL_BYTES = 16 * 1024


def id_key(value: Any) -> str:
    """JSON-RPC ids are echoed with their type: 1 and "1" are different requests."""
    return json.dumps(value, sort_keys=True)


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

    def __init__(self, what: str, returncode: int | None, stderr_tail: str) -> None:
        self.returncode, self.stderr_tail = returncode, stderr_tail
        status = "is still running" if returncode is None else f"exited with code {returncode}"
        super().__init__(f"the agent closed its stdout before {what} (it {status})")


class AgentSpawnError(HarnessError):
    """The agent command could not be started at all."""


async def _reply_method_not_found(client: AgentClient, message: dict[str, Any]) -> None:
    await client.respond(
        message.get("id"),
        error={"code": -32601, "message": "Method not found", "data": {"method": message.get("method")}},
    )


class AgentClient:
    """One spawned agent; make it with `async with spawn_agent([...]) as client`.

    Every message the agent writes is kept in `messages`, in order. Responses to our requests
    also reach `request`/`response`; notifications go to `on_notification` (called in order, on
    the reader task); the agent's requests go to `on_request`, each in its own task, which answers
    with `respond` (or not at all, which the harness uses to hold a request for a later step).
    """

    def __init__(
        self,
        process: Process,
        *,
        on_request: RequestHandler | None,
        on_notification: NotificationHandler | None,
        stderr_sink: IO[bytes] | None,
    ) -> None:
        assert process.stdin is not None
        self._process, self._stdin = process, process.stdin
        self.pid = process.pid
        self.messages: list[dict[str, Any]] = []
        self.invalid_lines: list[str] = []  # stdout lines that were not JSON objects
        self.handler_errors: list[str] = []
        self.on_request: RequestHandler = on_request or _reply_method_not_found
        self.on_notification = on_notification
        self._sink = stderr_sink
        self._tail = bytearray()
        self._next_id = 0
        self._pending: dict[str, dict[str, Any] | None] = {}
        self._methods: dict[str, str] = {}
        self._changed = anyio.Event()
        self.stdout_closed = False
        self._write_lock = anyio.Lock()
        self._tg: TaskGroup | None = None

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    def stderr_tail(self, limit: int = 4000) -> str:
        return self._tail.decode("utf-8", "replace")[-limit:]

    # --- sending ---------------------------------------------------------------------------

    async def send(self, message: Mapping[str, Any], timeout: float = 30) -> None:
        """Write one message as one line (the agent reading slowly makes this wait, bounded)."""
        data = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        try:
            with anyio.fail_after(timeout):
                async with self._write_lock:
                    await self._stdin.send(data)
        except _IO_ERRORS as exc:
            raise AgentExitedError("it read our message", self.returncode, self.stderr_tail()) from exc

    async def send_request(self, method: str, params: Any = None, *, id: Any = None) -> Any:
        """Send a request without waiting; return its id (the next integer unless given)."""
        if id is None:
            id, self._next_id = self._next_id, self._next_id + 1
        key = id_key(id)
        if key in self._pending:
            raise ValueError(f"request id {id!r} is already waiting for a response")
        self._pending[key], self._methods[key] = None, method
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        await self.send(message if params is None else {**message, "params": params})
        return id

    async def response(self, id: Any, timeout: float | None = 30) -> dict[str, Any]:
        """Wait for the whole response message to the request `id` and forget the request."""
        key = id_key(id)
        if key not in self._pending:
            raise KeyError(f"no request with id {id!r} is waiting")
        what = f"answering {self._methods.get(key, 'a request')} (id {id!r})"
        found = await self.wait_for(lambda: self._pending.get(key), timeout, what)
        del self._pending[key]
        self._methods.pop(key, None)
        return found

    async def request(self, method: str, params: Any = None, *, timeout: float | None = 30) -> Any:
        """Send a request and return its `result`; an error answer raises `AgentRpcError`."""
        rid = await self.send_request(method, params)
        answer = await self.response(rid, timeout)
        if "error" in answer:
            error = answer["error"]
            raise AgentRpcError(method, error if isinstance(error, dict) else {"message": repr(error)})
        return answer.get("result")

    async def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        await self.send(message if params is None else {**message, "params": params})

    async def respond(self, id: Any, *, result: Any = None, error: Mapping[str, Any] | None = None) -> None:
        """Answer one of the agent's requests (quietly, if the agent is already gone)."""
        body: dict[str, Any] = {"error": dict(error)} if error is not None else {"result": result}
        with contextlib.suppress(AgentExitedError):
            await self.send({"jsonrpc": "2.0", "id": id, **body})

    async def close_stdin(self) -> None:
        """EOF on the agent's stdin: how a client says goodbye."""
        with contextlib.suppress(*_IO_ERRORS):
            await self._stdin.aclose()

    # --- waiting ---------------------------------------------------------------------------

    async def wait_for(self, probe: Callable[[], _T | None], timeout: float | None, what: str) -> _T:
        """Re-run `probe` after each message until it gives a value; bounded by `timeout`.

        Raises `AgentExitedError` once stdout is closed and `TimeoutError` after `timeout` s.
        """
        with anyio.move_on_after(timeout):
            while (found := probe()) is None:
                if self.stdout_closed:
                    with anyio.move_on_after(1):  # so the report can give the exit code
                        await self._process.wait()
                    raise AgentExitedError(what, self.returncode, self.stderr_tail())
                await self._changed.wait()
            return found
        raise TimeoutError(f"no message {what} within {timeout} s")

    async def wait_exit(self, timeout: float) -> int | None:
        with anyio.move_on_after(timeout):
            await self._process.wait()
        return self.returncode

    async def changed(self) -> None:
        """Return at the next message (or at the close of stdout)."""
        await self._changed.wait()

    def interrupt(self, signum: signal.Signals = signal.SIGTERM) -> None:
        with contextlib.suppress(ProcessLookupError):
            self._process.send_signal(signum)

    # --- reading ---------------------------------------------------------------------------

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def _read_stdout(self, stdout: ByteReceiveStream) -> None:
        buffer = bytearray()
        with contextlib.suppress(*_IO_ERRORS):
            async for chunk in stdout:
                start = len(buffer)
                buffer += chunk
                if buffer.find(b"\n", start) < 0:
                    continue
                *lines, rest = bytes(buffer).split(b"\n")
                buffer = bytearray(rest)
                for line in lines:
                    self._on_line(line)
        if buffer.strip():
            self._on_line(bytes(buffer))
        self.stdout_closed = True
        self._wake()

    def _on_line(self, raw: bytes) -> None:
        try:
            message = json.loads(raw)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            if raw.strip():
                self.invalid_lines.append(raw.decode("utf-8", "replace")[:300])
                self._wake()
            return
        self.messages.append(message)
        method = message.get("method")
        if isinstance(method, str) and "id" in message:
            if self._tg is not None:
                self._tg.start_soon(self._answer, message)
        elif isinstance(method, str):
            if self.on_notification is not None:
                try:
                    self.on_notification(message)
                except Exception as exc:  # a display bug must not stop the reader
                    self.handler_errors.append(f"on_notification({method!r}) raised {exc!r}")
        elif "id" in message and self._pending.get(key := id_key(message["id"]), False) is None:
            self._pending[key] = message
        self._wake()

    async def _answer(self, message: dict[str, Any]) -> None:
        try:
            await self.on_request(self, message)
        except Exception as exc:
            self.handler_errors.append(f"on_request({message.get('method')!r}) raised {exc!r}")
            await self.respond(
                message.get("id"), error={"code": -32603, "message": f"the client's handler failed: {exc!r}"}
            )

    async def _drain_stderr(self, stderr: ByteReceiveStream) -> None:
        with contextlib.suppress(*_IO_ERRORS):
            async for chunk in stderr:
                self._tail += chunk
                del self._tail[:-_TAIL_BYTES]
                if self._sink is not None:
                    with contextlib.suppress(OSError, ValueError):
                        self._sink.write(chunk)
                        self._sink.flush()

    async def _shutdown(self, grace: float) -> None:
        await self.close_stdin()
        for signum, wait in ((None, grace), (signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
            if signum is not None and self.returncode is None:
                self.interrupt(signum)
            if await self.wait_exit(wait) is not None:
                break
        with anyio.move_on_after(2):  # let the reader record the last lines
            while not self.stdout_closed:
                await self._changed.wait()


@asynccontextmanager
async def spawn_agent(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stderr: IO[bytes] | None = None,
    on_request: RequestHandler | None = None,
    on_notification: NotificationHandler | None = None,
    grace: float = 5.0,
) -> AsyncIterator[AgentClient]:
    """Spawn `command` in its own process group and talk to it.

    The agent's stderr is always read: copied to `stderr` when given, its tail kept for reports.
    On exit: EOF on stdin, `grace` s to leave, then SIGTERM, then SIGKILL to its process group.
    """
    try:
        process = await anyio.open_process(
            list(command),
            stdin=PIPE,
            stdout=PIPE,
            stderr=PIPE,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )  # Ctrl-C at the terminal reaches us, not the agent
    except OSError as exc:
        raise AgentSpawnError(f"cannot start {command[0]!r}: {exc.strerror or exc}") from exc
    client = AgentClient(process, on_request=on_request, on_notification=on_notification, stderr_sink=stderr)
    failure: BaseException | None = None
    try:
        async with anyio.create_task_group() as tg:
            client._tg = tg
            assert process.stdout is not None and process.stderr is not None
            tg.start_soon(client._read_stdout, process.stdout)
            tg.start_soon(client._drain_stderr, process.stderr)
            try:
                yield client
            except anyio.get_cancelled_exc_class():
                raise
            except BaseException as exc:  # re-raised below, so no exception group wraps it
                failure = exc
            finally:
                with anyio.CancelScope(shield=True):
                    await client._shutdown(grace)
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)  # whatever the agent left in its group
            with anyio.move_on_after(5):
                await process.aclose()
    if failure is not None:
        raise failure
