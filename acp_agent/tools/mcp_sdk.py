"""What the installed `mcp` SDK can do, found on disk without importing it (it is slow to import,
and `initialize` answers with it)."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

__all__ = ["mcp_servers_supported_http"]


def mcp_servers_supported_http() -> bool:
    """Whether the installed SDK has the Streamable HTTP client (decides `mcpCapabilities.http`)."""
    spec = find_spec("mcp")
    if spec is None or not spec.submodule_search_locations:
        return False
    return (
        any((Path(p) / "client" / "streamable_http.py").is_file() for p in spec.submodule_search_locations)
        and find_spec("httpx2") is not None
    )
