"""MCP servers as tools: connect the servers a session names, offer their tools, stop them at the end.

The official `mcp` SDK is slow to import, so it is imported only when a session has servers (D4).
Its transports are async context managers that must be entered and left in one task, so every
connection lives in its own long-lived task, in a task group the caller lends or that this object
opens, and is stopped by an event. A server that fails to start is logged and reported, never fatal.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sys
from collections.abc import Iterable, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import anyio
import structlog
from anyio.abc import TaskGroup, TaskStatus

from acp_agent.errors import ToolError, ToolTimeout
from acp_agent.tools.base import ToolContext, ToolResult
from acp_agent.tools.mcp_sdk import mcp_sdk, mcp_servers_supported_http
from acp_agent.tools.truncate import cap_text

__all__ = [
    "McpConnections",
    "McpFailure",
    "McpServerSpec",
    "McpTool",
    "content_text",
    "mcp_servers_supported_http",
    "object_schema",
    "parse_server",
    "tool_name",
]

log = structlog.get_logger(__name__)

MAX_NAME = 64
"""The Messages API's tool-name limit (`^[a-zA-Z0-9_-]{1,64}$`)."""
MAX_OUTPUT_BYTES = 256 * 1024
MAX_RAW_OUTPUT_BYTES = 64 * 1024
_LIST_PAGES = 100
_BAD_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


@lru_cache(maxsize=1)
@dataclass(frozen=True, slots=True)
class McpServerSpec:
    """One ACP `McpServer`: stdio (command, args, env) or http/sse (url, headers)."""

    name: str
    transport: Literal["stdio", "http", "sse"]
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class McpFailure:
    """A server that could not be used, and why (for the session to tell the user)."""

    server: str
    reason: str


def _pairs(raw: Any, field: str) -> tuple[tuple[str, str], ...]:
    if raw is None:
        return ()
    if isinstance(raw, Mapping):
        return tuple((str(k), str(v)) for k, v in raw.items())
    if not isinstance(raw, list) or not all(
        isinstance(p, Mapping) and isinstance(p.get("name"), str) and isinstance(p.get("value"), str)
        for p in raw
    ):
        raise ValueError(f"{field} must be a list of {{name, value}} strings")
    return tuple((p["name"], p["value"]) for p in raw)


def parse_server(raw: Mapping[str, Any]) -> McpServerSpec:
    """An ACP `McpServer` object (wire shape, camelCase) as a spec. Raises ValueError saying what is wrong."""
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("name must be a non-empty string")
    kind = raw.get("type", "stdio")
    if kind == "stdio":
        command, args = raw.get("command"), raw.get("args", [])
        if not isinstance(command, str) or not command:
            raise ValueError("command must be a non-empty string")
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ValueError("args must be a list of strings")
        return McpServerSpec(
            name, "stdio", command=command, args=tuple(args), env=_pairs(raw.get("env"), "env")
        )
    if kind in ("http", "sse"):
        url = raw.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError("url must be an http(s) URL")
        return McpServerSpec(name, kind, url=url, headers=_pairs(raw.get("headers"), "headers"))
    raise ValueError(f"unknown transport type {kind!r}")


def tool_name(server: str, tool: str, taken: Iterable[str] = ()) -> str:
    """`mcp__<server>__<tool>`, cleaned to the API's name rule, hashed when too long or taken."""
    used = set(taken)
    clean = [_BAD_NAME_CHARS.sub("_", part) or "_" for part in (server, tool)]
    name = f"mcp__{clean[0]}__{clean[1]}"
    salt = 0
    while len(name) > MAX_NAME or name in used:
        digest = hashlib.sha256(f"{server}\0{tool}\0{salt}".encode()).hexdigest()[:8]
        name = f"{name[: MAX_NAME - 9]}_{digest}"
        salt += 1
    return name


def object_schema(schema: Any) -> dict[str, Any]:
    """The server's input schema as the API wants it: a JSON-schema object with `"type": "object"`."""
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}
    if schema.get("type") in (None, "object"):
        return {**schema, "type": "object"}
    return {"type": "object", "properties": {}}  # a non-object schema cannot take MCP's named arguments


def content_text(blocks: Iterable[Any], structured: Any = None) -> str:
    """MCP result content as text for the model: text joined, other blocks summarised."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", "unknown")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            size = len(block.data) * 3 // 4
            parts.append(f"[{kind}: {block.mime_type}, about {size:,} bytes]")
        elif kind == "resource_link":
            parts.append(f"[resource link: {block.uri} ({block.name})]")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            if text is not None:
                parts.append(f"[resource: {resource.uri}]\n{text}")
            else:
                parts.append(f"[resource: {resource.uri}, {resource.mime_type or 'binary'}]")
        else:
            parts.append(f"[{kind} content]")
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False))
    return "\n".join(parts)


def _reason(exc: BaseException) -> str:
    """A one-line cause, unwrapping exception groups of one."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"command not found: {exc.filename}"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


class _Connection:
    """One running server: its SDK client while connected, and the events that stop and await it."""

    def __init__(self, server: str, call_timeout: float) -> None:
        self.server = server
        self.call_timeout = call_timeout
        self.client: Any = None
        self.stop = anyio.Event()
        self.done = anyio.Event()


class McpTool:
    """One tool of an MCP server, run with the same permission rules as a command.

    `read_only` is the server's `readOnlyHint`: such calls may run beside other read-only ones
    (the user is still asked, one question at a time, since the hint is the server's own claim).
    """

    kind = "other"
    permission: Literal["edit", "execute"] | None = "execute"

    def __init__(
        self,
        name: str,
        description: str,
        input_schema: dict[str, Any],
        *,
        remote_name: str,
        connection: _Connection,
        read_only: bool = False,
    ) -> None:
        self.name = name
        self.read_only = read_only
        self.description = description
        self.input_schema = input_schema
        self.server = connection.server
        self.remote_name = remote_name
        self._connection = connection

    def title(self, args: dict[str, Any]) -> str:
        return f"MCP {self.remote_name} ({self.server})"

    def time_allowance(self, args: dict[str, Any]) -> float:
        """A little past our own call timeout, so ours fires first and says which server was slow."""
        return self._connection.call_timeout + 5.0

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Call the tool. Raises ToolTimeout past the call timeout, ToolError when the server fails."""
        client, seconds = self._connection.client, self._connection.call_timeout
        if client is None:
            raise ToolError(f"the MCP server {self.server!r} is not running")
        try:
            with anyio.fail_after(seconds):
                result = await client.call_tool(self.remote_name, args)
        except TimeoutError:
            raise ToolTimeout(
                f"{self.name}: the MCP server {self.server!r} did not answer within {seconds:g} s"
            ) from None
        except Exception as exc:  # transport and protocol failures: the model hears about them
            log.warning("mcp.call_failed", server=self.server, tool=self.remote_name, error=_reason(exc))
            raise ToolError(f"{self.name}: the MCP server {self.server!r} failed: {_reason(exc)}") from exc
        text = content_text(result.content, result.structured_content) or "(no output)"
        raw: dict[str, Any] | None = None
        if result.structured_content is not None:
            encoded = json.dumps(result.structured_content, ensure_ascii=False)
            if len(encoded) <= MAX_RAW_OUTPUT_BYTES:
                raw = {"structuredContent": result.structured_content}
        return ToolResult(cap_text(text, MAX_OUTPUT_BYTES), is_error=bool(result.is_error), raw_output=raw)


class McpConnections:
    """The MCP servers of one session.

    Lend a task group that outlives the session (`McpConnections(tg)`), or use
    `async with McpConnections() as mcp:`; then `await mcp.start(servers, cwd=…)` and, at the end,
    `await mcp.aclose()` (from any task). `failures` lists the servers that could not be used.
    """

    def __init__(
        self, task_group: TaskGroup | None = None, *, call_timeout: float = 120.0, close_timeout: float = 10.0
    ) -> None:
        self._tg = task_group
        self._own_tg: TaskGroup | None = None
        self.call_timeout = call_timeout
        self.close_timeout = close_timeout
        self.failures: list[McpFailure] = []
        self._connections: list[_Connection] = []
        self._names: set[str] = set()
        self._closed = False

    async def __aenter__(self) -> McpConnections:
        if self._tg is None:
            self._own_tg = self._tg = anyio.create_task_group()
            await self._own_tg.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        await self.aclose()
        if self._own_tg is not None:
            return await self._own_tg.__aexit__(*exc_info)
        return None

    async def start(
        self,
        servers: Iterable[Mapping[str, Any]],
        *,
        cwd: Path,
        timeout: float = 30.0,
        allow_http: bool = False,
    ) -> list[McpTool]:
        """Connect every server at once (each within `timeout`) and return their tools.

        Stdio servers run in `cwd` with their `env` over a minimal inherited one (PATH, HOME, …);
        http servers are used only when `allow_http`. Failures land in `self.failures`.
        """
        specs: list[McpServerSpec] = []
        for raw in servers:
            name = str(raw.get("name") or "?") if isinstance(raw, Mapping) else "?"
            try:
                spec = parse_server(raw)
            except (ValueError, AttributeError) as exc:
                self._fail(name, f"invalid server: {exc}")
                continue
            if spec.transport == "sse" or (spec.transport == "http" and not allow_http):
                self._fail(spec.name, f"{spec.transport} MCP servers are not supported")
            elif self._closed or self._tg is None:
                self._fail(spec.name, "the session's MCP connections are closed or not entered")
            else:
                specs.append(spec)
        found: list[list[McpTool]] = [[] for _ in specs]
        if specs:  # seconds of CPU: off the event loop, and never beside another deferred import
            await mcp_sdk()

        async def connect(index: int, spec: McpServerSpec) -> None:
            assert self._tg is not None
            try:
                outcome = await self._tg.start(self._serve, spec, cwd, timeout)
            except RuntimeError as exc:  # the lent task group has already ended
                outcome = McpFailure(spec.name, _reason(exc))
            if isinstance(outcome, McpFailure):
                self._fail(outcome.server, outcome.reason)
            else:
                found[index] = outcome

        async with anyio.create_task_group() as starters:
            for index, spec in enumerate(specs):
                starters.start_soon(connect, index, spec)
        return [tool for tools in found for tool in tools]

    def _fail(self, server: str, reason: str) -> None:
        log.warning("mcp.server_failed", server=server, reason=reason)
        self.failures.append(McpFailure(server, reason))

    async def _serve(
        self, spec: McpServerSpec, cwd: Path, timeout: float, *, task_status: TaskStatus[Any]
    ) -> None:
        """Own one connection from spawn to stop; report its tools or a failure through `task_status`."""
        connection = _Connection(spec.name, self.call_timeout)
        self._connections.append(connection)
        started = False
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + timeout) as scope:
                async with AsyncExitStack() as stack:
                    client = await _open_client(stack, spec, cwd)
                    tools = self._tools_of(await _list_tools(client), connection)
                    scope.deadline = math.inf
                    connection.client, started = client, True
                    log.info("mcp.connected", server=spec.name, tools=len(tools))
                    task_status.started(tools)
                    if self._closed:  # aclose() ran while this one was connecting
                        connection.stop.set()
                    await connection.stop.wait()
            if not started:
                task_status.started(McpFailure(spec.name, f"no answer within {timeout:g} s"))
        except Exception as exc:
            if not started:
                task_status.started(McpFailure(spec.name, _reason(exc)))
            else:
                log.warning("mcp.connection_lost", server=spec.name, error=_reason(exc))
        finally:
            connection.client = None
            connection.done.set()
            log.debug("mcp.stopped", server=spec.name)

    def _tools_of(self, listed: list[Any], connection: _Connection) -> list[McpTool]:
        tools = []
        for tool in listed:
            name = tool_name(connection.server, tool.name, self._names)
            self._names.add(name)
            description = tool.description or f"The {tool.name} tool of the MCP server {connection.server}."
            hints = getattr(tool, "annotations", None)
            read_only = getattr(hints, "read_only_hint", getattr(hints, "readOnlyHint", None)) is True
            tools.append(
                McpTool(
                    name,
                    description,
                    object_schema(tool.input_schema),
                    remote_name=tool.name,
                    connection=connection,
                    read_only=read_only,
                )
            )
        return tools

    async def aclose(self) -> None:
        """Stop every server (close its stdin, then terminate it), waiting at most `close_timeout`."""
        self._closed = True
        for connection in self._connections:
            connection.stop.set()
        with anyio.CancelScope(shield=True), anyio.move_on_after(self.close_timeout) as scope:
            for connection in self._connections:
                await connection.done.wait()
        if scope.cancelled_caught:
            log.warning("mcp.close_timed_out", seconds=self.close_timeout)


async def _open_client(stack: AsyncExitStack, spec: McpServerSpec, cwd: Path) -> Any:
    """Enter the SDK client for `spec` on `stack` (the handshake included) and return it."""
    from mcp import Client, Implementation, StdioServerParameters, stdio_client

    from acp_agent import __version__

    transport: Any
    if spec.transport == "stdio":
        params = StdioServerParameters(
            command=spec.command, args=list(spec.args), env=dict(spec.env), cwd=str(cwd)
        )
        transport = stdio_client(params, errlog=sys.stderr)
    else:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers=dict(spec.headers), timeout=httpx2.Timeout(30.0, read=300.0))
        )
        transport = streamable_http_client(spec.url, http_client=http)
    info = Implementation(name="acp-agent", version=__version__)
    return await stack.enter_async_context(Client(transport, client_info=info))


async def _list_tools(client: Any) -> list[Any]:
    tools: list[Any] = []
    cursor = None
    for _ in range(_LIST_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools
