"""A tiny MCP server for the tests, built with the official SDK's `MCPServer`.

Run as a script: `python mcp_server.py` serves stdio; `python mcp_server.py --http TOKEN` serves
Streamable HTTP (at `/mcp`) on a free 127.0.0.1 port, prints that port as its first stdout line, and
answers 401 unless the request carries `Authorization: Bearer TOKEN`; `--sse TOKEN` does the same
over the older HTTP+SSE transport (at `/sse`); `--legacy` serves stdio speaking only the 2025
protocol (where a server may send requests mid-call, such as a url elicitation).
"""

from __future__ import annotations

import os
import socket
import sys
from typing import Annotated, Any

import anyio
from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.types import ToolAnnotations
from pydantic import BaseModel

app = MCPServer("tests")
_LEGACY = sys.argv[1:2] == ["--legacy"]


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
    await anyio.sleep(seconds)  # deliberate: the slow tool a test asks for, not a wait of the test's
    return "rested"


@app.prompt()
def review_code(path: str, focus: str = "bugs") -> str:
    """Review a file, looking for one kind of problem."""
    return f"Please review {path}, looking for {focus} (the MCP prompt's words)."


ODD = "\x1b]0;pwned\x07"  # a window title set by an OSC sequence, as a hostile server names things
if os.environ.get("MCP_TEST_ODD_NAMES"):  # a server whose names hold control characters (issue 35)

    def _odd_words() -> str:
        return "The odd prompt's words."

    def _odd_tool(text: str) -> str:
        return f"odd: {text}"

    app.add_prompt(
        Prompt.from_function(
            _odd_words, name="odd", title=f"{ODD}Odd", description=f"Clears{ODD}\x1b[2J the \x00screen\x07"
        )
    )
    app.add_tool(_odd_tool, name="odd\x1b[31mtool", description="A tool whose name holds ESC.")


async def _prompts_changed(ctx: Context) -> None:
    """Tell the client the prompt list changed: on a 2026-07-28 connection through its
    `subscriptions/listen` stream, on a 2025 one (`--legacy`) as a plain notification."""
    await ctx.notify_prompts_changed()
    if _LEGACY:
        await ctx.request_context.session.send_prompt_list_changed()


@app.tool()
async def offer_prompt(name: str, ctx: Context) -> str:
    """Offer one more prompt, `name` (it takes no arguments), and say the prompt list changed."""

    def words() -> str:
        return f"The {name} prompt's words."

    app.add_prompt(Prompt.from_function(words, name=name, description=f"The {name} prompt."))
    await _prompts_changed(ctx)
    return f"offered {name}"


@app.tool()
async def withdraw_prompt(name: str, ctx: Context) -> str:
    """Stop offering the prompt `name`, and say the prompt list changed."""
    app.remove_prompt(name)
    await _prompts_changed(ctx)
    return f"withdrew {name}"


@app.tool()
async def say_prompts_changed(times: int, ctx: Context) -> str:
    """Say the prompt list changed `times` times, changing nothing (a burst)."""
    for _ in range(times):
        await _prompts_changed(ctx)
    return f"said it {times} times"


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@app.tool()
def greet_me(answer: Annotated[ElicitationResult[Name], Resolve(ask_name)]) -> str:
    """Ask the user's name (a form, on either protocol generation), then greet them."""
    return f"hello, {answer.data.name}" if answer.action == "accept" else f"no name ({answer.action})"


@app.tool()
async def sign_in(ctx: Context) -> str:
    """Send the user to a sign-in page (a url elicitation: only `--legacy` can send it), then report
    it complete."""
    try:
        answer = await ctx.elicit_url("Sign in to the demo service", "https://example.com/login", "login-1")
    except Exception as exc:
        return f"could not ask: {exc}"
    if answer.action == "accept":
        await ctx.request_context.session.send_elicit_complete("login-1")
    return f"sign-in {answer.action}"


async def _serve_legacy_stdio() -> None:
    """Speak only the 2025 handshake protocol, as servers written before 2026-07-28 do: the
    modern probe is refused, the client falls back to `initialize`, and servers may send requests."""
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    server = app._lowlevel_server
    async with stdio_server() as (read, write), server.lifespan(server) as state:
        options = server.create_initialization_options()
        await serve_loop(server, read, write, lifespan_state=state, init_options=options)


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
    sock.listen(128)  # before the port is told: a client that connects at once waits in the backlog
    sys.stdout.write(f"{sock.getsockname()[1]}\n")
    sys.stdout.flush()
    config = uvicorn.Config(guarded, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    if sys.argv[1:2] in (["--http"], ["--sse"]):
        anyio.run(_serve_http, sys.argv[2], sys.argv[1])
    elif sys.argv[1:2] == ["--legacy"]:
        anyio.run(_serve_legacy_stdio)
    else:
        app.run()
