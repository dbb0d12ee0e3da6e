"""Tools as the editor and the model see them: tool calls shown, errors fed back, paths confined."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess


def tool_results(fake_api: FakeMessagesAPI) -> list[dict]:
    last = fake_api.requests[-1].body["messages"]
    return [b for m in last for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]


async def test_a_tool_call_is_shown_then_completed_with_its_result(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    (workspace / "hello.txt").write_text("line one\nline two\n")
    fake_api.script(
        replies.tool_use("read_file", {"path": "hello.txt"}, id="toolu_1"), replies.text("read it")
    )
    response = await agent.prompt(session, "read hello")
    assert response["result"]["stopReason"] == "end_turn"
    updates = [p["update"] for p in agent.updates(session) if p["update"].get("toolCallId")]
    assert updates[0]["sessionUpdate"] == "tool_call"
    assert updates[0]["status"] == "pending" and updates[0]["kind"] == "read"
    assert updates[0]["rawInput"] == {"path": "hello.txt"}
    assert [u["status"] for u in updates[1:]] == ["in_progress", "completed"]
    assert updates[-1]["locations"][0]["path"] == str(workspace.resolve() / "hello.txt")
    assert "line two" in updates[-1]["content"][0]["content"]["text"]
    results = tool_results(fake_api)
    assert results[0]["tool_use_id"] == "toolu_1" and "line two" in str(results[0]["content"])


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "link-out/secret"])
async def test_paths_outside_the_workspace_are_refused_and_the_model_hears_why(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, workspace: Path, tmp_path: Path, path: str
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir(exist_ok=True)
    (outside / "secret").write_text("top secret")
    if not (workspace / "link-out").exists():
        os.symlink(outside, workspace / "link-out")
    fake_api.script(replies.tool_use("read_file", {"path": path}), replies.text("ok"))
    response = await agent.prompt(session, "escape")
    assert response["result"]["stopReason"] == "end_turn"
    result = tool_results(fake_api)[0]
    assert result["is_error"] is True
    assert "outside" in str(result["content"])
    assert "top secret" not in str(result["content"])
    final = [
        p["update"] for p in agent.updates(session) if p["update"]["sessionUpdate"] == "tool_call_update"
    ][-1]
    assert final["status"] == "failed"


async def test_unknown_tools_and_bad_arguments_fail_the_call_not_the_turn(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        replies.message(
            [
                replies.tool_use_block("no_such_tool", {}),
                replies.tool_use_block("read_file", {"limit": "many"}),
            ],
            stop_reason="tool_use",
        ),
        replies.text("recovered"),
    )
    response = await agent.prompt(session, "go")
    assert response["result"]["stopReason"] == "end_turn"
    first, second = tool_results(fake_api)
    assert first["is_error"] and "no_such_tool" in str(first["content"])
    assert second["is_error"] and "path" in str(second["content"])
