"""What the user sees before approving: `session/request_permission` carries the call's preview.

Edits and writes send ACP `diff` content (oldText/newText) and locations; commands send the
command line and the directory it runs in. Clients that preview (agent-shell's "View diff") show
them before anything is changed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess, RpcError
from tests.wire.conftest import turn_record


def asking(answer: str, asked: list[dict[str, Any]], workspace: Path):  # type: ignore[no-untyped-def]
    """A client that records each question (and the file as it was when asked), then answers."""

    async def on_request(method: str, params: Any) -> Any:
        if method == "session/request_permission":
            asked.append({"params": params, "disk": {p.name: p.read_text() for p in workspace.glob("*.txt")}})
            return {"outcome": {"outcome": "selected", "optionId": answer}}
        return RpcError(-32601, f"no {method}")

    return on_request


def diff_of(tool_call: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in tool_call["content"] if c["type"] == "diff")


async def test_an_edit_is_previewed_as_a_diff_with_its_location_before_it_runs(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    target = workspace / "notes.txt"  # alpha / beta / gamma
    asked: list[dict[str, Any]] = []
    agent.on_request = asking("reject_once", asked, workspace)
    fake_api.script(
        replies.tool_use(
            "edit_file", {"path": "notes.txt", "old_string": "beta", "new_string": "BETA"}, id="toolu_e"
        ),
        replies.text("ok"),
    )
    response = await agent.prompt(session, "shout beta")
    assert response["result"]["stopReason"] == "end_turn"
    tool_call = asked[0]["params"]["toolCall"]
    diff = diff_of(tool_call)
    assert diff == {
        "type": "diff",
        "path": str(target.resolve()),
        "oldText": "alpha\nbeta\ngamma\n",
        "newText": "alpha\nBETA\ngamma\n",
    }
    assert tool_call["locations"] == [{"path": str(target.resolve()), "line": 2}]
    assert tool_call["kind"] == "edit" and tool_call["title"] == "Edit notes.txt"
    assert tool_call["name"] == "edit_file"  # the tool's own name beside the title for people
    # Rejected: the preview changed nothing.
    assert target.read_text() == "alpha\nbeta\ngamma\n"


async def test_a_write_is_previewed_for_a_new_file_and_for_an_existing_one(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    asked: list[dict[str, Any]] = []
    agent.on_request = asking("allow_once", asked, workspace)
    fake_api.script(
        replies.tool_use("write_file", {"path": "fresh.txt", "content": "one\n"}),
        replies.tool_use("write_file", {"path": "notes.txt", "content": "alpha\n"}),
        replies.text("ok"),
    )
    await agent.prompt(session, "write two files")
    new, existing = (a["params"]["toolCall"] for a in asked)
    assert diff_of(new)["oldText"] is None and diff_of(new)["newText"] == "one\n"
    assert "fresh.txt" not in asked[0]["disk"]  # asked before it was written
    assert new["locations"] == [{"path": str((workspace / "fresh.txt").resolve()), "line": 1}]
    assert diff_of(existing)["oldText"] == "alpha\nbeta\ngamma\n"
    assert diff_of(existing)["newText"] == "alpha\n"
    assert asked[1]["disk"]["notes.txt"] == "alpha\nbeta\ngamma\n"
    assert (workspace / "notes.txt").read_text() == "alpha\n"


@pytest.mark.parametrize(
    ("edit", "error"),
    [
        ({"old_string": "delta", "new_string": "x"}, "old_string was not found"),
        ({"old_string": "a\n", "new_string": "x\n"}, "occurs 3 times"),
    ],
    ids=["missing", "ambiguous"],
)
async def test_an_edit_that_would_fail_is_answered_at_once_without_asking(
    agent: AgentProcess,
    session: str,
    fake_api: FakeMessagesAPI,
    workspace: Path,
    edit: dict[str, str],
    error: str,
) -> None:
    """Issue 29 item 15: the user is never asked to allow an edit that cannot be made."""
    asked: list[dict[str, Any]] = []
    agent.on_request = asking("allow_once", asked, workspace)
    fake_api.script(
        replies.tool_use("edit_file", {"path": "notes.txt", **edit}, id="toolu_bad"),
        replies.text("ok"),
    )
    response = await agent.prompt(session, "edit")
    assert response["result"]["stopReason"] == "end_turn"
    assert asked == []
    result = fake_api.requests[-1].body["messages"][-1]["content"][0]
    assert result["tool_use_id"] == "toolu_bad" and result["is_error"]
    assert error in str(result["content"])
    final = [
        u
        for u in (p["update"] for p in agent.updates(session))
        if u["sessionUpdate"] == "tool_call_update" and u.get("status") == "failed"
    ]
    assert [u["toolCallId"] for u in final] == ["toolu_bad"]
    assert (workspace / "notes.txt").read_text() == "alpha\nbeta\ngamma\n"
    assert turn_record(response)["toolCalls"] == 1


async def test_a_write_outside_the_workspace_is_refused_without_asking(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, workspace: Path, tmp_path: Path
) -> None:
    asked: list[dict[str, Any]] = []
    agent.on_request = asking("allow_once", asked, workspace)
    outside = tmp_path / "elsewhere.txt"
    fake_api.script(
        replies.tool_use("write_file", {"path": str(outside), "content": "x"}), replies.text("ok")
    )
    await agent.prompt(session, "write")
    assert asked == [] and not outside.exists()
    result = fake_api.requests[-1].body["messages"][-1]["content"][0]
    assert result["is_error"] and "outside the working directory" in str(result["content"])


async def test_a_command_is_previewed_with_its_command_line_and_working_directory(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    asked: list[dict[str, Any]] = []
    agent.on_request = asking("reject_once", asked, workspace)
    fake_api.script(
        replies.tool_use("run_command", {"command": "echo hi > made.txt", "cwd": "src"}), replies.text("ok")
    )
    await agent.prompt(session, "run")
    tool_call = asked[0]["params"]["toolCall"]
    [block] = tool_call["content"]
    text = block["content"]["text"]
    assert block["type"] == "content" and "echo hi > made.txt" in text
    assert str((workspace / "src").resolve()) in text
    assert not (workspace / "src" / "made.txt").exists()


@pytest.mark.parametrize("streaming", [True], ids=["stream"])
async def test_no_preview_is_computed_when_nobody_is_asked(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """In acceptEdits an edit runs without a question, so the editor's buffer is read once."""
    reads: list[str] = []
    buffers = {str((workspace / "notes.txt").resolve()): "alpha\nbeta\n"}

    async def editor(method: str, params: Any) -> Any:
        if method == "fs/read_text_file":
            reads.append(params["path"])
            return {"content": buffers[params["path"]]}
        if method == "fs/write_text_file":
            buffers[params["path"]] = params["content"]
            return {}
        return RpcError(-32601, method)

    fake_api.script(
        replies.tool_use("edit_file", {"path": "notes.txt", "old_string": "beta", "new_string": "b"}),
        replies.text("ok"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize(fs={"readTextFile": True, "writeTextFile": True})
        session = await agent.new_session(workspace)
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "acceptEdits"})
        await agent.prompt(session, "edit")
    assert len(reads) == 1
    assert buffers[str((workspace / "notes.txt").resolve())] == "alpha\nb\n"


# ── session/load shows the tool calls as the live turn did ────────────────────────────────────


async def editor_with_terminal(method: str, params: Any) -> Any:
    if method == "session/request_permission":
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
    if method == "terminal/create":
        return {"terminalId": "term-7"}
    if method == "terminal/wait_for_exit":
        return {"exitCode": 0}
    if method == "terminal/output":
        return {"output": "built 3 targets\n", "truncated": False, "exitStatus": {"exitCode": 0}}
    if method in {"terminal/release", "terminal/kill"}:
        return {}
    return RpcError(-32601, method)


def tool_updates(updates: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    calls: dict[str, list[dict[str, Any]]] = {}
    for update in updates:
        if update["sessionUpdate"] in {"tool_call", "tool_call_update"}:
            calls.setdefault(update["toolCallId"], []).append(update)
    return calls


def without_terminal(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in content if c["type"] != "terminal"]


async def test_load_replays_tool_calls_with_the_live_title_kind_content_locations_and_status(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        replies.tool_use("read_file", {"path": "notes.txt"}, id="t_read"),
        replies.tool_use(
            "edit_file", {"path": "notes.txt", "old_string": "beta", "new_string": "BETA"}, id="t_edit"
        ),
        replies.tool_use("run_command", {"command": "make"}, id="t_run"),
        replies.tool_use("read_file", {"path": "missing.txt"}, id="t_fail"),
        replies.text("all done"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor_with_terminal) as agent:
        await agent.initialize(terminal=True)
        session = await agent.new_session(workspace)
        await agent.prompt(session, "go")
        live = tool_updates([p["update"] for p in agent.updates(session)])
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize(terminal=True)
        await agent.request("session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []})
        replayed = tool_updates([p["update"] for p in agent.updates(session)])
    assert list(replayed) == list(live) == ["t_read", "t_edit", "t_run", "t_fail"]
    for call_id, shown in live.items():
        again = replayed[call_id]
        start, final = shown[0], shown[-1]
        assert again[0] == start, call_id  # the same tool_call: title, kind, rawInput, pending
        assert again[-1]["status"] == final["status"], call_id
        assert again[-1]["content"] == without_terminal(final["content"]), call_id
        assert again[-1].get("locations") == final.get("locations"), call_id
        assert again[-1].get("rawOutput") == final.get("rawOutput"), call_id
    assert live["t_edit"][0]["title"] == "Edit notes.txt" and live["t_edit"][0]["kind"] == "edit"
    assert any(c["type"] == "diff" for c in replayed["t_edit"][-1]["content"])
    assert live["t_run"][0]["kind"] == "execute"
    assert "built 3 targets" in str(replayed["t_run"][-1]["content"])
    assert replayed["t_fail"][-1]["status"] == "failed"


@pytest.mark.parametrize("streaming", [True], ids=["stream"])
async def test_load_leaves_out_the_calls_the_live_turn_never_showed(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """A call skipped by the tool-call budget was never announced live, so replay skips it too."""
    fake_api.script(
        replies.message(
            [
                replies.tool_use_block("read_file", {"path": "notes.txt"}, id="t_ran"),
                replies.tool_use_block("read_file", {"path": "README.md"}, id="t_skipped"),
            ],
            stop_reason="tool_use",
        ),
        replies.text("done"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace, {"acp-agent": {"maxToolCalls": 1}})
        await agent.prompt(session, "read both")
        live = tool_updates([p["update"] for p in agent.updates(session)])
        mark = len(agent.messages)
        await agent.request("session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []})
        replayed = tool_updates(
            [m["params"]["update"] for m in agent.messages[mark:] if m.get("method") == "session/update"]
        )
    assert list(live) == list(replayed) == ["t_ran"]
    assert replayed["t_ran"][-1]["status"] == "completed"
