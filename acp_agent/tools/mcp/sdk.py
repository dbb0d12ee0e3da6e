"""The `mcp` SDK, slow to import: what it can do, found on disk without importing it (`initialize`
answers with it), and its import, deferred until a session has servers (D4)."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path
from types import ModuleType

from acp_agent.lazy import deferred

__all__ = ["mcp_sdk", "mcp_servers_supported_http", "mcp_servers_supported_sse"]


@deferred
def mcp_sdk() -> ModuleType:
    """The SDK's package (with the clients a connection opens)."""
    import mcp

    return mcp


def mcp_servers_supported_http() -> bool:
    """Whether the installed SDK has the Streamable HTTP client (decides `mcpCapabilities.http`)."""
    return _has_client("streamable_http.py")


def mcp_servers_supported_sse() -> bool:
    """Whether the installed SDK has the SSE client (decides `mcpCapabilities.sse`)."""
    return _has_client("sse.py")


def _has_client(module: str) -> bool:
    spec = find_spec("mcp")
    if spec is None or not spec.submodule_search_locations:
        return False
    return (
        any((Path(p) / "client" / module).is_file() for p in spec.submodule_search_locations)
        and find_spec("httpx2") is not None
    )
