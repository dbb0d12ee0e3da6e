"""A tiny MCP server for the tests, built with the official SDK's `MCPServer`.

Run as a script: `python mcp_server.py` serves stdio; `python mcp_server.py --http TOKEN` serves
Streamable HTTP (at `/mcp`) on a free 127.0.0.1 port, prints that port as its first stdout line, and
answers 401 unless the request carries `Authorization: Bearer TOKEN`; `--sse TOKEN` does the same
over the older HTTP+SSE transport (at `/sse`).
"""

from __future__ import annotations

import os
import socket
import sys
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

app = MCPServer("tests")


@app.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@app.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool()
def fail(reason: str) -> str:
    """Always fails, with the given reason."""
    raise ValueError(reason)


@app.tool(name="env.get")
def env_get(name: str) -> str:
    """The value of an environment variable of this server, or <unset>."""
    return os.environ.get(name, "<unset>")


@app.tool()
def where() -> str:
    """This server's working directory."""
    return os.getcwd()


@app.tool()
def pid() -> int:
    """This server's process id."""
    return os.getpid()


@app.tool()
async def nap(seconds: float) -> str:
    """Sleep (cancellably), then say so."""
    await anyio.sleep(seconds)
    return "rested"


async def _serve_http(token: str, transport: str) -> None:
    import uvicorn

    inner = app.sse_app() if transport == "--sse" else app.streamable_http_app()

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] == "http" and headers.get(b"authorization") != f"Bearer {token}".encode():
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        await inner(scope, receive, send)

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sys.stdout.write(f"{sock.getsockname()[1]}\n")
    sys.stdout.flush()
    config = uvicorn.Config(guarded, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    if sys.argv[1:2] in (["--http"], ["--sse"]):
        anyio.run(_serve_http, sys.argv[2], sys.argv[1])
    else:
        app.run()
