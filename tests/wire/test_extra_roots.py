"""Additional roots over real pipes, as Zed 1.16 sends them once they are advertised (issue 24
item 5): a file in another root is read through the editor, its escapes are refused, the model is
told the roots, and the roots are checked, journaled, listed and replaced by load and resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess, RpcError
from tests.support.zed import zed_initialize


@pytest.fixture
def extra(tmp_path: Path) -> Path:
    """Another root of the workspace (a library checked out beside it), with two ways out."""
    root = tmp_path / "common-lib"
    (root / "src").mkdir(parents=True)
    (root / "src" / "lib.txt").write_text("from the other root\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET-CONTENT\n")
    (root / "leak.txt").symlink_to(outside / "secret.txt")
    return root


class Editor:
    """Zed's side: files are read from disk (as an editor's buffers would be), each call kept."""

    def __init__(self) -> None:
        self.reads: list[str] = []

    async def __call__(self, method: str, params: Any) -> Any:
        if method == "fs/read_text_file":
            self.reads.append(params["path"])
            return {"content": Path(params["path"]).read_text()}
        return RpcError(-32601, method)


async def test_a_file_in_an_additional_root_is_read_and_its_escapes_are_refused(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, extra: Path, fake_api: FakeMessagesAPI
) -> None:
    paths = [
        f"{extra}/src/lib.txt",
        f"{extra}/leak.txt",  # a symlink out of the root
        f"{extra}/src/../../outside/secret.txt",  # `..` out of the root
        f"{extra}/../outside/secret.txt",
    ]
    fake_api.script(
        replies.message(
            [replies.tool_use_block("read_file", {"path": p}) for p in paths]
            + [replies.tool_use_block("list_files", {"path": str(extra)})],
            stop_reason="tool_use",
        ),
        replies.text("read it"),
    )
    editor = Editor()
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        init = await zed_initialize(agent)
        assert init["agentCapabilities"]["sessionCapabilities"]["additionalDirectories"] == {}
        session = await agent.new_session(workspace, additionalDirectories=[str(extra)])
        response = await agent.prompt(session, "read the library")
    assert response["result"]["stopReason"] == "end_turn"
    body = fake_api.requests[1].plain_body
    results = [b for m in body["messages"] for b in m["content"] if b.get("type") == "tool_result"]
    read, *escapes, listing = results
    assert not read.get("is_error") and "from the other root" in str(read["content"])
    for escape in escapes:
        assert escape.get("is_error") and "outside the working directory" in str(escape["content"]), escape
    assert str(listing["content"]).splitlines() == [f"{extra}/src/lib.txt"]  # the link is not followed
    assert editor.reads == [f"{extra}/src/lib.txt"]  # nothing out of bounds was even asked for
    assert "SECRET-CONTENT" not in str(body)
    system = "".join(b["text"] for b in fake_api.requests[0].plain_body["system"])
    assert "Additional workspace roots" in system and f"- {extra}\n" in system


@pytest.mark.model_free
async def test_additional_directories_are_checked_journaled_listed_and_replaced_on_load(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, extra: Path, tmp_path: Path
) -> None:
    second = tmp_path / "second"
    second.mkdir()
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await zed_initialize(agent)
        new = {"cwd": str(workspace), "mcpServers": []}
        relative = await agent.request("session/new", {**new, "additionalDirectories": ["lib"]})
        missing = await agent.request(
            "session/new", {**new, "additionalDirectories": [str(extra), str(tmp_path / "gone")]}
        )
        none = await agent.request("session/new", {**new, "additionalDirectories": None})
        session = await agent.new_session(workspace, additionalDirectories=[str(extra), str(second)])
        first = {s["sessionId"]: s for s in (await agent.request("session/list", {}))["result"]["sessions"]}
    assert relative["error"]["code"] == -32602 and "additionalDirectories" in relative["error"]["message"]
    assert missing["error"]["code"] == -32602 and str(tmp_path / "gone") in missing["error"]["message"]
    assert "additionalDirectories.1" in missing["error"]["message"]
    assert "additionalDirectories" not in first[none["result"]["sessionId"]]  # null: none
    assert first[session]["additionalDirectories"] == [str(extra), str(second)]
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await zed_initialize(agent)
        load = {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
        bad = await agent.request("session/load", {**load, "additionalDirectories": [str(tmp_path / "gone")]})
        assert bad["error"]["code"] == -32602
        assert "result" in await agent.request(
            "session/load", {**load, "additionalDirectories": [str(second)]}
        )
        after_load = await agent.request("session/list", {})
        resumed = await agent.request("session/resume", {"sessionId": session, "cwd": str(workspace)})
        after_resume = await agent.request("session/list", {})
    assert "result" in resumed, resumed
    listed = {s["sessionId"]: s for s in after_load["result"]["sessions"]}
    assert listed[session]["additionalDirectories"] == [str(second)]  # the request's list is the list
    listed = {s["sessionId"]: s for s in after_resume["result"]["sessions"]}
    assert "additionalDirectories" not in listed[session]  # omitted: no additional root is active
