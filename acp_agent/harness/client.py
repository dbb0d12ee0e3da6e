"""The one JSON-RPC client of a spawned agent, over its stdio pipes: the smoke runner, the harness
and the test suite all drive agents through it.

Not the `acp` SDK's client: these tools must see exactly what any agent writes (every stdout line
goes through a `wire.Transcript`, bad lines included), answer the agent's requests their own way,
and keep the agent's stderr drained so it never blocks. The process itself (spawning, stderr,
stopping) is `process.ChildProcess`; reading stdout and matching responses is `inbox.Inbox`; what
it raises is in `agent_errors`.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Self, TypeVar

import anyio
from anyio.abc import Process, TaskGroup

from acp_agent.harness.agent_errors import AgentExitedError, AgentRpcError, AgentSpawnError
from acp_agent.harness.inbox import Inbox
from acp_agent.harness.process import (
    IO_ERRORS,
    STOP_SIGNALS,
    TAIL_BYTES,
    ByteSink,
    ChildProcess,
    StderrMode,
    open_agent_process,
)
from acp_agent.harness.wire import Transcript, id_key

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
_T = TypeVar("_T")
STDERR_EOF_WAIT = 2.0
"""How long an exited agent's stderr may stay open (held by a grandchild) before it is left unread."""


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
        stderr_sink: ByteSink | None = None,
        stderr_keep: int | None = TAIL_BYTES,
        transcript: Transcript | None = None,
        first_id: int = 0,
        verbose_errors: bool = False,
    ) -> None:
        self._child = ChildProcess(process, stderr_sink=stderr_sink, stderr_keep=stderr_keep)
        self.pid = process.pid
        self.transcript = transcript or Transcript()
        self._inbox = Inbox(
            self.transcript, on_request=self._on_request, on_notification=self._on_notification
        )
        self.messages = self.transcript.messages  # every JSON object the agent wrote, in order
        self.stdout_lines = self.transcript.stdout_lines
        self.protocol_violations = self.transcript.protocol_violations
        self.schema_problems = self.transcript.schema_problems
        self.invalid_lines = self._inbox.invalid_lines  # stdout lines that were not JSON objects
        self.handler_errors: list[str] = []
        self.sent: list[dict[str, Any] | bytes] = []  # everything we wrote, in order
        self.request_handler: RequestHandler = on_request or _reply_method_not_found
        self.on_notification = on_notification
        self.verbose_errors = verbose_errors
        """Timeouts and early exits also show the last messages and the stderr tail."""
        self._next_id = first_id
        self._tg: TaskGroup | None = None

    @classmethod
    @asynccontextmanager
    async def spawn(
        cls,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: ByteSink | None = None,
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
        process = await open_agent_process(command, env=env, cwd=cwd, stderr_mode=stderr_mode)
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
                tg.start_soon(client._inbox.read, client._child.stdout)
                if stderr_mode == "pipe":
                    assert client._child.stderr is not None
                    tg.start_soon(client._child.drain_stderr, client._child.stderr)
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
                await client._child.reap()
        if failure is not None:
            raise failure

    @property
    def returncode(self) -> int | None:
        return self._child.returncode

    @property
    def stdout_closed(self) -> bool:
        return self._inbox.closed

    def stderr_text(self) -> str:
        """All the agent's stderr that was kept."""
        return self._child.stderr_text()

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
        self._inbox.note_sent(payload)
        try:
            with anyio.fail_after(timeout):
                await self._child.write(data)
        except IO_ERRORS as exc:
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
        self._inbox.expect(id)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        try:
            await self.send(message if params is None else {**message, "params": params}, timeout)
        except BaseException:
            self._inbox.forget(id)
            raise
        return id

    async def response(self, id: Any, timeout: float | None = 30) -> dict[str, Any]:
        """Wait for the whole response message to the request `id` and forget the request.

        Raises:
            KeyError: no request with that id is waiting.
        """
        if not self._inbox.is_waiting(id):
            raise KeyError(f"no request with id {id!r} is waiting")
        what = f"response to {self.transcript.method_for_id(id) or 'a request'} (id {id!r})"
        index = await self.wait_until(lambda: self._inbox.response_index(id), timeout, what)
        self._inbox.forget(id)
        return self.messages[index]

    async def request(
        self, method: str, params: Any = None, *, id: Any = None, timeout: float = 30
    ) -> dict[str, Any]:
        """Send a request; return the whole response message (with `result` or `error`)."""
        rid = await self.send_request(method, params, id=id, timeout=timeout)
        try:
            return await self.response(rid, timeout)
        finally:
            self._inbox.forget(rid)

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
        await self._child.close_stdin()

    def send_signal(self, signum: signal.Signals) -> None:
        self._child.send_signal(signum)

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
                        await self._child.wait()
                    raise AgentExitedError(
                        f"before any {what}", self.returncode, self.stderr_tail(), self._context()
                    )
                await self._inbox.changed()
            return found
        raise TimeoutError(f"no {what} within {timeout} s{self._context()}")

    async def wait_exit(self, timeout: float = 10) -> int:
        """The agent's exit code, once it has exited and its stderr has been read (its last log
        lines are in `stderr_text()`; a grandchild holding stderr gets `STDERR_EOF_WAIT` s).

        Raises:
            TimeoutError: it was still running after `timeout` s.
        """
        code: int | None = None
        with anyio.move_on_after(timeout):
            code = await self._child.wait()
        if code is None:
            raise TimeoutError(f"the agent was still running after {timeout} s{self._context()}")
        await self._child.stderr_drained(STDERR_EOF_WAIT)
        return code

    async def _take(
        self, predicate: Callable[[dict[str, Any]], bool], since: int | None, timeout: float, what: str
    ) -> dict[str, Any]:
        return await self.wait_until(lambda: self._inbox.take(predicate, since), timeout, what)

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

    # --- what the inbox hands on ------------------------------------------------------------

    def _on_request(self, message: dict[str, Any]) -> None:
        if self._tg is not None:
            self._tg.start_soon(self._answer, message)

    def _on_notification(self, message: dict[str, Any]) -> None:
        if self.on_notification is not None:
            try:
                self.on_notification(message)
            except Exception as exc:  # a display bug must not stop the reader
                self.handler_errors.append(f"on_notification({message.get('method')!r}) raised {exc!r}")

    # --- ending ----------------------------------------------------------------------------

    async def _shutdown(self, grace: float, stop_signals: Sequence[tuple[signal.Signals, float]]) -> None:
        await self._child.stop(grace, stop_signals)
        with anyio.move_on_after(2):  # let the reader record the last lines
            while not self.stdout_closed:
                await self._inbox.changed()
        await self._child.stderr_drained(STDERR_EOF_WAIT)  # and the last log lines


spawn_agent = AgentClient.spawn
"""`async with spawn_agent(command, ...) as client`: see `AgentClient.spawn`."""
