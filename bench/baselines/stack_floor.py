"""The stack floor for cold start: the smallest ACP agent on the agent's own stack.

The relay baseline (`relay.py`) imports only asyncio and json, so it shows what a Python process
costs, not what the agent's libraries cost before they do anything. This file is the other floor:
anyio (asyncio backend) reading stdin lines, pydantic v2 models with camelCase aliases validating
the `initialize` and `session/new` params, structlog writing JSON lines to stderr, one JSON line
per response on stdout. Nothing else: no `anthropic` (not even in the background), no tools, no
sessions kept. Its spawn → `session/new` time is what any agent built on anyio + pydantic +
structlog pays on this machine; everything the agent adds over it is the agent's own cost.

It answers `initialize` and `session/new`, answers every other request -32601 (bad params
-32602, an unparsable line -32700), ignores notifications, and exits 0 on stdin EOF.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import structlog
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel

_READ_BLOCK = 1 << 16


class _Params(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class InitializeParams(_Params):
    protocol_version: int
    client_capabilities: dict[str, Any] | None = None


class NewSessionParams(_Params):
    cwd: str
    mcp_servers: list[Any]


structlog.configure(
    processors=[
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.JSONRenderer(),
    ],
    logger_factory=structlog.PrintLoggerFactory(sys.stderr),
    cache_logger_on_first_use=True,
)
log = structlog.get_logger("stack_floor")


def _write(message: dict[str, Any]) -> None:
    view = memoryview((json.dumps(message, separators=(",", ":")) + "\n").encode())
    while view:
        view = view[os.write(1, view) :]


def _error(rid: Any, code: int, text: str) -> None:
    _write({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": text}})


def _handle(line: bytes) -> None:
    try:
        message = json.loads(line)
    except ValueError:
        _error(None, -32700, "Parse error")
        return
    if not isinstance(message, dict):
        _error(None, -32600, "Invalid Request")
        return
    method, rid, params = message.get("method"), message.get("id"), message.get("params") or {}
    if rid is None:  # a notification (or a stray response): nothing to answer
        return
    try:
        if method == "initialize":
            InitializeParams.model_validate(params)
            result: dict[str, Any] = {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []}
        elif method == "session/new":
            NewSessionParams.model_validate(params)
            result = {"sessionId": f"sess_{uuid.uuid4().hex}"}
        else:
            _error(rid, -32601, "Method not found")
            return
    except ValidationError as exc:
        _error(rid, -32602, f"Invalid params: {exc.error_count()} error(s)")
        return
    _write({"jsonrpc": "2.0", "id": rid, "result": result})


async def _lines(fd: int) -> AsyncIterator[bytes]:
    """Lines of `fd` without their newline, read non-blocking through anyio (as the agent does)."""
    buf = b""
    while True:
        try:
            chunk = os.read(fd, _READ_BLOCK)
        except BlockingIOError:
            await anyio.wait_readable(fd)
            continue
        if not chunk:
            break
        buf += chunk
        *lines, buf = buf.split(b"\n")
        for line in lines:
            yield line
    if buf:
        yield buf


async def serve() -> None:
    log.info("stack_floor.started", pid=os.getpid())
    fd = sys.stdin.fileno()
    was_blocking = os.get_blocking(fd)
    os.set_blocking(fd, False)
    try:
        async for line in _lines(fd):
            if line.strip():
                _handle(line)
    finally:
        os.set_blocking(fd, was_blocking)


if __name__ == "__main__":
    anyio.run(serve, backend="asyncio")
