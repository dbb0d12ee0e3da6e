"""The user's Claude Code hooks on the wire (issue 33 item 2), in a temporary HOME and repository:
a PreToolUse hook blocks a command and its message reaches the model; a PostToolUse hook runs
once per edit; a hook's permissionDecision goes through the one rule engine; a project hook waits
for trust; a Stop hook that keeps the turn going still meets max_turn_requests exactly; and a bad
hook (missing, garbage, hanging, flooding, failing, a hostile matcher) never stops the turn."""

from __future__ import annotations

import json
import shlex
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies, routes
from tests.support.agent import AgentProcess
from tests.support.conventions import claude_repo
from tests.support.waits import wait_until
from tests.wire.conftest import chunks, turn_record
from tests.wire.test_claude_settings import Editor, calls, results, write_settings
from tests.wire.test_conventions import status_text, user_text

SCRIPT = Path(__file__).resolve().parents[1] / "support" / "hook_script.py"


def hook(behaviour: str, log: Path, **fields: Any) -> dict[str, Any]:
    """A command handler running the tests' hook script."""
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(SCRIPT))} {behaviour} {shlex.quote(str(log))}"
    return {"type": "command", "command": command, **fields}


def user_hooks(env: dict[str, str], hooks: dict[str, Any], **more: Any) -> None:
    write_settings(Path(env["HOME"]) / ".claude" / "settings.json", {"hooks": hooks, **more})


def log_lines(log: Path) -> list[list[str]]:
    return [line.split(" | ") for line in log.read_text().splitlines()] if log.exists() else []


def hook_calls(agent: AgentProcess, session: str) -> list[dict[str, Any]]:
    """The tool calls the editor was shown for hook runs (announced), in order."""
    return [u for u in chunks(agent, session, "tool_call") if u["title"].startswith("hook: ")]


async def test_a_pre_tool_use_hook_blocks_a_command_and_its_message_reaches_the_model(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    (workspace / "build").mkdir()
    log = workspace / "hooks.log"
    guard = hook("block-rm", log, **{"if": "Bash(rm *)"})
    user_hooks(agent_env, {"PreToolUse": [{"matcher": "Bash", "hooks": [guard]}]})
    fake_api.script(
        calls(("run_command", {"command": "rm -rf build"}), ("run_command", {"command": "echo still-here"})),
        replies.text("the hook said no"),
    )
    editor = Editor("allow_once")
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        record = turn_record(await agent.prompt(session, "clean up"))
        shown = hook_calls(agent, session)
    found = results(fake_api.requests[-1])
    assert found["toolu_c0"] == ("Blocked by a PreToolUse hook: rm is not allowed here: use the trash script")
    assert (workspace / "build").is_dir()  # the call did not run
    assert "still-here" in found["toolu_c1"]  # `if` selects the rm only
    assert [q["toolCall"]["rawInput"]["command"] for q in editor.asked] == ["echo still-here"]
    [line] = log_lines(log)
    assert line[:3] == ["PreToolUse", "Bash", "rm -rf build"]
    assert line[4] == str(workspace) and line[5] == "default" and line[6] == ""  # no API key
    assert record["hooks"]["runs"] == 1 and record["hooks"]["blocked"] == 1
    assert record["modelRequests"] == 2 and record["toolCallsDenied"] == 1
    assert [(c["title"], c["kind"]) for c in shown] == [("hook: PreToolUse hook_script.py", "execute")]


async def test_a_post_tool_use_hook_runs_once_per_edit_and_its_context_reaches_the_model(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    log = workspace / "hooks.log"
    user_hooks(agent_env, {"PostToolUse": [{"matcher": "Edit|Write", "hooks": [hook("context", log)]}]})
    fake_api.script(
        calls(
            ("write_file", {"path": "a.txt", "content": "one\n"}),
            ("edit_file", {"path": "a.txt", "old_string": "one", "new_string": "two"}),
            ("read_file", {"path": "a.txt"}),
            ("edit_file", {"path": "a.txt", "old_string": "absent", "new_string": "x"}),
        ),
        replies.text("edited"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "acceptEdits"})
        record = turn_record(await agent.prompt(session, "edit a.txt"))
        shown = hook_calls(agent, session)
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        params = {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
        assert "result" in await agent.request("session/load", params, timeout=30)
        replayed = hook_calls(agent, session)
    target = str(workspace / "a.txt")
    # Once per edit that succeeded: the failed edit and the read run no hook.
    assert [line[:3] for line in log_lines(log)] == [
        ["PostToolUse", "Write", target],
        ["PostToolUse", "Edit", target],
    ]
    found = results(fake_api.requests[-1])
    assert f"formatted {target}" in found["toolu_c0"] and f"formatted {target}" in found["toolu_c1"]
    assert "formatted" not in found["toolu_c2"] and "formatted" not in found["toolu_c3"]
    assert record["hooks"]["runs"] == 2 and record["hooks"]["blocked"] == 0
    assert len(shown) == 2 and all(c["kind"] == "execute" for c in shown)
    # session/load shows the two runs again, as they were shown live
    assert [(c["toolCallId"], c["title"]) for c in replayed] == [(c["toolCallId"], c["title"]) for c in shown]


async def test_a_hooks_permission_decision_goes_through_the_rule_engine(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    """allow spares the mode's question but never beats a deny or ask rule; ask asks; deny
    refuses; updatedInput replaces the input, which is checked again."""
    workspace = claude_repo(tmp_path)
    log = workspace / "hooks.log"
    user_hooks(
        agent_env,
        {"PreToolUse": [{"matcher": "Bash", "hooks": [hook("decide", log)]}]},
        permissions={"deny": ["Bash(echo allow-me-denied*)"], "ask": ["Bash(echo allow-me-asked*)"]},
    )
    fake_api.script(
        calls(
            ("run_command", {"command": "echo allow-me"}),
            ("run_command", {"command": "echo allow-me-denied"}),
            ("run_command", {"command": "echo allow-me-asked"}),
            ("run_command", {"command": "echo ask-me"}),
            ("run_command", {"command": "echo deny-me"}),
            ("run_command", {"command": "echo rewrite-me"}),
        ),
        replies.text("decided"),
    )
    editor = Editor("allow_once", "allow_once")
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        record = turn_record(await agent.prompt(session, "decide"))
    found = results(fake_api.requests[-1])
    assert "allow-me" in found["toolu_c0"]  # the hook's allow: no question in default mode
    assert found["toolu_c1"] == "denied by ~/.claude/settings.json: Bash(echo allow-me-denied*)"
    assert [q["toolCall"]["rawInput"]["command"] for q in editor.asked] == [
        "echo allow-me-asked",
        "echo ask-me",
    ]
    assert found["toolu_c4"] == "Blocked by a PreToolUse hook: the policy says no"
    assert "rewritten-by-hook" in found["toolu_c5"]
    assert record["hooks"]["runs"] == 6 and record["hooks"]["blocked"] == 1


async def test_an_updated_input_in_claude_codes_shapes_is_read_back_and_checked_again(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    """Issue 42 item 7: a hook written for Claude Code answers `file_path` (absolute) and Bash's
    `timeout` in milliseconds with `description`; the call runs with them in this agent's shapes."""
    workspace = claude_repo(tmp_path)
    log = workspace / "hooks.log"
    user_hooks(agent_env, {"PreToolUse": [{"matcher": "Write|Bash", "hooks": [hook("claude-shapes", log)]}]})
    fake_api.script(
        calls(
            ("write_file", {"path": "asked.txt", "content": "the model's\n"}),
            ("run_command", {"command": "echo the-models-command", "timeout": 5}),
        ),
        replies.text("rewritten"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=Editor()) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        record = turn_record(await agent.prompt(session, "write and run"))
        started = [u for u in chunks(agent, session, "tool_call") if not u["title"].startswith("hook: ")]
    found = results(fake_api.requests[-1])
    assert (workspace / "rewritten.txt").read_text() == "written where the hook said\n", found
    assert not (workspace / "asked.txt").exists()
    assert "rewritten-in-claude-shape" in found["toolu_c1"] and "the-models" not in found["toolu_c1"]
    assert record["toolCallsDenied"] == 0 and record["hooks"]["runs"] == 2
    assert len(started) == 2


async def test_a_project_hook_does_not_run_before_trust_and_does_after(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    log = workspace / "hooks.log"
    project = {"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [hook("log", log)]}]}}
    write_settings(workspace / ".claude" / "settings.json", project)
    listings = []
    for answer in ("distrust_once", "trust_always"):
        fake_api.script(replies.tool_use("read_file", {"path": "README.md"}), replies.text("read"))
        editor = Editor(answer)
        async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
            await agent.initialize()
            session = await agent.new_session(workspace)
            record = turn_record(await agent.prompt(session, "read the readme"))
            before = len(chunks(agent, session))
            await agent.prompt(session, "/hooks")
            listings.append("".join(c["content"]["text"] for c in chunks(agent, session)[before:]))
        [trust] = editor.asked
        assert any("hook: PreToolUse" in line for line in trust["toolCall"]["rawInput"]["enables"])
        if answer == "distrust_once":
            assert not log.exists() and "hooks" not in record
    assert [line[:3] for line in log_lines(log)] == [["PreToolUse", "Read", str(workspace / "README.md")]]
    assert record["hooks"]["runs"] == 1
    assert "(.claude/settings.json, project; declined)" in listings[0]
    assert "(.claude/settings.json, project; in force)" in listings[1]


@pytest.mark.slow
async def test_bad_hooks_end_with_a_warning_and_the_turn_goes_on(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    log = workspace / "hooks.log"
    bad = [
        {"type": "command", "command": str(tmp_path / "no-such-hook.sh")},
        hook("garbage", log),
        hook("hang", log, timeout=2),
        hook("flood", log),
        hook("exit1", log),
        {"type": "http", "url": "http://127.0.0.1:9/"},
    ]
    user_hooks(
        agent_env,
        {
            "PreToolUse": [
                {"matcher": "Read", "hooks": bad},
                {"matcher": "(?:x{65535}){65535}", "hooks": [hook("log", log)]},
                {"matcher": "(", "hooks": [hook("log", log)]},
                {"matcher": "^(a|aa)+$", "hooks": [hook("log", log)]},
            ],
            "NoSuchEvent": [],
        },
    )
    fake_api.script(
        replies.tool_use("read_file", {"path": "README.md"}, id="toolu_read"), replies.text("read it")
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        record = turn_record(await agent.prompt(session, "read the readme"))
        status = await status_text(agent, session)
    assert record["stopReason"] == "end_turn" and record["hooks"]["runs"] == 5
    assert record["hooks"]["blocked"] == 0
    assert "README TEXT for tests." in results(fake_api.requests[-1])["toolu_read"]
    for warning in (
        "exit code 127",
        "printed invalid JSON",
        "timed out after 2 s",
        "boom: the hook failed",
        "this agent runs only command hooks",
        "past the bounds of a search pattern",
        "not a regular expression",
        "hooks.NoSuchEvent skipped",
    ):
        assert warning in status, warning


async def test_a_stop_hook_that_keeps_the_turn_going_still_meets_max_turn_requests_exactly(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    log = workspace / "hooks.log"
    user_hooks(agent_env, {"Stop": [{"hooks": [hook("stop-block", log)]}]})
    fake_api.set_fallback(replies.text("done, I think"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace, meta={"acp-agent": {"maxTurnRequests": 3}})
        response = await agent.prompt(session, "finish the job")
    record = turn_record(response)
    assert response["result"]["stopReason"] == "max_turn_requests" and record["limit"] == "maxTurnRequests"
    assert fake_api.attempts == 3 and record["modelRequests"] == 3  # the hooks' runs are no requests
    assert record["hooks"]["runs"] == 3 and record["hooks"]["blocked"] == 3
    feedback = "Stop hook feedback:\nthe tests are not run yet: keep going"
    assert [user_text(fake_api, n).endswith(feedback) for n in range(3)] == [False, True, True]
    assert [line[3] for line in log_lines(log)] == ["False", "True", "True"]  # stop_hook_active


async def test_prompt_and_session_start_hooks_block_a_prompt_or_add_context(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    log = workspace / "hooks.log"
    user_hooks(
        agent_env,
        {
            "UserPromptSubmit": [{"hooks": [hook("prompt-block", log), hook("prompt-context", log)]}],
            "SessionStart": [{"matcher": "startup", "hooks": [hook("prompt-context", log)]}],
        },
    )
    fake_api.script(replies.text("first"), replies.text("second"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        first = await agent.prompt(session, "hello")
        blocked = await agent.prompt(session, "say the forbidden word")
        shown = "".join(c["content"]["text"] for c in chunks(agent, session))
        await agent.prompt(session, "again")
    assert turn_record(first)["hooks"]["runs"] == 3  # SessionStart, and the two prompt hooks
    assert turn_record(blocked)["modelRequests"] == 0 and blocked["result"]["stopReason"] == "end_turn"
    assert "this prompt names a forbidden word" in shown
    assert len(fake_api.requests) == 2
    assert "forbidden" not in str(fake_api.requests[-1].body["messages"])  # the model never saw it
    first_prompt = user_text(fake_api, 0)
    assert first_prompt.startswith("hello") and first_prompt.count("PROMPT CONTEXT FROM A HOOK") == 2
    assert user_text(fake_api, 1).count("PROMPT CONTEXT FROM A HOOK") == 1  # SessionStart ran once
    assert [line[0] for line in log_lines(log)].count("SessionStart") == 1


async def test_compaction_notification_and_session_end_hooks_and_continue_false(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    log = workspace / "hooks.log"
    user_hooks(
        agent_env,
        {
            "PreCompact": [{"matcher": "manual", "hooks": [hook("stop-block", log)]}],
            "Notification": [{"matcher": "permission_prompt", "hooks": [hook("log", log)]}],
            "SessionEnd": [{"hooks": [hook("log", log)]}],
            "PostToolUse": [{"matcher": "Read", "hooks": [hook("halt", log)]}],
        },
    )
    fake_api.script(
        replies.tool_use("run_command", {"command": "echo asked"}),
        replies.text("ran"),
        calls(("read_file", {"path": "README.md"}), ("read_file", {"path": "src/app.py"})),
    )
    editor = Editor("allow_once")
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.prompt(session, "run it")
        compact = await agent.prompt(session, "/compact")
        halted = await agent.prompt(session, "read two files")
        shown = "".join(c["content"]["text"] for c in chunks(agent, session))
        assert "result" in await agent.request("session/close", {"sessionId": session})
    assert turn_record(compact)["modelRequests"] == 0 and "Nothing to compact" in shown
    record = turn_record(halted)
    assert halted["result"]["stopReason"] == "end_turn" and record["modelRequests"] == 1
    assert record["toolCalls"] == 2  # the batch is answered whole, then the turn ends
    assert "the hook ended the turn here" in shown
    assert len(fake_api.requests) == 3
    events = [line[0] for line in log_lines(log)]
    assert events == ["Notification", "PreCompact", "PostToolUse", "PostToolUse", "SessionEnd"]


async def test_a_subagent_stop_hook_keeps_the_child_going_under_the_one_meter(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    """SubagentStop runs at a subagent's end (matched on its agent type), never at the parent's;
    its exit 2 sends the child on with the hook's message, each continuation a request of the
    tree's one meter, so max_turn_requests still holds exactly."""
    workspace = claude_repo(tmp_path)
    log = workspace / "hooks.log"
    user_hooks(
        agent_env, {"SubagentStop": [{"matcher": "general-purpose", "hooks": [hook("stop-block", log)]}]}
    )
    child = fake_api.route(routes.first_prompt_has("check the tests"), otherwise=replies.text("child: done"))
    task = {"description": "Check", "prompt": "check the tests"}
    fake_api.set_fallback(
        lambda body, attempt: replies.message([replies.tool_use_block("task", task)], stop_reason="tool_use")
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace, meta={"acp-agent": {"maxTurnRequests": 6}})
        response = await agent.prompt(session, "have a helper check")
    record = turn_record(response)
    assert response["result"]["stopReason"] == "max_turn_requests" and record["limit"] == "maxTurnRequests"
    assert fake_api.attempts == 6 and record["modelRequests"] == 6  # the tree's, the hooks' runs none
    children = [r for r in fake_api.requests if "check the tests" in str(r.body["messages"][0]["content"])]
    assert child.served == len(children) >= 2  # the child went on past its first end
    feedback = "SubagentStop hook feedback:\nthe tests are not run yet: keep going"
    last_user = ["".join(str(b.get("text", "")) for b in r.body["messages"][-1]["content"]) for r in children]
    assert [feedback in text for text in last_user] == [False] + [True] * (len(children) - 1)
    runs = log_lines(log)
    assert [line[0] for line in runs] == ["SubagentStop"] * len(runs)  # the parent's end runs no Stop
    assert [line[3] for line in runs][:2] == ["False", "True"]  # stop_hook_active
    assert record["hooks"]["runs"] == len(runs) and record["hooks"]["blocked"] == len(runs)
    assert record["subagents"][0]["requests"] == len(children)


@pytest.mark.model_free
@pytest.mark.parametrize("leave", ["eof", "sigterm"])
async def test_session_end_runs_at_the_agents_shutdown_and_a_hanging_one_never_holds_it(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, leave: str
) -> None:
    """SessionEnd runs for every open session when the agent leaves (stdin closed, or SIGTERM), not
    only on session/close; a hook that hangs (600 s timeout, raised to 60 s for session/close) is
    stopped at the exit grace, so the agent still leaves promptly."""
    workspace = claude_repo(tmp_path)
    ended = workspace / "ended"  # the hooks run in the command sandbox: the workspace is writable
    ended.mkdir()
    user_hooks(
        agent_env,
        {
            "SessionEnd": [
                {
                    "hooks": [
                        {"type": "command", "command": f"cat > $(mktemp -p {shlex.quote(str(ended))})"},
                        {"type": "command", "command": "exec sleep 600"},
                    ]
                }
            ]
        },
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        sessions = [await agent.new_session(workspace) for _ in range(2)]
        for session in sessions:  # each builds its turn machinery, hooks included
            assert "Hooks: 2 in force" in await status_text(agent, session)
        if leave == "eof":
            await agent.close_stdin()
        else:
            agent.send_signal(signal.SIGTERM)
        assert await agent.wait_exit(timeout=15) == 0  # a hang guard: the exit grace is 1.5 s
        log = agent.stderr_text()
    runs = [json.loads(run.read_text()) for run in ended.iterdir()]  # a file per run
    assert sorted(r["session_id"] for r in runs) == sorted(sessions)
    assert {(r["hook_event_name"], r["reason"]) for r in runs} == {("SessionEnd", "prompt_input_exit")}
    assert "agent.stopped" in log


@pytest.mark.model_free
@pytest.mark.parametrize("leave", ["eof", "sigterm"])
async def test_a_repeated_sigterm_during_session_end_lets_the_agent_finish_its_bounded_shutdown(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, leave: str
) -> None:
    """acpx ends stdin and sends SIGTERM 240 ms later; an editor may send SIGTERM twice. A signal
    landing while SessionEnd runs is noted, not obeyed: the hook finishes, the journal is closed,
    the agent exits 0 with no traceback."""
    workspace = claude_repo(tmp_path)
    started, go, finished = (workspace / name for name in ("started", "go", "finished"))
    started_q, go_q, finished_q = (shlex.quote(str(path)) for path in (started, go, finished))
    command = f"touch {started_q}; while [ ! -e {go_q} ]; do sleep 0.01; done; touch {finished_q}"
    user_hooks(agent_env, {"SessionEnd": [{"hooks": [{"type": "command", "command": command}]}]})
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        assert "Hooks: 1 in force" in await status_text(agent, session)
        if leave == "eof":
            await agent.close_stdin()
        else:
            agent.send_signal(signal.SIGTERM)
        await wait_until(started.exists, "the SessionEnd hook's start")
        agent.send_signal(signal.SIGTERM)  # the hook is still waiting for `go`: shutdown is under way
        go.touch()
        code = await agent.wait_exit(timeout=15)  # a hang guard: the exit grace is 1.5 s
        log = agent.stderr_text()
    assert code == 0, log
    assert finished.exists()
    assert "Traceback" not in log
    assert "agent.stopped" in log
    [journal] = (tmp_path / "state").rglob(f"{session}.jsonl")
    assert all(json.loads(line) for line in journal.read_text().splitlines())


@pytest.mark.model_free
@pytest.mark.parametrize("signals", [("SIGTERM", "SIGTERM", "SIGTERM"), ("SIGINT", "SIGINT")])
async def test_a_third_signal_or_a_second_sigint_ends_the_shutdown_at_once(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, signals: tuple[str, ...]
) -> None:
    """The way out of a shutdown that is taking too long (Ctrl-C twice): the agent dies by that
    signal, saying so on stderr, with no traceback."""
    workspace = claude_repo(tmp_path)
    started = workspace / "started"
    command = f"touch {shlex.quote(str(started))}; exec sleep 600"
    user_hooks(agent_env, {"SessionEnd": [{"hooks": [{"type": "command", "command": command}]}]})
    first, *repeats = (signal.Signals[name] for name in signals)
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        assert "Hooks: 1 in force" in await status_text(agent, session)
        agent.send_signal(first)
        await wait_until(started.exists, "the SessionEnd hook's start")
        for noted, repeat in enumerate(repeats):  # two at once would merge into one pending signal

            def caught_up(noted: int = noted) -> bool:
                return agent.stderr_text().count("agent.signal_repeated") == noted

            await wait_until(caught_up, "the agent's note of the signal before")
            agent.send_signal(repeat)
        code = await agent.wait_exit(timeout=15)
        log = agent.stderr_text()
    assert code == -repeats[-1], log
    assert '"leaving at once"' in log
    assert "Traceback" not in log
