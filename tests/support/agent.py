"""Drive a real agent subprocess over real pipes, the way an editor does, and record all it writes.

Every stdout line is checked (one JSON-RPC 2.0 object per line, nothing else) and, given an `AcpSchema`, every
message is validated against its ACP definition; on a clean exit the context manager fails the test if anything
was wrong. Agent→client requests are answered by `on_request`, so tests can play the editor.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from subprocess import DEVNULL, PIPE
from typing import Any, Literal, TypeVar

import anyio
from anyio.abc import Process, TaskGroup

from tests.support.schema import AcpSchema, message_kind, parse_line, shorten

__all__ = ["REPO_ROOT", "AgentExitedError", "AgentProcess", "RequestHandler", "RpcError", "base_env"]

REPO_ROOT = Path(__file__).resolve().parents[2]
RequestHandler = Callable[[str, Any], Awaitable[Any]]
StderrMode = Literal["pipe", "unread", "devnull"]
_T = TypeVar("_T")
_IO_ERRORS = (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError)


class RpcError(Exception):
    """An error answer to an agent→client request: `on_request` may return it or raise it."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code, self.message, self.data = code, message, data

    def to_dict(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class AgentExitedError(AssertionError):
    """The agent closed stdout while the test was still waiting for a message."""


async def method_not_found(method: str, params: Any) -> RpcError:
    """The default client: it supports no agent→client method, like a client with no capabilities."""
    return RpcError(-32601, "Method not found", {"method": method})


def base_env(tmp_path: Path, **extra: str | None) -> dict[str, str]:
    """A minimal environment with every config and data dir under `tmp_path`; `extra` adds (None removes).

    No `ANTHROPIC_API_KEY` unless given: the developer's own credentials must never reach a test.
    """
    home = tmp_path / "home"
    dirs = {
        "HOME": home,
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_STATE_HOME": home / ".local" / "state",
        "XDG_CACHE_HOME": home / ".cache",
        "ANTHROPIC_CONFIG_DIR": home / ".config" / "anthropic",
    }
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        **{name: str(path) for name, path in dirs.items()},
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "PYTHONPATH": str(REPO_ROOT),
        "ACP_AGENT_LOG_LEVEL": "info",
    }
    for name, value in extra.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def _id_key(value: Any) -> str:
    # JSON text keeps the type: 1, "1" and 1.0 are three different ids.
    return json.dumps(value, sort_keys=True)


class AgentProcess:
    """One agent subprocess; build it with `async with AgentProcess.start(...) as agent`."""

    def __init__(self, process: Process, schema: AcpSchema | None, first_id: int) -> None:
        self._process = process
        self.schema = schema
        self.messages: list[dict[str, Any]] = []  # every JSON object the agent wrote, in order
        self.stdout_lines: list[str] = []
        self.protocol_violations: list[str] = []
        self.schema_problems: list[str] = []
        self.handler_errors: list[str] = []
        self.sent: list[dict[str, Any] | bytes] = []  # everything the test wrote to stdin
        self.on_request: RequestHandler = method_not_found
        self._stderr = bytearray()
        self._next_id = first_id
        self._pending: dict[str, int | None] = {}  # id key → index of its response
        self._methods: dict[str, str] = {}  # id key → method of the request we sent
        self._answered: set[str] = set()
        self._agent_in_flight: set[str] = set()
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
        stderr: StderrMode = "pipe",
        check_on_exit: bool = True,
        first_id: int = 1,
        exit_timeout: float = 10.0,
        on_request: RequestHandler | None = None,
    ) -> AsyncIterator[AgentProcess]:
        """Spawn `python -m acp_agent *args` (or `command + args`) with exactly `env` as its environment."""
        argv = [*(command or (sys.executable, "-m", "acp_agent")), *args]
        process = await anyio.open_process(
            argv,
            stdin=PIPE,
            stdout=PIPE,
            stderr=DEVNULL if stderr == "devnull" else PIPE,
            cwd=cwd,
            env=dict(env) if env is not None else {"PATH": os.environ.get("PATH", os.defpath)},
            start_new_session=True,  # its own process group, so nothing it spawns outlives the test
        )
        agent = cls(process, schema, first_id)
        if on_request is not None:
            agent.on_request = on_request
        clean = False
        try:
            async with anyio.create_task_group() as tg:
                agent._tg = tg
                tg.start_soon(agent._read_stdout)
                if stderr == "pipe":
                    tg.start_soon(agent._drain_stderr)
                try:
                    yield agent
                    clean = True
                finally:
                    with anyio.CancelScope(shield=True):
                        await agent._shutdown(exit_timeout)
                    tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await agent._reap()
        if clean and check_on_exit:
            agent.assert_clean()

    # ---- talking to the agent -------------------------------------------------------------------------

    async def request(
        self, method: str, params: Any = None, *, id: int | str | None = None, timeout: float = 30.0
    ) -> dict[str, Any]:
        """Send a request and return the whole response message (result or error)."""
        rid: int | str = self._take_id() if id is None else id
        key = _id_key(rid)
        if key in self._pending:
            raise ValueError(f"request id {rid!r} is already waiting for a response")
        self._methods[key] = method
        self._answered.discard(key)
        self._pending[key] = None
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        try:
            await self._write(message, timeout)
            index = await self._wait(lambda: self._pending[key], timeout, f"a response to {method} (id {rid!r})")
        finally:
            self._pending.pop(key, None)
        return self.messages[index]

    async def notify(self, method: str, params: Any = None, *, timeout: float = 30.0) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._write(message, timeout)

    async def send_raw(self, data: bytes | str, *, timeout: float = 30.0) -> None:
        """Write bytes as they are; requests among them are remembered so their answers get checked."""
        raw = data.encode() if isinstance(data, str) else data
        for line in raw.split(b"\n"):
            try:
                parsed = json.loads(line)
            except ValueError:
                continue
            if isinstance(parsed, dict) and isinstance(parsed.get("method"), str) and "id" in parsed:
                self._methods[_id_key(parsed["id"])] = parsed["method"]
        await self._write(raw, timeout)

    async def next_message(self, timeout: float = 5.0) -> dict[str, Any]:
        """The oldest message not yet consumed (by `next_message`, `wait_for`, or as a `request` answer)."""

        def probe() -> dict[str, Any] | None:
            while self._cursor < len(self.messages):
                index = self._cursor
                self._cursor += 1
                if index not in self._consumed:
                    self._consumed.add(index)
                    return self.messages[index]
            return None

        return await self._wait(probe, timeout, "another message")

    async def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 10.0, *, since: int = 0
    ) -> dict[str, Any]:
        """The first message from index `since` on (already seen or still to come) that matches.

        A predicate raising LookupError or TypeError counts as no match, so `m["params"]["update"]` is fine.
        The match is marked consumed, so `next_message` will not return it again.
        """

        def probe() -> dict[str, Any] | None:
            for index in range(since, len(self.messages)):
                try:
                    matched = predicate(self.messages[index])
                except (LookupError, TypeError):
                    matched = False
                if matched:
                    self._consumed.add(index)
                    return self.messages[index]
            return None

        return await self._wait(probe, timeout, "a matching message")

    # ---- common flows ---------------------------------------------------------------------------------

    async def initialize(
        self, *, protocol_version: Any = 1, client_info: dict[str, Any] | None = None, **client_caps: Any
    ) -> dict[str, Any]:
        """`initialize` with `clientCapabilities` only when some are given (as the SDK client does)."""
        params: dict[str, Any] = {"protocolVersion": protocol_version}
        if client_caps:
            params["clientCapabilities"] = client_caps
        if client_info is not None:
            params["clientInfo"] = client_info
        return self._result(await self.request("initialize", params))

    async def new_session(
        self, cwd: str | os.PathLike[str], meta: dict[str, Any] | None = None, *,
        mcp_servers: Sequence[dict[str, Any]] = (), **extra: Any,
    ) -> str:
        params: dict[str, Any] = {"cwd": os.fspath(cwd), "mcpServers": list(mcp_servers), **extra}
        if meta is not None:
            params["_meta"] = meta
        session_id = self._result(await self.request("session/new", params)).get("sessionId")
        assert isinstance(session_id, str) and session_id, f"session/new gave no sessionId{self._context()}"
        return session_id

    async def prompt(
        self, session_id: str, text_or_blocks: str | dict[str, Any] | Sequence[dict[str, Any]],
        meta: dict[str, Any] | None = None, *, timeout: float = 30.0,
    ) -> dict[str, Any]:
        """Send `session/prompt` and return the whole response message."""
        if isinstance(text_or_blocks, str):
            blocks: list[Any] = [{"type": "text", "text": text_or_blocks}]
        elif isinstance(text_or_blocks, dict):
            blocks = [text_or_blocks]
        else:
            blocks = list(text_or_blocks)
        params: dict[str, Any] = {"sessionId": session_id, "prompt": blocks}
        if meta is not None:
            params["_meta"] = meta
        return await self.request("session/prompt", params, timeout=timeout)

    def updates(self, session_id: str) -> list[dict[str, Any]]:
        """The params of every `session/update` for that session received so far."""
        return [
            m["params"] for m in self.messages
            if m.get("method") == "session/update" and "id" not in m
            and isinstance(m.get("params"), dict) and m["params"].get("sessionId") == session_id
        ]

    # ---- the process ----------------------------------------------------------------------------------

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    def stderr_text(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    async def close_stdin(self) -> None:
        """EOF on the agent's stdin: the editor's way of saying goodbye."""
        if self._process.stdin is not None:
            try:
                await self._process.stdin.aclose()
            except _IO_ERRORS:
                pass

    async def wait_exit(self, timeout: float = 10.0) -> int:
        with anyio.move_on_after(timeout):
            return await self._process.wait()
        raise TimeoutError(f"the agent was still running after {timeout} s{self._context()}")

    def send_signal(self, signum: int) -> None:
        try:
            self._process.send_signal(signum)
        except ProcessLookupError:
            pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def assert_clean(self) -> None:
        """Fail listing every protocol violation, schema problem and test-handler error seen so far."""
        sections = [
            ("protocol violations", self.protocol_violations),
            ("schema problems", self.schema_problems),
            ("errors in the test's on_request handler", self.handler_errors),
        ]
        lines = [f"{title}:\n" + "\n".join(f"  - {p}" for p in items) for title, items in sections if items]
        if lines:
            raise AssertionError("the agent's output broke the protocol\n" + "\n".join(lines) + self._stderr_tail())

    # ---- internals ------------------------------------------------------------------------------------

    def _take_id(self) -> int:
        self._next_id += 1
        return self._next_id - 1

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def _wait(self, probe: Callable[[], _T | None], timeout: float, what: str) -> _T:
        with anyio.move_on_after(timeout):
            while True:
                found = probe()
                if found is not None:
                    return found
                if self._stdout_closed:
                    raise AgentExitedError(f"the agent closed stdout before {what}{self._context()}")
                await self._changed.wait()
        raise TimeoutError(f"no {what} within {timeout} s{self._context()}")

    async def _write(self, payload: dict[str, Any] | bytes, timeout: float) -> None:
        if isinstance(payload, bytes):
            data = payload
        else:
            data = (json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        self.sent.append(payload)
        assert self._process.stdin is not None
        with anyio.fail_after(timeout):
            async with self._write_lock:
                await self._process.stdin.send(data)

    async def _read_stdout(self) -> None:
        assert self._process.stdout is not None
        buffer, scan_from = bytearray(), 0
        try:
            async for chunk in self._process.stdout:
                buffer += chunk
                while (end := buffer.find(b"\n", scan_from)) >= 0:
                    line = bytes(buffer[:end])
                    del buffer[: end + 1]
                    scan_from = 0
                    self._on_line(line, terminated=True)
                scan_from = len(buffer)
        except _IO_ERRORS:
            pass
        if buffer:
            self._on_line(bytes(buffer), terminated=False)
        self._stdout_closed = True
        self._notify()

    async def _drain_stderr(self) -> None:
        assert self._process.stderr is not None
        try:
            async for chunk in self._process.stderr:
                self._stderr += chunk
        except _IO_ERRORS:
            pass

    def _on_line(self, raw: bytes, *, terminated: bool) -> None:
        text, message, problems = parse_line(raw, terminated=terminated)
        self.stdout_lines.append(text)
        self.protocol_violations += [f"stdout line {len(self.stdout_lines)}: {p}" for p in problems]
        if isinstance(message, dict):
            self._record(message)
            self._notify()

    def _record(self, message: dict[str, Any]) -> None:
        index = len(self.messages)
        self.messages.append(message)
        if self.schema is not None:
            label = message.get("method") or f"response to id {shorten(message.get('id'))}"
            for problem in self.schema.check_payload(message, request_method_for_id=self._method_for_id):
                self.schema_problems.append(f"message #{index} ({label}): {problem}")
        kind = message_kind(message)
        if kind == "response" and "id" in message:
            key = _id_key(message["id"])
            if key in self._pending and self._pending[key] is None:
                self._pending[key] = index
                self._consumed.add(index)
                self._answered.add(key)
            elif key in self._answered:
                self.protocol_violations.append(f"message #{index}: a second response to id {message['id']!r}")
        elif kind == "request" and isinstance(message.get("method"), str) and self._tg is not None:
            key = _id_key(message.get("id"))
            if key in self._agent_in_flight:
                self.protocol_violations.append(f"message #{index}: the agent reused in-flight id {key}")
            self._agent_in_flight.add(key)
            self._tg.start_soon(self._answer, message)

    def _method_for_id(self, request_id: Any) -> str | None:
        return self._methods.get(_id_key(request_id))

    async def _answer(self, message: dict[str, Any]) -> None:
        method, key = message["method"], _id_key(message.get("id"))
        try:
            outcome = await self.on_request(method, message.get("params"))
        except RpcError as exc:
            outcome = exc
        except Exception as exc:
            self.handler_errors.append(f"on_request({method!r}) raised {exc!r}")
            outcome = RpcError(-32603, f"the test client's handler failed: {exc!r}")
        self._agent_in_flight.discard(key)
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message.get("id")}
        if isinstance(outcome, RpcError):
            reply["error"] = outcome.to_dict()
        else:
            reply["result"] = outcome
        try:
            await self._write(reply, 30.0)
        except _IO_ERRORS:
            pass  # the agent is gone; the test will see that elsewhere

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
        try:
            os.killpg(self._process.pid, signal.SIGKILL)  # whatever the agent left in its group
        except (ProcessLookupError, PermissionError):
            pass
        if self._process.returncode is None:
            self.kill()
        with anyio.move_on_after(5):
            await self._process.aclose()

    def _stderr_tail(self, limit: int = 3000) -> str:
        text = self.stderr_text()
        return f"\n--- stderr tail ---\n{text[-limit:]}" if text else ""

    def _context(self) -> str:
        code = self._process.returncode
        status = "still running" if code is None else f"exit code {code}"
        recent = "".join(f"\n  #{len(self.messages) - len(self.messages[-4:]) + i}: {shorten(m, 300)}"
                         for i, m in enumerate(self.messages[-4:]))
        problems = "".join(f"\n  ! {p}" for p in self.protocol_violations[-5:])
        return f"\n--- agent: {status}; last messages:{recent or ' none'}{problems}{self._stderr_tail()}"
