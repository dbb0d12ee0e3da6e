"""Loop strategies over real pipes, on both model paths: verify (command, judge) and phased.

Sessions pick their loop by `session/new` `_meta["acp-agent"]`; the flag, environment and config
option tests at the end pin the other ways to choose it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess, RpcError
from tests.support.procs import marked_sleep, running, started
from tests.support.waits import wait_until
from tests.wire.conftest import chunks, turn_record

COUNTER_CHECK = (
    'n=$(cat .count 2>/dev/null || echo 0); n=$((n+1)); echo "$n" > .count\n'
    'echo "check run $n"; [ "$n" -ge 3 ]\n'
)


def verdict(score: float, passed: bool, feedback: str) -> replies.Message:
    return replies.tool_use("submit_verdict", {"score": score, "passed": passed, "feedback": feedback})


def last_user_text(fake_api: FakeMessagesAPI, n: int) -> str:
    message = fake_api.requests[n].body["messages"][-1]
    assert message["role"] == "user"
    return " ".join(b.get("text", "") for b in message["content"] if b.get("type") == "text")


def tool_calls(agent: AgentProcess, session: str) -> list[dict[str, Any]]:
    return [p["update"] for p in agent.updates(session) if p["update"]["sessionUpdate"] == "tool_call"]


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def editor(answer: str, asked: list[dict[str, Any]]):  # type: ignore[no-untyped-def]
    async def on_request(method: str, params: Any) -> Any:
        if method == "session/request_permission":
            asked.append(params)
            return {"outcome": {"outcome": "selected", "optionId": answer}}
        return RpcError(-32601, f"no {method}")

    return on_request


# ── verify with a command ────────────────────────────────────────────────────────────────────


async def test_a_check_failing_twice_then_passing_gives_three_attempts_and_feeds_back_output(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    (workspace / "check.sh").write_text(COUNTER_CHECK)
    session = await agent.new_session(
        workspace, meta={"acp-agent": {"loop": "verify", "verifyCommand": "sh check.sh"}}
    )
    fake_api.script(replies.text("attempt 1"), replies.text("attempt 2"), replies.text("attempt 3"))
    response = await agent.prompt(session, "make the check pass")
    assert response["result"]["stopReason"] == "end_turn"
    assert fake_api.attempts == 3
    record = turn_record(response)
    assert record["loop"] == "verify" and record["modelRequests"] == 3
    assert [t["passed"] for t in record["trials"]] == [False, False, True]
    assert [t["trial"] for t in record["trials"]] == [1, 2, 3]
    assert {t["evaluator"] for t in record["trials"]} == {"command"}
    assert record["bestTrial"] == 3 and record["bestScore"] == 1
    assert all(isinstance(t["durationMs"], int) and t["modelRequests"] == 1 for t in record["trials"])
    # The model saw each failure's output, in a new user message.
    for n in (1, 2):
        seen = last_user_text(fake_api, n)
        assert f"Verification failed, attempt {n} of 3" in seen and f"check run {n}" in seen
    checks = [c for c in tool_calls(agent, session) if c["kind"] == "execute"]
    assert len(checks) == 3 and all("sh check.sh" in c["title"] for c in checks)
    finals = [
        p["update"]
        for p in agent.updates(session)
        if p["update"].get("toolCallId") == checks[0]["toolCallId"]
        and p["update"].get("status") in ("completed", "failed")
    ]
    assert finals[-1]["status"] == "failed"
    assert "check run 1" in str(finals[-1]["content"])


async def test_an_always_failing_check_with_max_trials_2_ends_at_max_trials(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    session = await agent.new_session(
        workspace,
        meta={"acp-agent": {"loop": "verify", "verifyCommand": "echo still broken; exit 1", "maxTrials": 2}},
    )
    fake_api.set_fallback(replies.text("try"))
    response = await agent.prompt(session, "fix it")
    assert response["result"]["stopReason"] == "max_turn_requests"
    record = turn_record(response)
    assert record["limit"] == "maxTrials" and record["maxTrials"] == 2
    assert [t["passed"] for t in record["trials"]] == [False, False]
    assert fake_api.attempts == 2
    notices = [c["content"]["text"] for c in chunks(agent, session) if "maxTrials" in c["content"]["text"]]
    assert len(notices) == 1 and "--max-trials" in notices[0]


# ── verify with a judge ──────────────────────────────────────────────────────────────────────


async def test_judge_verdicts_below_then_above_the_threshold(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    session = await agent.new_session(
        workspace, meta={"acp-agent": {"loop": "verify", "verifyRubric": "The answer names three colours."}}
    )
    fake_api.script(
        replies.text("red"),
        verdict(0.6, True, "only one colour"),
        replies.text("red, green, blue"),
        verdict(0.95, True, "three colours"),
    )
    response = await agent.prompt(session, "name colours")
    assert response["result"]["stopReason"] == "end_turn"
    record = turn_record(response)
    assert [(t["passed"], t["score"], t["evaluator"]) for t in record["trials"]] == [
        (False, 0.6, "judge"),
        (True, 0.95, "judge"),
    ]
    assert record["modelRequests"] == 4 and record["trials"][0]["modelRequests"] == 2
    judge = fake_api.requests[1].body
    assert judge["tool_choice"] == {"type": "auto"}  # an unknown model: never forced
    assert [t["name"] for t in judge["tools"]] == ["submit_verdict"]
    assert "thinking" not in judge
    assert "three colours" in str(judge["messages"]) and "red" in str(judge["messages"])
    # The judge's exchange is not in the history the main loop sends; its feedback is.
    main = fake_api.requests[2].body
    assert "submit_verdict" not in str(main["messages"])
    assert "only one colour" in last_user_text(fake_api, 2)
    assert [c["kind"] for c in tool_calls(agent, session)] == ["think", "think"]


async def test_judge_requests_are_counted_and_the_n_plus_first_is_never_sent(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    session = await agent.new_session(
        workspace, meta={"acp-agent": {"loop": "verify", "verifyRubric": "Be right.", "maxTurnRequests": 3}}
    )
    fake_api.script(replies.text("a"), verdict(0.1, False, "wrong"), replies.text("b"))
    fake_api.set_fallback(verdict(1.0, True, "right"))
    response = await agent.prompt(session, "go")
    assert response["result"]["stopReason"] == "max_turn_requests"
    record = turn_record(response)
    assert record["limit"] == "maxTurnRequests" and record["modelRequests"] == 3
    assert fake_api.attempts == 3
    assert len(record["trials"]) == 1


@pytest.mark.model_free
async def test_verify_with_neither_command_nor_rubric_is_refused_saying_what_to_set(
    agent: AgentProcess, workspace: Path
) -> None:
    response = await agent.request(
        "session/new", {"cwd": str(workspace), "mcpServers": [], "_meta": {"acp-agent": {"loop": "verify"}}}
    )
    error = response["error"]
    assert error["code"] == -32602
    assert "verifyCommand" in error["message"] and "verifyRubric" in error["message"]


# ── cancel during a verify command ───────────────────────────────────────────────────────────


async def test_cancel_during_a_verify_command_ends_cancelled_during_verify_and_kills_it(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    sleep = marked_sleep(60)  # sandboxed, `$!` is a pid of the command's own PID namespace
    session = await agent.new_session(
        workspace, meta={"acp-agent": {"loop": "verify", "verifyCommand": f"{sleep} & echo $!; wait"}}
    )
    fake_api.script(replies.text("done"))
    results: dict[str, Any] = {}

    async def run() -> None:
        results["response"] = await agent.prompt(session, "go")

    def progress_pid(message: dict[str, Any]) -> bool:
        update = message["params"]["update"]
        return (
            update["sessionUpdate"] == "tool_call_update"
            and update["content"][0]["content"]["text"].strip().isdigit()
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        shown = await agent.wait_for(progress_pid, timeout=15)
        assert await started(sleep)
        await agent.notify("session/cancel", {"sessionId": session})
        # D5's cancel bound: the verify command would run 60 s.
        await wait_until(lambda: "response" in results, "the cancelled answer", timeout=5)
    response = results["response"]
    assert response["result"]["stopReason"] == "cancelled"
    assert turn_record(response)["abortedDuring"] == "verify"
    assert not running(sleep)
    call_id = shown["params"]["update"]["toolCallId"]
    final = [p["update"] for p in agent.updates(session) if p["update"].get("toolCallId") == call_id][-1]
    assert final["status"] == "failed"


# ── phased ───────────────────────────────────────────────────────────────────────────────────


def offered(fake_api: FakeMessagesAPI, n: int) -> set[str]:
    return {t["name"] for t in fake_api.requests[n].body.get("tools", [])}


async def test_phased_plans_read_only_shows_the_plan_and_allow_always_accepts_edits(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    asked: list[dict[str, Any]] = []
    agent.on_request = editor("allow_always", asked)
    session = await agent.new_session(workspace, meta={"acp-agent": {"loop": "phased"}})
    fake_api.script(
        replies.tool_use("update_plan", {"entries": [{"content": "Create hello.txt"}]}),
        replies.tool_use("write_file", {"path": "early.txt", "content": "no"}),
        replies.tool_use("run_command", {"command": "touch ran.flag"}),
        replies.tool_use("finish_phase", {"summary": "Create hello.txt with a greeting"}),
        replies.tool_use("write_file", {"path": "hello.txt", "content": "hi\n"}),
        replies.text("Created hello.txt."),
    )
    response = await agent.prompt(session, "add a greeting file")
    assert response["result"]["stopReason"] == "end_turn"
    # plan: read-only, nothing written or run; one tool list in every phase (the cache holds)
    assert {"read_file", "update_plan", "finish_phase", "write_file"} <= offered(fake_api, 0)
    assert all(r.body["tools"] == fake_api.requests[0].body["tools"] for r in fake_api.requests)
    assert not (workspace / "early.txt").exists() and not (workspace / "ran.flag").exists()
    assert "plan phase (read-only)" in str(fake_api.requests[2].body["messages"][-1])
    # the approval shows the summary and the plan
    assert len(asked) == 1, [a["toolCall"].get("title") for a in asked]
    question = asked[0]["toolCall"]
    assert question["kind"] == "switch_mode"
    assert question["rawInput"]["summary"] == "Create hello.txt with a greeting"
    assert [e["content"] for e in question["rawInput"]["plan"]] == ["Create hello.txt"]
    # allow always: the mode becomes acceptEdits, and the edit needs no further prompt
    modes = [
        p["update"]["currentModeId"]
        for p in agent.updates(session)
        if p["update"]["sessionUpdate"] == "current_mode_update"
    ]
    assert modes == ["acceptEdits"]
    assert "write_file" in offered(fake_api, 4)
    assert (workspace / "hello.txt").read_text() == "hi\n"
    record = turn_record(response)
    assert record["loop"] == "phased" and record["finalState"] == "done"
    assert [(t["from"], t["to"], t["reason"]) for t in record["transitions"]] == [
        ("plan", "act", "approved_always"),
        ("act", "done", "reply_ended"),
    ]
    assert record["transitions"][0]["atRequest"] == 4
    assert "trials" not in record


async def test_phased_reject_ends_the_turn_with_the_workspace_unchanged(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    asked: list[dict[str, Any]] = []
    agent.on_request = editor("reject_once", asked)
    session = await agent.new_session(workspace, meta={"acp-agent": {"loop": "phased"}})
    before = snapshot(workspace)
    fake_api.script(
        replies.tool_use("update_plan", {"entries": [{"content": "Delete README.md"}]}),
        replies.tool_use("finish_phase", {"summary": "Delete the README"}),
    )
    fake_api.set_fallback(replies.text("unexpected"))
    response = await agent.prompt(session, "tidy up")
    assert response["result"]["stopReason"] == "end_turn"
    assert fake_api.attempts == 2 and len(asked) == 1
    assert snapshot(workspace) == before
    record = turn_record(response)
    assert [(t["from"], t["to"], t["reason"]) for t in record["transitions"]] == [
        ("plan", "plan", "rejected")
    ]
    assert record["finalState"] == "plan"
    # The next prompt starts in plan again, with the conversation so far.
    fake_api.script(replies.text("What would you like instead?"))
    await agent.prompt(session, "no, keep it")
    assert "Delete the README" in str(fake_api.requests[2].body["messages"])


async def test_phased_with_a_check_verifies_and_goes_back_to_act_on_a_fail(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    (workspace / "check.sh").write_text('test -f done.txt || { echo "done.txt missing"; exit 1; }\n')
    agent.on_request = editor("allow_once", [])
    session = await agent.new_session(
        workspace, meta={"acp-agent": {"loop": "phased", "verifyCommand": "sh check.sh"}}
    )
    fake_api.script(
        replies.tool_use("finish_phase", {"summary": "create done.txt"}),
        replies.text("I think it is done."),
        replies.tool_use("write_file", {"path": "done.txt", "content": "ok"}),
        replies.tool_use("finish_phase", {"summary": "created done.txt"}),
    )
    response = await agent.prompt(session, "go")
    record = turn_record(response)
    assert response["result"]["stopReason"] == "end_turn"
    assert [(t["from"], t["to"]) for t in record["transitions"]] == [
        ("plan", "act"),
        ("act", "verify"),
        ("verify", "act"),
        ("act", "verify"),
        ("verify", "done"),
    ]
    assert [t["passed"] for t in record["trials"]] == [False, True]
    assert "done.txt missing" in last_user_text(fake_api, 2)


# ── choosing the loop by flag, environment and config option ────────────────────────────────


async def test_the_loop_is_chosen_by_flags(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.set_fallback(replies.text("try"))
    async with AgentProcess.start(
        args=["--loop", "verify", "--verify-cmd", "exit 1", "--max-trials", "1"],
        env=agent_env,
        schema=acp_schema,
    ) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "go")
    record = turn_record(response)
    assert record["loop"] == "verify" and record["limit"] == "maxTrials"
    assert fake_api.attempts == 1


async def test_the_loop_is_chosen_by_the_environment(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.set_fallback(replies.text("try"))
    env = {
        **agent_env,
        "ACP_AGENT_LOOP": "verify",
        "ACP_AGENT_VERIFY_CMD": "exit 3",
        "ACP_AGENT_MAX_TRIALS": "2",
    }
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "go")
    record = turn_record(response)
    assert record["loop"] == "verify" and len(record["trials"]) == 2


async def test_the_loop_is_a_config_option(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    new = await agent.request(
        "session/new",
        {"cwd": str(workspace), "mcpServers": [], "_meta": {"acp-agent": {"verifyCommand": "true"}}},
    )
    result = new["result"]
    options = {o["id"]: o for o in result["configOptions"]}
    assert "loop" in options, list(options)
    loop = options["loop"]
    assert loop["type"] == "select" and loop["currentValue"] == "tools"
    assert {o["value"] for o in loop["options"]} == {"tools", "verify", "phased"}
    changed = await agent.request(
        "session/set_config_option", {"sessionId": result["sessionId"], "configId": "loop", "value": "verify"}
    )
    values = {o["id"]: o["currentValue"] for o in changed["result"]["configOptions"]}
    assert values["loop"] == "verify"
    fake_api.script(replies.text("done"))
    response = await agent.prompt(result["sessionId"], "go")
    assert turn_record(response)["loop"] == "verify"
    assert turn_record(response)["trials"][0]["passed"] is True
