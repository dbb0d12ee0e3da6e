"""Two small findings of issue 29 (item 17), on real pipes: a request nested deeper than `json` can
recurse is answered on its id, and a lone surrogate in a tool's text never reaches the editor or
the disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.agent import AgentProcess


def deep(n: int) -> str:
    return "[" * n + "]" * n


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
