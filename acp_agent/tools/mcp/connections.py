"""MCP servers as tools: connect the servers a session names, offer their tools, stop them at the end.

The official `mcp` SDK is slow to import, so it is imported only when a session has servers (D4).
Its transports are async context managers that must be entered and left in one task, so every
connection lives in its own long-lived task, in a task group the caller lends or that this object
opens, and is stopped by an event. A server that fails to start is logged and reported, never fatal.
A stdio server is marked as the agent's child (`process/lifetime.py`): should the agent be killed, what
the server left running (it ends itself when its stdin closes) is stopped by the agent's warden.
What a server is lives in `servers.py`; its tools as the model's, in `tool.py`; its prompts
as slash commands, in `prompts.py` (followed when they change: `prompt_watch.py`); its
questions to the user, relayed to the editor, in `elicit.py`.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import structlog
from anyio.abc import TaskGroup, TaskStatus

from acp_agent.process.lifetime import owned_env
from acp_agent.tools.base import Elicitation
from acp_agent.tools.mcp.elicit import completion_handler, elicitation_callback
from acp_agent.tools.mcp.prompt_watch import PromptWatch
from acp_agent.tools.mcp.prompts import McpPrompt, adapt_prompts, list_prompts
from acp_agent.tools.mcp.sdk import mcp_sdk
from acp_agent.tools.mcp.servers import McpFailure, McpServerSpec, every_page, failure_reason, parse_server
from acp_agent.tools.mcp.tool import McpTool, ServerConnection, adapt_tools

__all__ = ["McpConnections"]

log = structlog.get_logger(__name__)

_LIST_PAGES = 100


class McpConnections:
    """The MCP servers of one session.

    Lend a task group that outlives the session (`McpConnections(tg)`), or use
    `async with McpConnections() as mcp:`; then `await mcp.start(servers, cwd=…)` and, at the end,
    `await mcp.aclose()` (from any task). `failures` lists the servers that could not be used.
    """

    def __init__(
        self,
        task_group: TaskGroup | None = None,
        *,
        call_timeout: float = 120.0,
        close_timeout: float = 10.0,
        elicitation: Elicitation | None = None,
    ) -> None:
        self._tg = task_group
        self.elicitation = elicitation
        """The editor's forms and links, for servers that ask the user (None: servers cannot)."""
        self._own_tg: TaskGroup | None = None
        self.call_timeout = call_timeout
        self.close_timeout = close_timeout
        self.failures: list[McpFailure] = []
        self._connections: list[ServerConnection] = []
        self._names: set[str] = set()
        self.prompts: list[McpPrompt] = []
        """The connected servers' prompts (the session offers them as slash commands)."""
        self._prompt_names: set[str] = set()
        self.on_prompts_changed: Callable[[], Awaitable[None]] | None = None
        """Called when a connected server's prompts changed (`prompts` holds the new ones)."""
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
        http and sse servers are used only when `allow_http`. Failures land in `self.failures`.
        """
        specs: list[McpServerSpec] = []
        for raw in servers:
            name = str(raw.get("name") or "?") if isinstance(raw, Mapping) else "?"
            try:
                spec = parse_server(raw)
            except (ValueError, AttributeError) as exc:
                self._fail(name, f"invalid server: {exc}")
                continue
            if spec.transport != "stdio" and not allow_http:
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
                outcome = McpFailure(spec.name, failure_reason(exc))
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
        connection = ServerConnection(spec.name, self.call_timeout)
        self._connections.append(connection)
        watch = PromptWatch(spec.name, lambda listed: self._relisted(connection, listed))
        started = False
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + timeout) as scope:
                async with AsyncExitStack() as stack:
                    client = await _open_client(stack, spec, cwd, self._callbacks(connection, watch))
                    tools = adapt_tools(await _list_tools(client), connection, self._names)
                    await self._add_prompts(client, connection)
                    scope.deadline = math.inf
                    connection.client, started = client, True
                    log.info("mcp.connected", server=spec.name, tools=len(tools))
                    task_status.started(tools)
                    if self._closed:  # aclose() ran while this one was connecting
                        connection.stop.set()
                    async with anyio.create_task_group() as watching:
                        if getattr(client.server_capabilities, "prompts", None) is not None:
                            watching.start_soon(watch.run, client)
                        await connection.stop.wait()
                        watching.cancel_scope.cancel()
            if not started:
                task_status.started(McpFailure(spec.name, f"no answer within {timeout:g} s"))
        except Exception as exc:
            if not started:
                task_status.started(McpFailure(spec.name, failure_reason(exc)))
            else:
                log.warning("mcp.connection_lost", server=spec.name, error=failure_reason(exc))
        finally:
            connection.client = None
            connection.done.set()
            log.debug("mcp.stopped", server=spec.name)

    async def _add_prompts(self, client: Any, connection: ServerConnection) -> None:
        """The server's prompts, if it offers any; a failure to list them costs only them."""
        try:
            listed = await list_prompts(client)
        except Exception as exc:
            log.warning("mcp.prompts_unlisted", server=connection.server, error=failure_reason(exc))
            return
        self.prompts.extend(adapt_prompts(listed, connection, self._prompt_names))

    async def _relisted(self, connection: ServerConnection, listed: list[Any]) -> None:
        """A server's prompts, listed again after it said they changed: `prompts` holds the new
        list, and `on_prompts_changed` is told when it differs."""
        before = [p for p in self.prompts if p.connection is connection]
        self._prompt_names.difference_update(p.command for p in before)
        after = adapt_prompts(listed, connection, self._prompt_names)
        if after == before:  # compared without their connection: the same commands, words aside
            return
        self.prompts = [*(p for p in self.prompts if p.connection is not connection), *after]
        log.info("mcp.prompts_changed", server=connection.server, prompts=len(after))
        if self.on_prompts_changed is not None and not self._closed:
            await self.on_prompts_changed()

    def _callbacks(self, connection: ServerConnection, watch: PromptWatch) -> dict[str, Any]:
        """What the SDK client calls with the server's notices (a changed prompt list, a url
        elicitation done) and when the server asks the user something (elicitation)."""
        completed = None if self.elicitation is None else completion_handler(connection, self.elicitation)

        async def on_message(message: Any) -> None:
            watch.notice(message)
            if completed is not None:
                await completed(message)

        callbacks: dict[str, Any] = {"message_handler": on_message}
        if self.elicitation is not None:
            callbacks["elicitation_callback"] = elicitation_callback(connection, self.elicitation)
        return callbacks

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


async def _open_client(
    stack: AsyncExitStack, spec: McpServerSpec, cwd: Path, callbacks: dict[str, Any]
) -> Any:
    """Enter the SDK client for `spec` on `stack` (the handshake included) and return it."""
    from mcp import Client, Implementation, StdioServerParameters, stdio_client

    from acp_agent import __version__

    transport: Any
    if spec.transport == "stdio":
        params = StdioServerParameters(  # the SDK adds PATH, HOME and a few more to `env`
            command=spec.command, args=list(spec.args), env=owned_env(dict(spec.env)), cwd=str(cwd)
        )
        transport = stdio_client(params, errlog=sys.stderr)
    elif spec.transport == "sse":
        from mcp.client.sse import sse_client

        transport = sse_client(spec.url, headers=dict(spec.headers), timeout=30.0, sse_read_timeout=300.0)
    else:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers=dict(spec.headers), timeout=httpx2.Timeout(30.0, read=300.0))
        )
        transport = streamable_http_client(spec.url, http_client=http)
    info = Implementation(name="acp-agent", version=__version__)
    return await stack.enter_async_context(Client(transport, client_info=info, **callbacks))


async def _list_tools(client: Any) -> list[Any]:
    return await every_page(lambda cursor: client.list_tools(cursor=cursor), "tools", _LIST_PAGES)
