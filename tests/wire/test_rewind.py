"""Checkpoints and rewind (issue 34 item 1): `/rewind N` puts back what the turns since prompt N did
to the files (edits and commands alike) and cuts the conversation; session/load agrees; a file
someone else changed is left and named; a kill mid-rewind leaves the old state or the new one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.client import allow
from tests.support.history import assert_valid_history
from tests.support.waits import wait_until

FILES = ("a.txt", "doomed.txt", "made.txt", "gen/g.txt")


def state(workspace: Path) -> dict[str, str | None]:
    """What the files the tests play with hold (None: absent), and whether gen/ exists."""
    found: dict[str, str | None] = {}
    for name in FILES:
        path = workspace / name
        found[name] = path.read_text() if path.exists() else None
    found["gen/"] = "dir" if (workspace / "gen").exists() else None
    return found


def texts(messages: list[dict[str, Any]]) -> list[str]:
    return [
        b["text"] for m in messages for b in m["content"] if isinstance(b, dict) and b.get("type") == "text"
    ]


def user_messages(agent: AgentProcess, session: str) -> list[str]:
    """The user messages the agent showed (on session/load, the replay's)."""
    return [
        u["update"]["content"]["text"]
        for u in agent.updates(session)
        if u["update"]["sessionUpdate"] == "user_message_chunk"
    ]


async def load(agent: AgentProcess, session: str, cwd: Path) -> None:
    loaded = await agent.request("session/load", {"sessionId": session, "cwd": str(cwd), "mcpServers": []})
    assert "result" in loaded, loaded


def notices(agent: AgentProcess, session: str) -> str:
    return "".join(
        u["update"]["content"]["text"]
        for u in agent.updates(session)
        if u["update"]["sessionUpdate"] == "agent_message_chunk"
    )


async def two_prompts(agent: AgentProcess, session: str, workspace: Path, fake_api: FakeMessagesAPI) -> None:
    """Prompt 1 edits a.txt; prompt 2 edits it again, and through run_command creates made.txt
    and gen/g.txt and deletes doomed.txt."""
    fake_api.script(
        replies.tool_use("edit_file", {"path": "a.txt", "old_string": "one", "new_string": "two"}),
        replies.text("Edited once."),
        replies.tool_use("edit_file", {"path": "a.txt", "old_string": "two", "new_string": "three"}),
        replies.tool_use(
            "run_command",
            {"command": "echo made > made.txt && rm doomed.txt && mkdir gen && echo g > gen/g.txt"},
        ),
        replies.text("Edited twice, and ran a command."),
    )
    first = await agent.prompt(session, "first prompt: edit a.txt")
    assert first["result"]["stopReason"] == "end_turn"
    second = await agent.prompt(session, "second prompt: edit again and run")
    assert second["result"]["stopReason"] == "end_turn"


@pytest.fixture
def files(workspace: Path) -> Path:
    (workspace / "a.txt").write_text("one\n")
    (workspace / "doomed.txt").write_text("bye\n")
    return workspace


async def test_rewind_2_restores_the_files_and_cuts_the_history_and_load_agrees(
    agent_env: dict[str, str], acp_schema: Any, files: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = files
    before_two: dict[str, str | None] = {}
    asked: list[dict[str, Any]] = []

    async def editor(method: str, params: Any) -> Any:
        if method == "session/request_permission" and params["toolCall"]["toolCallId"].startswith("rewind_"):
            asked.append(params)
        return await allow(method, params)

    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        fake_api.script(
            replies.tool_use("edit_file", {"path": "a.txt", "old_string": "one", "new_string": "two"}),
            replies.text("Edited once."),
        )
        await agent.prompt(session, "first prompt: edit a.txt")
        before_two = state(workspace)
        fake_api.script(
            replies.tool_use("edit_file", {"path": "a.txt", "old_string": "two", "new_string": "three"}),
            replies.tool_use(
                "run_command",
                {"command": "echo made > made.txt && rm doomed.txt && mkdir gen && echo g > gen/g.txt"},
            ),
            replies.text("Edited twice, and ran a command."),
        )
        await agent.prompt(session, "second prompt: edit again and run")
        assert state(workspace) == {
            "a.txt": "three\n", "doomed.txt": None, "made.txt": "made\n", "gen/g.txt": "g\n", "gen/": "dir"
        }  # fmt: skip

        listed = await agent.prompt(session, "/rewind")
        assert listed["result"]["stopReason"] == "end_turn"
        shown = notices(agent, session)
        assert "1. first prompt: edit a.txt (1 file(s) changed: a.txt)" in shown
        assert "2. second prompt: edit again and run (4 file(s) changed:" in shown

        rewound = await agent.prompt(session, "/rewind 2")
        assert rewound["result"]["stopReason"] == "end_turn"
        assert state(workspace) == before_two
        assert len(asked) == 1  # the question showed what comes back
        diffs = {c["path"]: c for c in asked[0]["toolCall"]["content"] if c["type"] == "diff"}
        assert diffs[str(workspace.resolve() / "a.txt")]["oldText"] == "three\n"
        assert diffs[str(workspace.resolve() / "a.txt")]["newText"] == "two\n"
        assert diffs[str(workspace.resolve() / "doomed.txt")]["newText"] == "bye\n"
        assert "Rewound to before prompt 2" in notices(agent, session)

        fake_api.script(replies.text("after the rewind"))
        await agent.prompt(session, "third prompt")
        sent = fake_api.requests[-1].body["messages"]
        assert_valid_history(sent)
        said = texts(sent)
        assert "first prompt: edit a.txt" in said and "Edited once." in said
        assert not any("second prompt" in t or "Edited twice" in t for t in said)
        assert said[-1] == "third prompt"

    fake_api.script(replies.text("loaded"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        await load(agent, session, workspace)
        assert user_messages(agent, session) == ["first prompt: edit a.txt", "third prompt"]
        await agent.prompt(session, "fourth prompt")
    said = texts(fake_api.requests[-1].body["messages"])
    assert not any("second prompt" in t for t in said)
    assert said[-3:] == ["third prompt", "after the rewind", "fourth prompt"]
    assert state(workspace) == before_two


async def test_a_file_changed_since_by_someone_else_is_named_not_clobbered(
    agent: AgentProcess, session: str, files: Path, fake_api: FakeMessagesAPI
) -> None:
    agent.on_request = allow
    await two_prompts(agent, session, files, fake_api)
    (files / "made.txt").write_text("the user's own\n")  # after the turn: not the turn's doing
    await agent.prompt(session, "/rewind 1")
    assert (files / "made.txt").read_text() == "the user's own\n"
    assert (files / "a.txt").read_text() == "one\n"
    assert (files / "doomed.txt").read_text() == "bye\n"
    assert not (files / "gen").exists()
    said = notices(agent, session)
    assert "Not restored (changed since by someone else, or no snapshot left): made.txt." in said


WATCHER = "while [ ! -e go ]; do sleep 0.05; done; echo bg > a.txt; echo bg > b.txt; exec sleep 60"
"""Waits for the test's `go`, then writes a.txt and b.txt, and runs on."""


async def test_a_background_command_still_running_is_named_and_what_it_wrote_is_not_clobbered(
    agent: AgentProcess, session: str, files: Path, fake_api: FakeMessagesAPI
) -> None:
    """A background command started in prompt 1 writes a.txt after its turn ended: the rewind
    leaves that (a conflict), and says the command still runs (a rewind does not stop it)."""
    agent.on_request = allow
    fake_api.script(
        replies.tool_use("edit_file", {"path": "a.txt", "old_string": "one", "new_string": "two"}),
        replies.tool_use(
            "run_command",
            {"command": WATCHER, "background": True},
        ),
        replies.text("Edited, and started the watcher."),
    )
    response = await agent.prompt(session, "first prompt: edit and start")
    assert response["result"]["stopReason"] == "end_turn"
    (files / "go").write_text("")  # the command writes now, outside any turn
    await wait_until(
        lambda: (files / "b.txt").exists() and (files / "a.txt").read_text() == "bg\n", "the command's writes"
    )
    answer = await agent.request("_session/rewind", {"sessionId": session, "promptIndex": 0})
    assert answer["result"]["conflicts"] == [str(files.resolve() / "a.txt")]
    assert (files / "a.txt").read_text() == "bg\n"  # the command's, not clobbered
    assert (files / "b.txt").read_text() == "bg\n"
    [task] = answer["result"]["runningTasks"]
    assert task.startswith("bg_")
    fake_api.script(
        replies.tool_use("edit_file", {"path": "a.txt", "old_string": "bg", "new_string": "mine"}),
        replies.text("Edited."),
    )
    await agent.prompt(session, "again: edit")
    await agent.prompt(session, "/rewind 1")
    assert (files / "a.txt").read_text() == "bg\n"
    assert f"Background commands still running: {task} (`while" in notices(agent, session)


async def test_chat_only_and_files_only(
    agent: AgentProcess, session: str, files: Path, fake_api: FakeMessagesAPI
) -> None:
    agent.on_request = allow
    await two_prompts(agent, session, files, fake_api)
    await agent.prompt(session, "/rewind 2 --chat")
    assert (files / "a.txt").read_text() == "three\n"  # the files stay
    await agent.prompt(session, "/rewind 1 --files")
    assert (files / "a.txt").read_text() == "one\n"
    assert (files / "doomed.txt").read_text() == "bye\n"
    fake_api.script(replies.text("ok"))
    await agent.prompt(session, "after")
    said = texts(fake_api.requests[-1].body["messages"])
    assert "first prompt: edit a.txt" in said  # --files left the conversation whole (to prompt 2)
    assert not any("second prompt" in t for t in said)


async def rewind_until_killed(agent: AgentProcess, session: str, index: int) -> None:
    """Ask for a rewind whose agent the test is about to SIGKILL: no answer is expected."""
    try:
        await agent.request("_session/rewind", {"sessionId": session, "promptIndex": index}, timeout=30)
    except BaseException:  # the agent is killed under it
        return


async def test_kill_9_mid_rewind_leaves_a_loadable_session_in_the_new_state(
    agent_env: dict[str, str], acp_schema: Any, files: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    marker = tmp_path / "paused"
    paused_env = {**agent_env, "ACP_AGENT_TEST_PAUSE_REWIND": str(marker)}
    command = "echo more > a.txt && rm doomed.txt && echo made > made.txt && mkdir gen && echo g > gen/g.txt"
    async with AgentProcess.start(
        env=paused_env, schema=acp_schema, on_request=allow, check_on_exit=False
    ) as agent:
        await agent.initialize()
        session = await agent.new_session(files)
        fake_api.script(replies.text("nothing yet"))
        await agent.prompt(session, "prompt zero")
        before = state(files)
        fake_api.script(
            replies.tool_use("run_command", {"command": command}), replies.text("Changed four files.")
        )
        await agent.prompt(session, "prompt one")
        after = state(files)
        async with anyio.create_task_group() as group:
            group.start_soon(rewind_until_killed, agent, session, 1)
            await wait_until(marker.exists, "the rewind paused after its first file")
            mixed = state(files)
            os.kill(agent.pid, signal.SIGKILL)
    back = [name for name in FILES if mixed[name] == before[name] != after[name]]
    assert len(back) == 1, mixed  # killed with one file back and the others not: a mix on disk
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        await load(agent, session, files)
        assert state(files) == before  # the load finished it: the new state, whole
        assert user_messages(agent, session) == ["prompt zero"]
        fake_api.script(replies.text("on we go"))
        await agent.prompt(session, "after the crash")
    said = texts(fake_api.requests[-1].body["messages"])
    assert not any("prompt one" in t for t in said)


async def test_bad_rewinds_get_clear_errors(
    agent_env: dict[str, str], acp_schema: Any, files: Path, fake_api: FakeMessagesAPI
) -> None:
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        init = await agent.initialize()
        assert init["agentCapabilities"]["_meta"]["rewind"] == {
            "supported": True,
            "method": "_session/rewind",
        }
        session = await agent.new_session(files)
        await bad_rewinds(agent, session, fake_api)


async def bad_rewinds(agent: AgentProcess, session: str, fake_api: FakeMessagesAPI) -> None:
    unknown = await agent.request("_session/rewind", {"sessionId": "sess_" + "0" * 32, "promptIndex": 0})
    assert unknown["error"]["code"] == -32002
    missing = await agent.request("_session/rewind", {"sessionId": session, "promptIndex": 0})
    assert missing["error"]["code"] == -32602 and "no prompt 1" in missing["error"]["message"]
    for params in (
        {},
        {"promptIndex": 0, "messageId": "m"},
        {"promptIndex": -1},
        {"promptIndex": 0, "scope": "x"},
    ):
        bad = await agent.request("_session/rewind", {"sessionId": session, **params})
        assert bad["error"]["code"] == -32602, params
    unknown_message = await agent.request("_session/rewind", {"sessionId": session, "messageId": "nope"})
    assert unknown_message["error"]["code"] == -32602
    await agent.prompt(session, "/rewind 3")
    await agent.prompt(session, "/rewind three")
    said = notices(agent, session)
    assert "there is no prompt 3 in this session (it has no prompt yet)" in said
    assert "/rewind takes a prompt number" in said

    fake_api.script(replies.stall())
    async with anyio.create_task_group() as group:
        group.start_soon(agent.prompt, session, "a long one")
        await wait_until(lambda: fake_api.attempts >= 1, "the turn at the model")
        busy = await agent.request("_session/rewind", {"sessionId": session, "promptIndex": 0})
        assert busy["error"]["code"] == -32600 and "cancel it first" in busy["error"]["message"]
        await agent.notify("session/cancel", {"sessionId": session})


async def test_a_hostile_repositorys_config_runs_nothing_when_the_agent_snapshots(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    marker = tmp_path / "fsmonitor-ran"
    hook = tmp_path / "fsmonitor.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    git_env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q"], cwd=workspace, env=git_env, check=True)
    with (workspace / ".git" / "config").open("a") as config:
        config.write(f"[core]\n\tfsmonitor = {hook}\n")
    fake_api.script(replies.tool_use("run_command", {"command": "echo hi > hi.txt"}), replies.text("done"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=allow) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.prompt(session, "say hi")
        await agent.prompt(session, "/rewind 1")
    assert not (workspace / "hi.txt").exists()  # snapshotted, and put back
    assert not marker.exists()
    subprocess.run(["git", "status"], cwd=workspace, env=git_env, check=True, capture_output=True)
    assert marker.exists()  # the repository is hostile indeed: git run in it runs the hook


async def test_without_git_the_edit_tools_changes_still_rewind_and_status_says_so(
    agent_env: dict[str, str], acp_schema: Any, files: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    fake_api.script(
        replies.tool_use("edit_file", {"path": "a.txt", "old_string": "one", "new_string": "two"}),
        replies.text("Edited."),
    )
    async with AgentProcess.start(
        env={**agent_env, "PATH": str(empty)}, schema=acp_schema, on_request=allow
    ) as agent:
        await agent.initialize()
        session = await agent.new_session(files)
        await agent.prompt(session, "edit a.txt")
        assert (files / "a.txt").read_text() == "two\n"
        await agent.prompt(session, "/status")
        await agent.prompt(session, "/rewind 1")
        said = notices(agent, session)
    assert "Checkpoints (/rewind): the edit tools' changes only (git was not found" in said
    assert (files / "a.txt").read_text() == "one\n"


async def test_the_mode_decides_a_rewind_that_restores_files_as_it_decides_an_edit(
    agent: AgentProcess, session: str, files: Path, fake_api: FakeMessagesAPI
) -> None:
    """Plan mode refuses `/rewind N` that would restore files, unasked, with the engine's words,
    and lets a chat-only one (`--chat`) go: it changes no file. acceptEdits restores unasked."""
    agent.on_request = allow
    await two_prompts(agent, session, files, fake_api)
    asked = [m for m in agent.messages if m.get("method") == "session/request_permission"]
    await agent.request("session/set_mode", {"sessionId": session, "modeId": "plan"})
    await agent.prompt(session, "/rewind 1")
    assert (files / "a.txt").read_text() == "three\n"
    assert "Not rewound: Refused: the session is in plan mode" in notices(agent, session)
    await agent.prompt(session, "/rewind 2 --chat")
    assert (files / "a.txt").read_text() == "three\n"
    assert "Not rewound" not in notices(agent, session).split("plan mode")[-1]
    await agent.request("session/set_mode", {"sessionId": session, "modeId": "acceptEdits"})
    await agent.prompt(session, "/rewind 1 --files")
    assert (files / "a.txt").read_text() == "one\n"
    assert [m for m in agent.messages if m.get("method") == "session/request_permission"] == asked


@pytest.mark.parametrize("behavior", ["deny", "ask"])
async def test_a_rewind_meets_the_rules_on_each_file_it_would_restore(
    behavior: str, agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """An `Edit(…)` rule on a file a rewind would restore decides the rewind as it decides an edit
    of that file, in bypassPermissions too: a deny refuses it with the engine's words (nothing is
    restored), an ask rule asks. The file was changed by a command, which Edit rules do not cover."""
    claude = Path(agent_env["HOME"]) / ".claude"
    claude.mkdir(parents=True, exist_ok=True)
    (claude / "settings.json").write_text(json.dumps({"permissions": {behavior: ["Edit(**/guarded.txt)"]}}))
    guarded = workspace / "guarded.txt"
    guarded.write_text("old\n")
    asked: list[str] = []

    async def editor(method: str, params: Any) -> Any:
        if method == "session/request_permission":
            asked.append(params["toolCall"]["toolCallId"])
            return {"outcome": {"outcome": "selected", "optionId": "reject_once"}}
        return await allow(method, params)

    fake_api.script(
        replies.tool_use("run_command", {"command": "echo new > guarded.txt"}), replies.text("Changed it.")
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "bypassPermissions"})
        await agent.prompt(session, "change the guarded file")
        assert guarded.read_text() == "new\n" and asked == []
        await agent.prompt(session, "/rewind 1")
        said = notices(agent, session)
    assert guarded.read_text() == "new\n"  # not restored
    rewind_questions = [a for a in asked if a.startswith("rewind_")]
    if behavior == "deny":
        assert rewind_questions == []
        assert "Not rewound: " in said and "Edit(**/guarded.txt)" in said, said
    else:
        assert len(rewind_questions) == 1  # asked, and the user declined
