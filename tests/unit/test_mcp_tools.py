"""MCP servers as tools: real stdio (and HTTP) servers from tests/support/mcp_server.py, the real SDK.

Each server start imports the SDK in a new process (about 2 s of CPU), so the calls share one
module-scoped server and only the tests about starting and stopping spawn their own.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.errors import ToolError, ToolTimeout
from acp_agent.tools.base import ToolContext
from acp_agent.tools.mcp.connections import McpConnections
from acp_agent.tools.mcp.sdk import mcp_servers_supported_http, mcp_servers_supported_sse
from acp_agent.tools.mcp.servers import McpServerSpec, parse_server
from acp_agent.tools.mcp.tool import McpTool, content_text, object_schema, tool_name
from acp_agent.tools.registry import ToolRegistry
from tests.support import REPO_ROOT
from tests.support.mcp_remote import remote_mcp_server

SERVER = REPO_ROOT / "tests" / "support" / "mcp_server.py"
API_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
LEAK = "ACP_AGENT_TEST_MCP_NOT_INHERITED"


def stdio(name: str, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """An ACP stdio McpServer running the test server (or `python ARGS` when args are given)."""
    return {
        "name": name,
        "command": sys.executable,
        "args": list(args) or [str(SERVER)],
        "env": [{"name": k, "value": v} for k, v in (env or {}).items()],
    }


Demo = tuple[McpConnections, dict[str, McpTool], Path]


@pytest.fixture(scope="module")
async def demo(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Demo]:
    """One connected test server named "demo", with DEMO_TOKEN in its env and a 5 s call timeout
    (every healthy call must beat it on a loaded box too; the nap test waits it out once)."""
    cwd = tmp_path_factory.mktemp("mcp-cwd")
    async with McpConnections(call_timeout=5.0) as connections:
        os.environ[LEAK] = "must-not-reach-the-server"
        try:
            tools = await connections.start([stdio("demo", env={"DEMO_TOKEN": "abc"})], cwd=cwd, timeout=50)
        finally:
            del os.environ[LEAK]
        assert connections.failures == []
        yield connections, {tool.name: tool for tool in tools}, cwd


async def call(demo: Demo, tool: str, /, **args: Any) -> Any:
    _, tools, cwd = demo
    return await tools[tool].run(args, ToolContext(cwd=cwd))


async def test_tools_are_offered_as_mcp__server__tool_with_object_schemas(demo: Demo) -> None:
    _, tools, _ = demo
    assert set(tools) == {
        f"mcp__demo__{n}"
        for n in (
            *("echo", "add", "fail", "env_get", "where", "pid", "nap", "greet_me", "sign_in"),
            *(
                "offer_prompt",
                "withdraw_prompt",
                "say_prompts_changed",
            ),  # tests/wire/test_mcp_prompt_changes.py
        )
    }
    echo = tools["mcp__demo__echo"]
    assert echo.input_schema["type"] == "object"
    assert echo.input_schema["properties"]["text"]["type"] == "string"
    assert echo.input_schema["required"] == ["text"]
    assert echo.description == "Return the text unchanged."
    assert (echo.kind, echo.permission, echo.read_only) == ("other", "execute", False)
    assert tools["mcp__demo__add"].read_only is True  # the server's readOnlyHint
    assert echo.title({"text": "x"}) == "MCP echo (demo)"
    assert tools["mcp__demo__env_get"].remote_name == "env.get"
    registry = ToolRegistry(tools.values())
    assert all(API_NAME.match(t["name"]) for t in registry.api_tools())
    assert registry.validate(tools["mcp__demo__add"], {"a": 1.0, "b": 2}) == {"a": 1, "b": 2}


async def test_a_call_returns_the_servers_text(demo: Demo) -> None:
    echoed = await call(demo, "mcp__demo__echo", text="héllo")
    added = await call(demo, "mcp__demo__add", a=2, b=40)
    assert (echoed.text, echoed.is_error) == ("héllo", False)
    assert (added.text, added.is_error) == ("42", False)
    assert added.raw_output == {"structuredContent": {"result": 42}}


async def test_a_tool_that_fails_gives_an_error_result(demo: Demo) -> None:
    result = await call(demo, "mcp__demo__fail", reason="boom")
    assert result.is_error
    assert "fail" in result.text


async def test_a_server_gets_its_env_over_a_minimal_inherited_one(demo: Demo) -> None:
    assert (await call(demo, "mcp__demo__env_get", name="DEMO_TOKEN")).text == "abc"
    assert (await call(demo, "mcp__demo__env_get", name=LEAK)).text == "<unset>"
    assert (await call(demo, "mcp__demo__env_get", name="PATH")).text == os.environ["PATH"]


async def test_a_server_runs_in_the_session_cwd(demo: Demo) -> None:
    assert (await call(demo, "mcp__demo__where")).text == str(demo[2])


async def test_a_call_past_the_timeout_raises_tool_timeout_and_the_server_stays_usable(demo: Demo) -> None:
    with anyio.fail_after(30), pytest.raises(ToolTimeout, match="'demo' did not answer within 5 s"):
        await call(demo, "mcp__demo__nap", seconds=60)  # a hang guard: the nap is 60 s
    assert (await call(demo, "mcp__demo__echo", text="still here")).text == "still here"


async def test_servers_that_cannot_be_used_are_skipped_with_a_reason(tmp_path: Path) -> None:
    servers: list[dict[str, Any]] = [
        {"name": "missing", "command": str(tmp_path / "no-such-server"), "args": [], "env": []},
        stdio("quits", "-c", "pass"),
        stdio("mute", "-c", "import sys; sys.stdin.read()"),
        {"name": "nocommand", "args": [], "env": []},
        {"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []},
        {"type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp", "headers": []},
    ]
    # "quits" must be seen to quit within the timeout: a Python start-up on a loaded box, so not 1 s.
    with anyio.fail_after(30):  # a hang guard: "mute" never answers, its 5 s timeout must end it
        async with McpConnections() as connections:
            tools = await connections.start(servers, cwd=tmp_path, timeout=5.0)
    assert tools == []
    reasons = {f.server: f.reason for f in connections.failures}
    assert set(reasons) == {"missing", "quits", "mute", "nocommand", "old", "web"}
    assert reasons["missing"] == f"command not found: {tmp_path / 'no-such-server'}"
    assert "closed" in reasons["quits"].lower()
    assert reasons["mute"] == "no answer within 5 s"
    assert "command" in reasons["nocommand"]
    assert reasons["old"] == "sse MCP servers are not supported"
    assert reasons["web"] == "http MCP servers are not supported"


async def test_aclose_stops_the_server_process_from_another_task(tmp_path: Path) -> None:
    async with anyio.create_task_group() as tg:
        connections = McpConnections(tg)
        found: list[McpTool] = []

        async def open_session() -> None:  # like session/new: its task ends, the server lives on
            found.extend(await connections.start([stdio("s")], cwd=tmp_path, timeout=50))

        async with anyio.create_task_group() as handler:
            handler.start_soon(open_session)
        tools = {tool.name: tool for tool in found}
        pid = int((await tools["mcp__s__pid"].run({}, ToolContext(cwd=tmp_path))).text)
        os.kill(pid, 0)
        with anyio.fail_after(15):
            await connections.aclose()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # gone and reaped: a zombie would still answer
    with pytest.raises(ToolError, match="not running"):
        await tools["mcp__s__echo"].run({"text": "x"}, ToolContext(cwd=tmp_path))


@pytest.fixture
def http_server() -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """The test server over Streamable HTTP on 127.0.0.1, requiring `Bearer secret`: (URL, process)."""
    with remote_mcp_server("http") as server:
        yield server


async def test_http_servers_connect_with_their_headers_and_a_lost_one_gives_tool_errors(
    http_server: tuple[str, subprocess.Popen[str]], tmp_path: Path
) -> None:
    url, proc = http_server
    assert mcp_servers_supported_http()
    servers: list[dict[str, Any]] = [
        {
            "type": "http",
            "name": "web",
            "url": url,
            "headers": [{"name": "Authorization", "value": "Bearer secret"}],
        },
        {"type": "http", "name": "anon", "url": url, "headers": []},
    ]
    ctx = ToolContext(cwd=tmp_path)
    async with McpConnections(call_timeout=20) as connections:
        tools = {
            t.name: t for t in await connections.start(servers, cwd=tmp_path, timeout=50, allow_http=True)
        }
        assert (await tools["mcp__web__echo"].run({"text": "over http"}, ctx)).text == "over http"
        # Killed: a graceful stop would wait for the agent's open `subscriptions/listen` stream
        # (the server offers prompt-list changes), which lasts as long as the connection.
        proc.kill()
        proc.wait(timeout=10)
        with anyio.fail_after(15), pytest.raises(ToolError, match="'web' failed"):
            await tools["mcp__web__echo"].run({"text": "anyone?"}, ctx)
    assert [f.server for f in connections.failures] == ["anon"]


async def test_sse_servers_connect_with_their_headers(tmp_path: Path) -> None:
    assert mcp_servers_supported_sse()
    with remote_mcp_server("sse") as (url, _):
        servers: list[dict[str, Any]] = [
            {
                "type": "sse",
                "name": "old",
                "url": url,
                "headers": [{"name": "Authorization", "value": "Bearer secret"}],
            },
            {"type": "sse", "name": "anon", "url": url, "headers": []},
        ]
        async with McpConnections(call_timeout=20) as connections:
            found = await connections.start(servers, cwd=tmp_path, timeout=50, allow_http=True)
            tools = {t.name: t for t in found}
            result = await tools["mcp__old__add"].run({"a": 2, "b": 3}, ToolContext(cwd=tmp_path))
    assert result.text == "5"
    assert [f.server for f in connections.failures] == ["anon"]


def test_a_server_description_parses_to_a_spec_of_its_transport() -> None:
    """The spec is a plain frozen class: two parses are equal values, and instances of it."""
    raw = {"name": "s", "command": "python", "args": ["-m", "srv"], "env": [{"name": "K", "value": "v"}]}
    spec = parse_server(raw)
    assert isinstance(spec, McpServerSpec) and spec == parse_server(raw)
    assert (spec.transport, spec.args, spec.env) == ("stdio", ("-m", "srv"), (("K", "v"),))
    http = parse_server({"type": "http", "name": "h", "url": "https://x", "headers": []})
    assert (http.transport, http.url) == ("http", "https://x")
    with pytest.raises(ValueError, match="url"):
        parse_server({"type": "http", "name": "h", "url": "ftp://x"})


def test_tool_names_fit_the_api_rule_and_stay_unique() -> None:
    assert tool_name("github", "create_issue") == "mcp__github__create_issue"
    assert tool_name("my server", "fs/read.file") == "mcp__my_server__fs_read_file"
    long = tool_name("s" * 40, "t" * 40)
    assert API_NAME.match(long) and long.startswith("mcp__ssss")
    assert long == tool_name("s" * 40, "t" * 40)
    assert long != tool_name("s" * 40, "t" * 41)
    first = tool_name("a b", "x")
    second = tool_name("a.b", "x", taken={first})
    assert first != second and API_NAME.match(second)
    assert API_NAME.match(tool_name("", ""))


def test_input_schemas_become_json_schema_objects() -> None:
    given = {"properties": {"q": {"type": "string"}}, "required": ["q"]}
    assert object_schema(given) == {**given, "type": "object"}
    assert object_schema({"type": "object"}) == {"type": "object"}
    assert object_schema({"type": "string"}) == {"type": "object", "properties": {}}
    assert object_schema(None) == {"type": "object", "properties": {}}


def test_result_content_is_text_with_other_blocks_summarised() -> None:
    import mcp_types as types

    blocks = [
        types.TextContent(text="first"),
        types.ImageContent(data="aGVsbG8h", mime_type="image/png"),
        types.AudioContent(data="AAAA", mime_type="audio/wav"),
        types.ResourceLink(uri="file:///a.txt", name="a.txt"),
        types.EmbeddedResource(resource=types.TextResourceContents(uri="file:///b.txt", text="bee")),
        types.EmbeddedResource(resource=types.BlobResourceContents(uri="file:///c.bin", blob="AA==")),
    ]
    assert content_text(blocks).splitlines() == [
        "first",
        "[image: image/png, about 6 bytes]",
        "[audio: audio/wav, about 3 bytes]",
        "[resource link: file:///a.txt (a.txt)]",
        "[resource: file:///b.txt]",
        "bee",
        "[resource: file:///c.bin, binary]",
    ]
    assert content_text([], {"n": 1}) == '{"n": 1}'


def test_importing_the_module_does_not_import_the_sdk() -> None:
    code = (
        "import sys, acp_agent.tools.mcp.connections, acp_agent.tools.mcp.sdk as m; "
        "m.mcp_servers_supported_http(); "
        "print(sorted(n for n in sys.modules if n == 'mcp' or n.startswith(('mcp.', 'mcp_types'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO_ROOT, timeout=30
    )
    assert out.stdout.strip() == "[]"
