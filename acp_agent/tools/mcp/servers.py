"""The MCP servers a session names: their ACP description checked, and why one could not be used."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["McpFailure", "McpServerSpec", "every_page", "failure_reason", "parse_server"]


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


def failure_reason(exc: BaseException) -> str:
    """A one-line cause, unwrapping exception groups of one."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError) and exc.filename:
        return f"command not found: {exc.filename}"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


async def every_page(list_page: Callable[[Any], Awaitable[Any]], items: str, max_pages: int) -> list[Any]:
    """Every item of an MCP list method (`list_tools`, `list_prompts`), following `next_cursor`
    for at most `max_pages` pages: a server that pages forever cannot hold the session up."""
    found: list[Any] = []
    cursor = None
    for _ in range(max_pages):
        page = await list_page(cursor)
        found.extend(getattr(page, items))
        cursor = page.next_cursor
        if not cursor:
            break
    return found
