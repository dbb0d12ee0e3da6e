"""Two small findings of issue 29 (item 17), on real pipes: a request nested deeper than `json` can
recurse is answered on its id, and a lone surrogate in a tool's text never reaches the editor or
the disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess, RpcError


def deep(n: int) -> str:
    return "[" * n + "]" * n


@pytest.mark.model_free
@pytest.mark.parametrize("depth", [990, 1000, 5000, 50_000])
async def test_a_request_nested_too_deeply_is_answered_on_its_id(
    agent: AgentProcess, workspace: Path, depth: int
) -> None:
    cwd = json.dumps(str(workspace))
    params = '{"cwd":' + cwd + ',"mcpServers":[],"_meta":{"x":' + deep(depth) + "}}"
    await agent.send_raw('{"jsonrpc":"2.0","id":"deep-1","method":"session/new","params":' + params + "}\n")
    answer = await agent.wait_for(lambda m: m["id"] == "deep-1")
    assert answer["error"]["code"] == -32602 and "nested too deeply" in answer["error"]["message"]
    # Deep where JSON-RPC does not look: the request itself is read and served.
    head = '{"jsonrpc":"2.0","id":"deep-2","method":"session/new","junk":' + deep(depth)
    await agent.send_raw(head + ',"params":{"cwd":' + cwd + ',"mcpServers":[]}}\n')
    served = await agent.wait_for(lambda m: m["id"] == "deep-2" and "result" in m)
    assert served["result"]["sessionId"].startswith("sess_")
    start = len(agent.messages)
    tail = b'{"jsonrpc":"2.0","id":"deep-3","method":"x","params":' + deep(depth).encode()
    await agent.send_raw(tail + b"\n")
    broken = await agent.wait_for(lambda m: "error" in m, since=start)
    assert broken["id"] is None and broken["error"]["code"] == -32700  # not JSON: no closing brace


def no_surrogates(agent: AgentProcess) -> None:
    """Everything the agent wrote is valid Unicode (a lone surrogate cannot be encoded as UTF-8)."""
    for message in agent.messages:
        json.dumps(message, ensure_ascii=False).encode("utf-8")


LONE = "x = 'caf\ud800'\n"


@pytest.mark.parametrize("editor_fs", [True, False], ids=["editor-fs", "local-disk"])
async def test_a_lone_surrogate_in_written_text_is_refused_before_anything_is_asked_or_written(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, editor_fs: bool
) -> None:
    calls: list[tuple[str, Any]] = []

    async def editor(method: str, params: Any) -> Any:
        calls.append((method, params))
        if method == "fs/read_text_file":
            return {"content": (workspace / "notes.txt").read_text()}
        if method == "fs/write_text_file":
            return {}
        if method == "session/request_permission":
            return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        return RpcError(-32601, method)

    fake_api.script(
        replies.tool_use("write_file", {"path": "new.py", "content": LONE}, id="toolu_write"),
        replies.tool_use(
            "edit_file",
            {"path": "notes.txt", "old_string": "beta", "new_string": "b\udfffta"},
            id="toolu_edit",
        ),
        replies.text("I will write it without the broken character."),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        caps = {"fs": {"readTextFile": True, "writeTextFile": True}} if editor_fs else {}
        await agent.initialize(**caps)
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "write new.py and fix notes.txt")
        no_surrogates(agent)
    assert response["result"]["stopReason"] == "end_turn"
    assert [m for m, _ in calls if m != "fs/read_text_file"] == []  # nothing written, nothing asked
    assert not (workspace / "new.py").exists()
    assert (workspace / "notes.txt").read_text() == "alpha\nbeta\ngamma\n"
    results = [json.dumps(r.body["messages"][-1]) for r in fake_api.requests[1:3]]
    assert "lone surrogate (U+D800) at character 8" in results[0] and "'content'" in results[0]
    assert "lone surrogate (U+DFFF)" in results[1] and "'new_string'" in results[1]
    for request in fake_api.requests:  # and the history the API gets back is valid Unicode too
        json.dumps(request.body, ensure_ascii=False).encode("utf-8")


async def test_a_character_beyond_the_bmp_sent_as_a_surrogate_pair_is_written_as_itself(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        replies.tool_use("write_file", {"path": "smile.txt", "content": "\ud83d\ude00\n"}),
        replies.text("done"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        agent.on_request = _allow
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.prompt(session, "smile")
    assert (workspace / "smile.txt").read_text(encoding="utf-8") == "\U0001f600\n"


async def _allow(method: str, params: Any) -> Any:
    if method == "session/request_permission":
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
    return RpcError(-32601, method)
