"""An MCP server's tools as tools for the model: names the API accepts, schemas, results as text.

A tool calls its server through the `ServerConnection` that `connections.py` keeps running, within the
call timeout; a failure or a timeout is the model's to hear about, never the turn's end.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any, Literal

import anyio
import structlog

from acp_agent.errors import ToolError, ToolTimeout
from acp_agent.tools.base import ToolContext, ToolResult
from acp_agent.tools.mcp.servers import failure_reason
from acp_agent.tools.truncate import cap_text

__all__ = ["McpTool", "ServerConnection", "adapt_tools", "content_text", "object_schema", "tool_name"]

log = structlog.get_logger(__name__)

MAX_NAME = 64
"""The Messages API's tool-name limit (`^[a-zA-Z0-9_-]{1,64}$`)."""
MAX_OUTPUT_BYTES = 256 * 1024
MAX_RAW_OUTPUT_BYTES = 64 * 1024
_BAD_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


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


class ServerConnection:
    """One running server: its SDK client while connected, the events that stop and await it, and
    the tool calls under way (a question the server asks meanwhile belongs to the call)."""

    def __init__(self, server: str, call_timeout: float) -> None:
        self.server = server
        self.call_timeout = call_timeout
        self.client: Any = None
        self.stop = anyio.Event()
        self.done = anyio.Event()
        self.calls: list[str | None] = []
        """The ids of this server's tool calls under way, oldest first."""
        self.questions: dict[str | None, set[anyio.CancelScope]] = {}
        """The questions relayed for each call, abandoned when the call ends."""

    def current_call(self) -> str | None:
        """The call a question from the server belongs to: the one under way, if only one is."""
        return self.calls[0] if len(self.calls) == 1 else None

    def call_ended(self, call_id: str | None) -> None:
        self.calls.remove(call_id)
        if call_id not in self.calls:
            for scope in self.questions.pop(call_id, set()):
                scope.cancel()


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
        connection: ServerConnection,
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
        self._connection.calls.append(ctx.call_id)
        try:
            with anyio.fail_after(seconds):
                result = await client.call_tool(self.remote_name, args)
        except TimeoutError:
            raise ToolTimeout(
                f"{self.name}: the MCP server {self.server!r} did not answer within {seconds:g} s"
            ) from None
        except Exception as exc:  # transport and protocol failures: the model hears about them
            log.warning(
                "mcp.call_failed", server=self.server, tool=self.remote_name, error=failure_reason(exc)
            )
            raise ToolError(
                f"{self.name}: the MCP server {self.server!r} failed: {failure_reason(exc)}"
            ) from exc
        finally:
            self._connection.call_ended(ctx.call_id)
        text = content_text(result.content, result.structured_content) or "(no output)"
        raw: dict[str, Any] | None = None
        if result.structured_content is not None:
            encoded = json.dumps(result.structured_content, ensure_ascii=False)
            if len(encoded) <= MAX_RAW_OUTPUT_BYTES:
                raw = {"structuredContent": result.structured_content}
        return ToolResult(cap_text(text, MAX_OUTPUT_BYTES), is_error=bool(result.is_error), raw_output=raw)


def adapt_tools(listed: list[Any], connection: ServerConnection, names: set[str]) -> list[McpTool]:
    """The tools a server listed, as tools for the model; each name given is added to `names`."""
    tools = []
    for tool in listed:
        name = tool_name(connection.server, tool.name, names)
        names.add(name)
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
