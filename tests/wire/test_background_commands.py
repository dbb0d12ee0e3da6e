"""Background commands (issue 34 item 3): run_command with `background: true` starts a task that
outlives its turn, command_output reads it in a later turn, stop_command stops it, and the
session's end (close, delete, the agent's exit) stops it with all it started: no process is left.
At most 8 run at once; a flood of output is capped in memory and on disk."""

from __future__ import annotations

import json
import re
import secrets
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.client import TerminalEditor, allow
from tests.support.procs import gone, marked_sleep, running, running_with, started, strays
from tests.support.waits import wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

TASK_ID = re.compile(r"\bbg_[0-9a-f]{8}\b")


def tool_result(fake_api: FakeMessagesAPI, call_id: str) -> dict[str, Any]:
    """The tool_result the model was sent for `call_id` (in the latest request that has it)."""
    for request in reversed(fake_api.requests):
        for message in request.body["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("tool_use_id") == call_id:
                    return dict(block)
    raise AssertionError(f"no tool_result for {call_id}")


def result_text(fake_api: FakeMessagesAPI, call_id: str) -> str:
    content = tool_result(fake_api, call_id)["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def call_updates(agent: AgentProcess, session: str, call_id: str) -> list[dict[str, Any]]:
    return [
        p["update"]
        for p in agent.updates(session)
        if p["update"].get("sessionUpdate") == "tool_call_update" and p["update"]["toolCallId"] == call_id
    ]


def shown_text(update: dict[str, Any]) -> str:
    content = update.get("content") or []
    return "".join(c["content"].get("text", "") for c in content if c["type"] == "content")


def shown(agent: AgentProcess, session: str, call_id: str, text: str) -> bool:
    """Whether the editor was shown `text` in the content of the call `call_id`."""
    return any(text in shown_text(update) for update in call_updates(agent, session, call_id))


def spool_files(agent_env: dict[str, str]) -> list[Path]:
    tasks = Path(agent_env["ACP_AGENT_STATE_DIR"]) / "tasks"
    return [p for p in tasks.rglob("*") if p.is_file() and p.name != ".lock"] if tasks.exists() else []


async def start_in_background(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, command: str, call_id: str
) -> str:
    """One turn that starts `command` in the background; the task id the model was given."""
    fake_api.script(
        replies.tool_use("run_command", {"command": command, "background": True}, id=call_id),
        replies.text("started"),
    )
    response = await agent.prompt(session, "start it")
    assert response["result"]["stopReason"] == "end_turn", response
    text = result_text(fake_api, call_id)
    found = TASK_ID.search(text)
    assert found is not None, text
    return found.group()


@pytest.mark.parametrize("sandbox", ["auto", "off"])
async def test_a_background_server_is_read_in_the_next_turn_and_gone_after_session_close(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, sandbox: str
) -> None:
    server, token = marked_sleep(), f"srv-{secrets.token_hex(6)}"
    command = f"{server} & echo listening on 8000 # {token}\nwait"

    def mine() -> list[int]:
        return [*running(server), *running_with(token)]

    env = {**agent_env, "ACP_AGENT_SANDBOX": sandbox}
    async with strays(mine), AgentProcess.start(env=env, schema=acp_schema, on_request=allow) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        task_id = await start_in_background(agent, session, fake_api, command, "toolu_bg")
        pids = [*await started(server), *running_with(token)]
        # The turn has ended; the call that started it follows the output outside the turn.
        await wait_until(
            lambda: shown(agent, session, "toolu_bg", "listening on 8000"),
            "the server's output in the editor",
        )
        assert running(server)  # it outlived its turn

        fake_api.script(
            replies.tool_use("command_output", {"task_id": task_id}, id="toolu_read"), replies.text("read")
        )
        response = await agent.prompt(session, "is it up?")
        assert response["result"]["stopReason"] == "end_turn", response
        text = result_text(fake_api, "toolu_read")
        assert f"{task_id} " in text and "running for" in text and "listening on 8000" in text, text
        assert spool_files(agent_env), "its output is spooled to the state dir"

        assert (await agent.request("session/close", {"sessionId": session}))["result"] == {}
        await gone(pids)
        assert mine() == []
        assert spool_files(agent_env) == []  # the spool goes with the session
        last = call_updates(agent, session, "toolu_bg")[-1]
        assert last.get("status") == "completed" and "stopped" in shown_text(last), last


def notices(agent: AgentProcess, session: str) -> list[str]:
    """The text of the agent messages sent for the session (a slash command answers with one)."""
    return [
        p["update"]["content"]["text"]
        for p in agent.updates(session)
        if p["update"].get("sessionUpdate") == "agent_message_chunk"
    ]


async def test_the_ninth_background_command_is_refused_and_tasks_lists_the_eight(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    sleeps = [marked_sleep() for _ in range(9)]
    calls = [
        replies.tool_use_block("run_command", {"command": sleep, "background": True}, id=f"toolu_{n}")
        for n, sleep in enumerate(sleeps)
    ]
    fake_api.script(replies.message(calls, stop_reason="tool_use"), replies.text("started eight"))

    def mine() -> list[int]:
        return [pid for sleep in sleeps for pid in running(sleep)]

    asked: list[str] = []

    async def allow_and_count(method: str, params: Any) -> Any:
        if method == "session/request_permission":
            asked.append(params["toolCall"]["toolCallId"])
        return await allow(method, params)

    async with (
        strays(mine),
        AgentProcess.start(env=agent_env, schema=acp_schema, on_request=allow_and_count) as agent,
    ):
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "start nine servers")
        assert response["result"]["stopReason"] == "end_turn", response
        for n in range(8):
            assert TASK_ID.search(result_text(fake_api, f"toolu_{n}")), n
        ninth = tool_result(fake_api, "toolu_8")
        assert ninth.get("is_error") is True, ninth
        assert "at most 8 background commands" in result_text(fake_api, "toolu_8")
        assert "toolu_8" not in asked and len(asked) == 8  # nobody is asked for a call that cannot run
        pids = [pid for sleep in sleeps[:8] for pid in await started(sleep)]
        assert running(sleeps[8]) == []

        response = await agent.prompt(session, "/tasks")  # answered without a model request
        assert response["result"]["stopReason"] == "end_turn", response
        listing = notices(agent, session)[-1]
        assert listing.startswith("Background commands: 8 running (at most 8 at once)"), listing
        assert len(TASK_ID.findall(listing)) == 8 and listing.count("· running ·") == 8, listing
        assert len(fake_api.requests) == 2

        first = TASK_ID.findall(result_text(fake_api, "toolu_0"))[0]
        fake_api.script(
            replies.message(
                [
                    replies.tool_use_block("stop_command", {"task_id": first}, id="toolu_stop"),
                    replies.tool_use_block(
                        "run_command", {"command": sleeps[8], "background": True}, id="toolu_9"
                    ),
                ],
                stop_reason="tool_use",
            ),
            replies.text("one stopped, the ninth started"),
        )
        await agent.prompt(session, "stop one, start the last")
        assert result_text(fake_api, "toolu_stop").startswith(f"{first} `{sleeps[0]}`: stopped after")
        assert running(sleeps[0]) == []
        assert TASK_ID.search(result_text(fake_api, "toolu_9")), result_text(fake_api, "toolu_9")
        pids += await started(sleeps[8])

        assert (await agent.request("session/delete", {"sessionId": session}))["result"] == {}
        await gone(pids)
        assert spool_files(agent_env) == []


async def test_another_sessions_task_is_unknown_and_an_ended_one_is_named_at_the_next_turn(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=allow) as agent:
        await agent.initialize()
        first, second = await agent.new_session(workspace), await agent.new_session(workspace)
        task_id = await start_in_background(agent, first, fake_api, "echo secret-of-the-first", "toolu_a")
        await wait_until(lambda: shown(agent, first, "toolu_a", "exit code 0"), "its end in the editor")

        fake_api.script(
            replies.message(
                [
                    replies.tool_use_block("command_output", {"task_id": task_id}, id="toolu_foreign"),
                    replies.tool_use_block("stop_command", {"task_id": task_id}, id="toolu_foreign_stop"),
                    replies.tool_use_block("command_output", {"task_id": "bg_00000000"}, id="toolu_unknown"),
                ],
                stop_reason="tool_use",
            ),
            replies.text("none of mine"),
        )
        response = await agent.prompt(second, "read the other one")
        assert response["result"]["stopReason"] == "end_turn", response
        for call_id in ("toolu_foreign", "toolu_foreign_stop", "toolu_unknown"):
            result = tool_result(fake_api, call_id)
            assert result.get("is_error") is True, result
            text = result_text(fake_api, call_id)
            assert "no background command" in text and "none was started" in text, text
            assert "secret" not in text
        last_user = fake_api.requests[-1].body["messages"][-1]  # its tool results, and nothing else
        assert "ended since your last turn" not in str(last_user)

        fake_api.script(
            replies.message(
                [
                    replies.tool_use_block("command_output", {"task_id": task_id}, id="toolu_read"),
                    replies.tool_use_block("stop_command", {"task_id": task_id}, id="toolu_stop"),
                ],
                stop_reason="tool_use",
            ),
            replies.text("it had ended"),
        )
        response = await agent.prompt(first, "and now?")
        assert response["result"]["stopReason"] == "end_turn", response
        prompt = fake_api.requests[-2].body["messages"][-1]["content"]
        assert prompt[0]["text"] == "and now?" and len(prompt) == 2, prompt  # after the prompt
        assert "ended since your last turn" in prompt[1]["text"] and f"{task_id} " in prompt[1]["text"]
        assert "exit code 0" in prompt[1]["text"], prompt
        read = result_text(fake_api, "toolu_read")
        assert "exit code 0" in read and "secret-of-the-first" in read, read
        stop = tool_result(fake_api, "toolu_stop")
        assert stop.get("is_error") is not True, stop
        assert "ended already: nothing to stop" in result_text(fake_api, "toolu_stop")


async def test_plan_mode_refuses_a_background_command_like_any_command(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    sleep = marked_sleep()
    fake_api.script(
        replies.tool_use("run_command", {"command": sleep, "background": True}, id="toolu_plan"),
        replies.text("refused"),
    )
    async with strays(lambda: running(sleep)), AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "plan"})
        response = await agent.prompt(session, "start a server")
        assert response["result"]["stopReason"] == "end_turn", response
        assert tool_result(fake_api, "toolu_plan").get("is_error") is True
        assert "plan mode" in result_text(fake_api, "toolu_plan")
        response = await agent.prompt(session, "/tasks")
        assert notices(agent, session)[-1].startswith("No background commands in this session")
    assert running(sleep) == []


async def test_a_bash_deny_rule_refuses_a_background_command_and_an_ask_rule_asks(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    denied, asked = marked_sleep(300), marked_sleep(301)
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(
        json.dumps({"permissions": {"deny": ["Bash(sleep 300.*)"], "ask": ["Bash(sleep 301.*)"]}})
    )
    fake_api.script(
        replies.message(
            [
                replies.tool_use_block(
                    "run_command", {"command": denied, "background": True}, id="toolu_deny"
                ),
                replies.tool_use_block("run_command", {"command": asked, "background": True}, id="toolu_ask"),
            ],
            stop_reason="tool_use",
        ),
        replies.text("refused"),
    )
    questions: list[str] = []

    async def editor(method: str, params: Any) -> Any:
        questions.append(params["toolCall"]["rawInput"]["command"])
        return {"outcome": {"outcome": "selected", "optionId": "reject_once"}}

    async with (
        strays(lambda: running(denied) + running(asked)),
        AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent,
    ):
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "bypassPermissions"})
        response = await agent.prompt(session, "start two servers")
        assert response["result"]["stopReason"] == "end_turn", response
        assert tool_result(fake_api, "toolu_deny").get("is_error") is True
        # A deny holds in every mode, bypass included: one line, no question.
        assert result_text(fake_api, "toolu_deny") == "denied by .claude/settings.json: Bash(sleep 300.*)"
        assert tool_result(fake_api, "toolu_ask").get("is_error") is True  # asked, and declined
        assert questions == [asked]
        await agent.prompt(session, "/tasks")
        assert notices(agent, session)[-1].startswith("No background commands in this session")
    assert running(denied) == running(asked) == []


def peak_memory_kib(pid: int) -> int:
    """The most memory `pid` ever held (VmHWM, its resident set's high-water mark), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmHWM for {pid}")


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_a_gigabyte_of_output_is_capped_in_memory_and_on_disk_and_the_command_runs_on(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    gib = 1024**3
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=allow) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        before = peak_memory_kib(agent.pid)
        task_id = await start_in_background(agent, session, fake_api, f"yes flood | head -c {gib}", "toolu_f")
        fake_api.script(
            replies.tool_use("command_output", {"task_id": task_id, "wait": 300}, id="toolu_r"),
            replies.text("read"),
        )
        response = await agent.prompt(session, "wait for it", timeout=330)
        assert response["result"]["stopReason"] == "end_turn", response
        text = result_text(fake_api, "toolu_r")
        assert text.startswith(f"{task_id} `yes flood | head -c {gib}`: exit code 0 after"), text[:200]
        assert len(text.encode()) <= 33 * 1024 and "bytes cut …]" in text, len(text)
        raw = call_updates(agent, session, "toolu_r")[-1]["rawOutput"]
        assert raw["outputBytes"] == gib and raw["newBytes"] == gib and raw["truncated"] is True, raw
        spooled = spool_files(agent_env)
        assert 0 < sum(p.stat().st_size for p in spooled) <= 8 * 1024 * 1024, spooled
        assert peak_memory_kib(agent.pid) - before < 64 * 1024  # never the gigabyte, nor a fraction


@pytest.mark.parametrize("how", ["stdin_eof", "SIGTERM", "SIGKILL"])
async def test_the_agents_exit_stops_its_background_commands(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, how: str
) -> None:
    """EOF and SIGTERM stop them before the agent exits (its log says so); a kill -9 leaves that
    to the warden (`process/lifetime.py`)."""
    server, job = marked_sleep(), marked_sleep()
    command = f"setsid {job} > /dev/null 2>&1 < /dev/null &\nexec {server}"

    def mine() -> list[int]:
        return [*running(server), *running(job)]

    async with (
        strays(mine),
        AgentProcess.start(env=agent_env, schema=acp_schema, on_request=allow, check_on_exit=False) as agent,
    ):
        await agent.initialize()
        session = await agent.new_session(workspace)
        await start_in_background(agent, session, fake_api, command, "toolu_srv")
        pids = [*await started(server), *await started(job)]
        if how == "stdin_eof":
            await agent.close_stdin()
        else:
            agent.send_signal(getattr(signal, how))
        code = await agent.wait_exit(timeout=20)
        if how != "SIGKILL":
            assert code == 0
            logged = [json.loads(line) for line in agent.stderr_text().splitlines() if line.startswith("{")]
            ended = [e for e in logged if e["event"] == "shell.task_ended"]
            assert [e["state"] for e in ended] == ["stopped"], logged
        await gone(pids)


async def test_in_the_editors_terminal_it_stays_alive_past_its_turn_and_is_released_on_close(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    editor = TerminalEditor("listening on 8000\n", terminal_id="term-bg")

    def called() -> list[str]:
        return [method for method in editor.methods() if method.startswith("terminal/")]

    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize(terminal=True)
        session = await agent.new_session(workspace)
        task_id = await start_in_background(agent, session, fake_api, "npm run dev", "toolu_t")
        create = next(params for method, params in editor.calls if method == "terminal/create")
        assert {"name": "ACP_AGENT_OWNER", "value": create["env"][0]["value"]} in create[
            "env"
        ]  # the warden's
        final = call_updates(agent, session, "toolu_t")[-1]
        assert final["status"] == "completed"
        assert {"type": "terminal", "terminalId": "term-bg"} in final["content"]  # the editor streams it
        await agent.round_trip()
        assert called() == ["terminal/create", "terminal/wait_for_exit"]  # alive past its turn

        fake_api.script(
            replies.tool_use("command_output", {"task_id": task_id}, id="toolu_read"), replies.text("up")
        )
        await agent.prompt(session, "is it up?")
        text = result_text(fake_api, "toolu_read")
        assert "running for" in text and "listening on 8000" in text, text

        assert (await agent.request("session/close", {"sessionId": session}))["result"] == {}
        assert called()[-2:] == ["terminal/kill", "terminal/release"]
        last = call_updates(agent, session, "toolu_t")[-1]
        assert last == {"sessionUpdate": "tool_call_update", "toolCallId": "toolu_t", "status": "completed"}


async def test_loading_an_open_session_again_stops_the_tasks_of_the_one_it_replaces(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    server = marked_sleep()
    async with (
        strays(lambda: running(server)),
        AgentProcess.start(env=agent_env, schema=acp_schema, on_request=allow) as agent,
    ):
        await agent.initialize()
        session = await agent.new_session(workspace)
        await start_in_background(agent, session, fake_api, f"exec {server}", "toolu_srv")
        pids = await started(server)
        answer = await agent.request(
            "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
        )
        assert "modes" in answer["result"], answer
        await gone(pids)
        response = await agent.prompt(session, "/tasks")  # the session as loaded has none
        assert response["result"]["stopReason"] == "end_turn"
        assert notices(agent, session)[-1].startswith("No background commands in this session")
