"""The editor's files and terminals, for tools: fs/* and terminal/* over the Requester.

Used only when the client advertised the capability in `initialize`; a client error becomes a
ToolError the model sees, so the tool call fails and the turn goes on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from acp_agent.errors import RpcError, ToolError
from acp_agent.session.requester import Requester
from acp_agent.tools.base import TerminalExit, TerminalOutput

__all__ = ["EditorFileSystem", "EditorTerminals"]

CLIENT_TIMEOUT = 60.0
"""Seconds the editor has to answer one fs/* or terminal/* request (waiting for exit has none)."""


class _ClientCalls:
    def __init__(self, session_id: str, requester: Requester) -> None:
        self.session_id = session_id
        self.requester = requester

    async def call(self, method: str, params: dict[str, Any], timeout: float | None = CLIENT_TIMEOUT) -> Any:
        try:
            result = await self.requester.request(
                method, {"sessionId": self.session_id, **params}, timeout=timeout
            )
        except RpcError as exc:
            raise ToolError(f"the editor refused {method}: {exc.message}{_details(exc.data)}") from None
        except TimeoutError:
            raise ToolError(f"the editor did not answer {method} within {timeout:g} s") from None
        return result if isinstance(result, dict) else {}


class EditorFileSystem(_ClientCalls):
    """fs/read_text_file and fs/write_text_file: the editor's buffers, unsaved changes included."""

    def __init__(
        self, session_id: str, requester: Requester, *, can_read: bool, can_write: bool, local: Any
    ) -> None:
        super().__init__(session_id, requester)
        self.can_read, self.can_write, self.local = can_read, can_write, local

    async def read_text(self, path: Path) -> str:
        if not self.can_read:
            return str(await self.local.read_text(path))
        result = await self.call("fs/read_text_file", {"path": str(path)})
        content = result.get("content")
        if not isinstance(content, str):
            raise ToolError(f"the editor sent no content for {path}")
        return content

    async def write_text(self, path: Path, text: str) -> None:
        if not self.can_write:
            await self.local.write_text(path, text)
            return
        await self.call("fs/write_text_file", {"path": str(path), "content": text})


class EditorTerminals(_ClientCalls):
    """terminal/*: commands run in the editor's terminals, which the user can watch."""

    async def create(
        self,
        command: str,
        args: list[str],
        cwd: Path,
        output_byte_limit: int,
        env: Mapping[str, str] | None = None,
    ) -> str:
        params: dict[str, Any] = {
            "command": command,
            "args": args,
            "cwd": str(cwd),
            "outputByteLimit": output_byte_limit,
        }
        if env:
            params["env"] = [{"name": name, "value": value} for name, value in env.items()]
        result = await self.call("terminal/create", params)
        terminal_id = result.get("terminalId")
        if not isinstance(terminal_id, str):
            raise ToolError("the editor did not return a terminalId")
        return terminal_id

    async def wait_for_exit(self, terminal_id: str) -> TerminalExit:
        result = await self.call("terminal/wait_for_exit", {"terminalId": terminal_id}, timeout=None)
        return _exit(result)

    async def output(self, terminal_id: str) -> TerminalOutput:
        result = await self.call("terminal/output", {"terminalId": terminal_id})
        status = result.get("exitStatus")
        return TerminalOutput(
            str(result.get("output") or ""),
            bool(result.get("truncated")),
            _exit(status) if isinstance(status, dict) else None,
        )

    async def kill(self, terminal_id: str) -> None:
        await self.call("terminal/kill", {"terminalId": terminal_id})

    async def release(self, terminal_id: str) -> None:
        await self.call("terminal/release", {"terminalId": terminal_id})


DETAILS_MAX_CHARS = 2000
"""How much of an error's `data` the model is shown (editors put the reason there)."""


def _details(data: Any) -> str:
    """The editor's `error.data`, kept for the model: often the only place that says why."""
    if data is None or data == {} or data == []:
        return ""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    if len(text) > DETAILS_MAX_CHARS:
        text = text[:DETAILS_MAX_CHARS] + " …"
    return f" ({text})"


def _exit(result: dict[str, Any]) -> TerminalExit:
    code = result.get("exitCode")
    signal = result.get("signal")
    return TerminalExit(code if isinstance(code, int) else None, signal if isinstance(signal, str) else None)
