"""Drive a real agent subprocess over real pipes, the way an editor does, and record all it writes.

`AgentProcess` is the package's own client (`acp_agent/harness/client.py`) with the tests'
defaults: `python -m acp_agent` with nothing of the developer's environment, every stdout line
checked against the ACP schema (`schema.py`), all of stderr kept, a SIGKILL for an agent that does
not leave after EOF, and, on a clean exit, a failed test if anything the agent wrote was wrong.
Agent→client requests go to `on_request(method, params)`, so a test can play the editor.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

from acp_agent.harness.client import AgentClient, AgentExitedError, StderrMode
from tests.support import REPO_ROOT, base_env
from tests.support.schema import AcpSchema, Transcript, shorten

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


class RpcError(Exception):
    """An error answer to an agent→client request: `on_request` may return it or raise it."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code, self.message, self.data = code, message, data

    def to_dict(self) -> dict[str, Any]:
        extra = {} if self.data is None else {"data": self.data}
        return {"code": self.code, "message": self.message, **extra}


async def method_not_found(method: str, params: Any) -> RpcError:
    """The default client supports no agent→client method, like one with no capabilities."""
    return RpcError(-32601, "Method not found", {"method": method})


class AgentProcess(AgentClient):
    """One agent subprocess; make it with `async with AgentProcess.start(...) as agent`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.on_request: RequestHandler = method_not_found

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
        """Spawn `python -m acp_agent *args` (or `command + args`) with exactly `env` as its
        environment. On exit: EOF on stdin, `exit_timeout` s to leave, then SIGKILL to its group.
        """
        async with cls.spawn(
            [*(command or (sys.executable, "-m", "acp_agent")), *args],
            env=env if env is not None else {"PATH": os.environ.get("PATH", os.defpath)},
            cwd=cwd,
            stderr_mode=stderr,
            stderr_keep=None,
            transcript=Transcript(schema),
            first_id=first_id,
            verbose_errors=True,
            grace=exit_timeout,
            stop_signals=((signal.SIGKILL, 5.0),),
        ) as agent:
            agent.on_request = on_request or method_not_found
            yield agent
        if check_on_exit:
            agent.assert_clean()

    async def handle_request(self, message: dict[str, Any]) -> None:
        """Answer with what `on_request` returns or raises (an `RpcError` is an error answer)."""
        method = message["method"]
        try:
            outcome = await self.on_request(method, message.get("params"))
        except RpcError as exc:
            outcome = exc
        except Exception as exc:
            self.handler_errors.append(f"on_request({method!r}) raised {exc!r}")
            outcome = RpcError(-32603, f"the test client's handler failed: {exc!r}")
        if isinstance(outcome, RpcError):
            await self.respond(message.get("id"), error=outcome.to_dict())
        else:
            await self.respond(message.get("id"), result=outcome)

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

    async def round_trip(self) -> None:
        """Send a request the agent answers at once (an unknown `_` method), and wait for its answer.

        The agent reads stdin in order and starts each request's handler in order, so once this is
        answered every line written before it has been read and dispatched (a prompt queued, a
        cancel applied): the deterministic "by now it would have happened" that a sleep guesses.
        """
        answer = await self.request("_test/round_trip", {})
        assert answer.get("error", {}).get("code") == -32601, f"not a round trip: {shorten(answer, 300)}"

    def updates(self, session_id: str) -> list[dict[str, Any]]:
        """The params of every `session/update` for that session received so far."""
        notes = [m for m in self.messages if m.get("method") == "session/update" and "id" not in m]
        return [
            n["params"]
            for n in notes
            if isinstance(n.get("params"), dict) and n["params"].get("sessionId") == session_id
        ]

    def assert_clean(self) -> None:
        """Fail, listing every protocol violation, schema problem and handler error so far."""
        handler = ("errors in the test's on_request handler", self.handler_errors)
        if report := self.transcript.problems_report(handler):
            raise AssertionError(f"the agent broke the protocol\n{report}{self._stderr_report()}")

    def _result(self, response: dict[str, Any]) -> dict[str, Any]:
        result = response.get("result")
        if "error" in response or not isinstance(result, dict):
            raise AssertionError(f"wanted an object result, got {shorten(response, 500)}")
        return result
