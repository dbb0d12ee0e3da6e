"""The test MCP server (`mcp_server.py`) over HTTP: Streamable HTTP or the older HTTP+SSE."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

from tests.support import REPO_ROOT

__all__ = ["SERVER", "remote_mcp_server"]

SERVER = REPO_ROOT / "tests" / "support" / "mcp_server.py"


@contextmanager
def remote_mcp_server(
    transport: Literal["http", "sse"], token: str = "secret"
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """Run the server on a free 127.0.0.1 port, requiring `Authorization: Bearer <token>`; yields
    its URL (`/mcp` or `/sse`) and the process, stopped afterwards."""
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), f"--{transport}", token], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        yield f"http://127.0.0.1:{port}/{'sse' if transport == 'sse' else 'mcp'}", proc
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
