"""Edits, commands, permissions and modes, over real pipes: what an editor sees and what happens on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess, RpcError
from tests.support.client import TerminalEditor
from tests.support.procs import marked_sleep, running
from tests.support.waits import wait_until
from tests.wire.conftest import chunks, turn_record


def choose(option_id: str, log: list[dict[str, Any]] | None = None):  # type: ignore[no-untyped-def]
    """A client that answers every permission question with `option_id` (and records them)."""

    async def on_request(method: str, params: Any) -> Any:
        if method == "session/request_permission":
            if log is not None:
                log.append(params)
            if option_id == "cancelled":
                return {"outcome": {"outcome": "cancelled"}}
            return {"outcome": {"outcome": "selected", "optionId": option_id}}
        return RpcError(-32601, f"no {method}")

    return on_request


def last_results(fake_api: FakeMessagesAPI) -> list[dict]:
    messages = fake_api.requests[-1].body["messages"]
    return [b for b in messages[-1]["content"] if b.get("type") == "tool_result"]


async def test_an_allowed_edit_is_shown_as_a_diff_and_written_to_disk(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    target = workspace / "app.py"
    target.write_text("print('hello')\n")
    asked: list[dict] = []
    agent.on_request = choose("allow_once", asked)
    fake_api.script(
        replies.tool_use(
            "edit_file", {"path": "app.py", "old_string": "hello", "new_string": "world"}, id="toolu_edit"
        ),
        replies.text("edited"),
    )
    response = await agent.prompt(session, "change it")
    assert response["result"]["stopReason"] == "end_turn"
    assert target.read_text() == "print('world')\n"
    assert asked and asked[0]["toolCall"]["toolCallId"] == "toolu_edit"
    kinds = {o["kind"] for o in asked[0]["options"]}
    assert kinds == {"allow_once", "allow_always", "reject_once", "reject_always"}
    updates = [p["update"] for p in agent.updates(session) if p["update"].get("toolCallId") == "toolu_edit"]
    assert updates[0]["kind"] == "edit"
    final = updates[-1]
    assert final["status"] == "completed"
    diff = next(c for c in final["content"] if c["type"] == "diff")
    assert diff["path"] == str(target.resolve())
    assert diff["oldText"] == "print('hello')\n" and diff["newText"] == "print('world')\n"
    assert final["locations"][0]["path"] == str(target.resolve())


async def test_a_rejected_edit_leaves_the_file_and_tells_the_model(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    target = workspace / "keep.txt"
    target.write_text("original\n")
    agent.on_request = choose("reject_once")
    fake_api.script(
        replies.tool_use("write_file", {"path": "keep.txt", "content": "clobbered"}), replies.text("ok")
    )
    response = await agent.prompt(session, "overwrite")
    assert response["result"]["stopReason"] == "end_turn"
    assert target.read_text() == "original\n"
    result = last_results(fake_api)[0]
    assert result["is_error"] and "declined" in str(result["content"])
    assert turn_record(response)["toolCallsDenied"] == 1


async def test_allow_always_is_remembered_for_that_tool_in_the_session(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    asked: list[dict] = []
    agent.on_request = choose("allow_always", asked)
    fake_api.script(
        replies.tool_use("write_file", {"path": "a.txt", "content": "1"}),
        replies.tool_use("write_file", {"path": "b.txt", "content": "2"}),
        replies.text("done"),
    )
    await agent.prompt(session, "write two")
    assert len(asked) == 1
    assert (workspace / "a.txt").read_text() == "1" and (workspace / "b.txt").read_text() == "2"


async def test_a_cancelled_permission_question_ends_the_turn_cancelled(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    agent.on_request = choose("cancelled")
    fake_api.script(replies.tool_use("write_file", {"path": "no.txt", "content": "x"}))
    response = await agent.prompt(session, "write")
    assert response["result"]["stopReason"] == "cancelled"
    assert turn_record(response)["abortedDuring"] == "permission"
    assert not (workspace / "no.txt").exists()


@pytest.mark.parametrize(
    ("mode", "edit_asks", "edit_runs", "command_asks", "command_runs"),
    [
        ("default", True, True, True, True),
        ("acceptEdits", False, True, True, True),
        ("plan", False, False, False, False),
        ("bypassPermissions", False, True, False, True),
    ],
)
async def test_each_mode_decides_what_asks_and_what_runs(
    agent: AgentProcess,
    session: str,
    fake_api: FakeMessagesAPI,
    workspace: Path,
    mode: str,
    edit_asks: bool,
    edit_runs: bool,
    command_asks: bool,
    command_runs: bool,
) -> None:
    asked: list[dict] = []
    agent.on_request = choose("allow_once", asked)
    answer = await agent.request("session/set_mode", {"sessionId": session, "modeId": mode})
    assert answer["result"] == {}
    fake_api.script(
        replies.tool_use("write_file", {"path": "f.txt", "content": "x"}, id="toolu_w"),
        replies.tool_use("run_command", {"command": "touch ran.flag"}, id="toolu_c"),
        replies.text("done"),
    )
    await agent.prompt(session, "go")
    asked_ids = [p["toolCall"]["toolCallId"] for p in asked]
    assert ("toolu_w" in asked_ids) is edit_asks
    assert ("toolu_c" in asked_ids) is command_asks
    assert (workspace / "f.txt").exists() is edit_runs
    assert (workspace / "ran.flag").exists() is command_runs
    if mode != "default":
        mode_updates = [
            p["update"]
            for p in agent.updates(session)
            if p["update"]["sessionUpdate"] == "current_mode_update"
        ]
        assert mode_updates[-1]["currentModeId"] == mode


@pytest.mark.model_free
async def test_an_unknown_mode_is_invalid_params(agent: AgentProcess, session: str) -> None:
    response = await agent.request("session/set_mode", {"sessionId": session, "modeId": "yolo"})
    assert response["error"]["code"] == -32602


async def test_modes_and_models_are_config_options_kept_in_sync(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    new = await agent.request("session/new", {"cwd": str(workspace), "mcpServers": []})
    result = new["result"]
    session = result["sessionId"]
    assert result["modes"]["currentModeId"] == "default"
    options = {o["id"]: o for o in result["configOptions"]}
    assert options["mode"]["category"] == "mode" and options["model"]["category"] == "model"
    other = next(
        o["value"] for o in options["model"]["options"] if o["value"] != options["model"]["currentValue"]
    )
    changed = await agent.request(
        "session/set_config_option", {"sessionId": session, "configId": "model", "value": other}
    )
    values = {o["id"]: o["currentValue"] for o in changed["result"]["configOptions"]}
    assert values["model"] == other
    fake_api.script(replies.text("hi"))
    await agent.prompt(session, "which model?")
    assert fake_api.requests[-1].body["model"] == other
    switched = await agent.request(
        "session/set_config_option", {"sessionId": session, "configId": "mode", "value": "plan"}
    )
    values = {o["id"]: o["currentValue"] for o in switched["result"]["configOptions"]}
    assert values["mode"] == "plan"
    bad = await agent.request(
        "session/set_config_option", {"sessionId": session, "configId": "nope", "value": "x"}
    )
    assert bad["error"]["code"] == -32602


async def test_edits_go_through_the_editor_when_it_offers_its_file_system(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    buffers = {str((workspace / "doc.txt").resolve()): "unsaved buffer text\n"}
    calls: list[str] = []

    async def editor(method: str, params: Any) -> Any:
        calls.append(method)
        if method == "fs/read_text_file":
            return {"content": buffers[params["path"]]}
        if method == "fs/write_text_file":
            buffers[params["path"]] = params["content"]
            return {}
        if method == "session/request_permission":
            return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        return RpcError(-32601, method)

    fake_api.script(
        replies.tool_use("read_file", {"path": "doc.txt"}),
        replies.tool_use("edit_file", {"path": "doc.txt", "old_string": "unsaved", "new_string": "edited"}),
        replies.text("done"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize(fs={"readTextFile": True, "writeTextFile": True})
        session = await agent.new_session(workspace)
        await agent.prompt(session, "edit the buffer")
    assert "fs/read_text_file" in calls and "fs/write_text_file" in calls
    assert buffers[str((workspace / "doc.txt").resolve())] == "edited buffer text\n"
    assert not (workspace / "doc.txt").exists()  # nothing touched the disk
    read_result = fake_api.requests[1].body["messages"][-1]["content"][0]
    assert "unsaved buffer text" in str(read_result["content"])


async def test_without_the_capability_no_fs_request_is_ever_sent(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    agent.on_request = choose("allow_once")
    fake_api.script(
        replies.tool_use("write_file", {"path": "new.txt", "content": "disk\n"}), replies.text("done")
    )
    await agent.prompt(session, "write")
    assert (workspace / "new.txt").read_text() == "disk\n"
    assert not [m for m in agent.messages if str(m.get("method", "")).startswith("fs/")]


async def test_a_command_timeout_leaves_no_process_behind(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    agent.on_request = choose("allow_once")
    sleep = marked_sleep()  # sandboxed, `$!` is a pid of the command's own PID namespace
    command = f"{sleep} & echo started; wait"
    # 5 s: a loaded box starts the sandbox and the shell, and prints "started", well before the kill.
    fake_api.script(replies.tool_use("run_command", {"command": command, "timeout": 5}), replies.text("done"))
    response = await agent.prompt(session, "run it")
    assert response["result"]["stopReason"] == "end_turn"
    result = last_results(fake_api)[0]
    assert "timed out" in str(result["content"]) and "started" in str(result["content"])
    await wait_until(lambda: not running(sleep), "the command's sleep to be gone")  # it runs for minutes


async def test_a_non_zero_exit_is_a_result_not_a_failed_turn(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    agent.on_request = choose("allow_once")
    fake_api.script(
        replies.tool_use("run_command", {"command": "echo oops >&2; exit 3"}), replies.text("saw it")
    )
    response = await agent.prompt(session, "run")
    assert response["result"]["stopReason"] == "end_turn"
    result = last_results(fake_api)[0]
    assert "3" in str(result["content"]) and "oops" in str(result["content"])


async def test_a_plan_update_reaches_the_editor_whole(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        replies.tool_use(
            "update_plan",
            {
                "entries": [
                    {"content": "read the code", "priority": "high", "status": "in_progress"},
                    {"content": "fix the bug"},
                ]
            },
        ),
        replies.tool_use("update_plan", {"index": 1, "status": "completed"}),
        replies.text("planned"),
    )
    await agent.prompt(session, "plan it")
    plans = chunks(agent, session, "plan")
    assert len(plans) == 2
    assert plans[0]["entries"] == [
        {"content": "read the code", "priority": "high", "status": "in_progress"},
        {"content": "fix the bug", "priority": "medium", "status": "pending"},
    ]
    assert [e["status"] for e in plans[1]["entries"]] == ["completed", "pending"]


async def test_a_plan_too_long_for_one_update_is_refused_and_the_old_one_stands(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        replies.tool_use("update_plan", {"entries": [{"content": "step one"}]}),
        replies.tool_use("update_plan", {"entries": [{"content": f"step {n}"} for n in range(5_000)]}),
        replies.tool_use("update_plan", {"entries": [{"content": "x" * 200_000}]}),
        replies.text("planned"),
    )
    response = await agent.prompt(session, "plan it")
    assert response["result"]["stopReason"] == "end_turn"
    assert [p["entries"] for p in chunks(agent, session, "plan")] == [
        [{"content": "step one", "priority": "medium", "status": "pending"}]
    ]
    sent = [b for m in fake_api.requests[-1].body["messages"] for b in m["content"]]
    refused = [b for b in sent if b.get("type") == "tool_result" and b.get("is_error")]
    assert len(refused) == 2 and all("at most 100 entries" in str(r["content"]) for r in refused)


async def test_commands_run_in_the_editor_terminal_when_offered(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    editor = TerminalEditor("hello from the editor\n", exit={"exitCode": 0})

    fake_api.script(replies.tool_use("run_command", {"command": "echo hi"}), replies.text("ok"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize(terminal=True)
        session = await agent.new_session(workspace)
        await agent.prompt(session, "run")
        updates = agent.updates(session)
    methods = editor.methods()
    assert methods.index("terminal/create") < methods.index("terminal/release")
    embedded = [
        p["update"]
        for p in updates
        if p["update"]["sessionUpdate"] == "tool_call_update"
        and any(c.get("type") == "terminal" for c in p["update"].get("content") or [])
    ]
    assert embedded and embedded[0]["content"][0]["terminalId"] == "term-1"
    result = fake_api.requests[-1].body["messages"][-1]["content"][0]
    assert "hello from the editor" in str(result["content"])
