"""A session's options (mode, model, effort, loop) over real pipes: every change is announced with
`config_option_update`, every change survives session/load in a new process, and what a journal
says is restored only when the agent would take it now (issue 27 item 1, issue 29 item 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess, RpcError
from tests.support.zed import zed_initialize
from tests.wire.conftest import turn_record

SONNET = "claude-sonnet-5-5"


def options_of(answer: dict[str, Any]) -> dict[str, str]:
    return {o["id"]: o["currentValue"] for o in answer["result"]["configOptions"]}


async def load(agent: AgentProcess, session: str, workspace: Path) -> dict[str, Any]:
    answer = await agent.request(
        "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
    )
    assert "result" in answer, answer
    return answer


async def test_the_loop_survives_a_load_in_a_new_process(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """The bug: loop=verify set with session/set_config_option was back to `tools` after a load."""
    env = {**agent_env, "ACP_AGENT_VERIFY_CMD": "echo checked >> verify.log"}
    fake_api.script(replies.text("first answer"), replies.text("second answer"))
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        changed = await agent.request(
            "session/set_config_option", {"sessionId": session, "configId": "loop", "value": "verify"}
        )
        assert options_of(changed)["loop"] == "verify"
        first = await agent.prompt(session, "do it")
    assert turn_record(first)["loop"] == "verify"
    assert (workspace / "verify.log").read_text() == "checked\n"
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        loaded = await load(agent, session, workspace)
        second = await agent.prompt(session, "again")
    assert options_of(loaded)["loop"] == "verify"
    record = turn_record(second)
    assert record["loop"] == "verify" and [t["passed"] for t in record["trials"]] == [True]
    assert (workspace / "verify.log").read_text() == "checked\nchecked\n"  # the check really ran


@pytest.mark.model_free
async def test_every_option_change_is_announced_with_config_option_update(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path
) -> None:
    env = {**agent_env, "ACP_AGENT_MODEL": SONNET}
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace, {"acp-agent": {"verifyCommand": "true"}})
        changes = [("model", "claude-opus-5-5"), ("effort", "low"), ("loop", "verify"), ("mode", "plan")]
        for option, value in changes:
            start = len(agent.messages)
            answer = await agent.request(
                "session/set_config_option", {"sessionId": session, "configId": option, "value": value}
            )
            assert options_of(answer)[option] == value, answer
            announced = [
                m["params"]["update"]
                for m in agent.messages[start:]
                if m.get("method") == "session/update"
                and m["params"]["update"]["sessionUpdate"] == "config_option_update"
            ]
            assert len(announced) == 1, (option, announced)
            values = {o["id"]: o["currentValue"] for o in announced[0]["configOptions"]}
            assert values[option] == value
        start = len(agent.messages)
        same = await agent.request(
            "session/set_config_option", {"sessionId": session, "configId": "loop", "value": "verify"}
        )
        assert "result" in same
        assert not [m for m in agent.messages[start:] if m.get("method") == "session/update"]


async def test_a_mode_that_skips_questions_is_never_restored_from_disk(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """A command allowed once could append a bypassPermissions entry to its session's journal:
    after a load the session still asks. A value the agent would not take now is dropped too."""
    fake_api.script(replies.text("hello"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.prompt(session, "hi")
    journal = Path(agent_env["ACP_AGENT_STATE_DIR"]) / f"{session}.jsonl"
    planted = [
        {"type": "mode", "modeId": "acceptEdits"},
        {"type": "mode", "modeId": "bypassPermissions"},
        {"type": "mode", "modeId": "yolo"},
        {"type": "effort", "effort": "extreme"},
        {"type": "loop", "loop": "verify"},  # no verify command in this process
        {"type": "loop", "loop": "nonsense"},
    ]
    with journal.open("a") as f:
        f.writelines(json.dumps(entry) + "\n" for entry in planted)
    asked: list[dict[str, Any]] = []

    async def editor(method: str, params: Any) -> Any:
        if method == "session/request_permission":
            asked.append(params)
            return {"outcome": {"outcome": "selected", "optionId": "reject_once"}}
        return RpcError(-32601, method)

    fake_api.script(
        replies.tool_use("run_command", {"command": "touch ran.flag"}, id="toolu_run"), replies.text("ok")
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        loaded = await load(agent, session, workspace)
        replayed = [p["update"] for p in agent.updates(session)]
        response = await agent.prompt(session, "run it")
        log = agent.stderr_text()
    assert loaded["result"]["modes"]["currentModeId"] == "default"
    assert options_of(loaded) | {"model": ""} == {
        "mode": "default",
        "model": "",
        "effort": "default",
        "loop": "tools",
        "output_style": "Default",
    }
    modes = [u for u in replayed if u["sessionUpdate"] == "current_mode_update"]
    assert modes == [{"sessionUpdate": "current_mode_update", "currentModeId": "default"}]
    assert response["result"]["stopReason"] == "end_turn"
    assert [a["toolCall"]["toolCallId"] for a in asked] == ["toolu_run"]  # it asked
    assert not (workspace / "ran.flag").exists()
    assert "session.mode_not_restored" in log and "bypassPermissions" in log
    assert log.count("session.setting_dropped") == 4  # yolo, extreme, verify, nonsense
    assert "Traceback" not in log


@pytest.mark.model_free
async def test_effort_is_offered_as_the_thought_level_as_zed_places_it(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path
) -> None:
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await zed_initialize(agent)
        answer = await agent.request("session/new", {"cwd": str(workspace), "mcpServers": []})
    categories = {o["id"]: o.get("category") for o in answer["result"]["configOptions"]}
    assert categories["effort"] == "thought_level"
    assert categories["model"] == "model" and categories["mode"] == "mode"


async def test_a_model_and_a_style_chosen_while_a_turn_runs_reach_its_next_request(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """A turn follows the session's options: a model switch and an output style chosen while its
    permission question waits are what its next request carries (each turn runs a spec of its
    own, and a prompt's spec reads the session's settings at each request)."""
    env = {**agent_env, "ACP_AGENT_MODEL": SONNET}
    fake_api.script(replies.tool_use("write_file", {"path": "a.txt", "content": "x"}), replies.text("done"))
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:

        async def editor(method: str, params: Any) -> Any:
            assert method == "session/request_permission", method
            for option, value in (("model", "claude-opus-5-5"), ("output_style", "Explanatory")):
                changed = await agent.request(
                    "session/set_config_option",
                    {"sessionId": params["sessionId"], "configId": option, "value": value},
                )
                assert options_of(changed)[option] == value, changed
            return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

        agent.on_request = editor
        await agent.initialize()
        session = await agent.new_session(workspace)
        answer = await agent.prompt(session, "write it")
    assert answer["result"]["stopReason"] == "end_turn", answer
    first, second = (r.body for r in fake_api.requests)
    assert (first["model"], second["model"]) == (SONNET, "claude-opus-5-5")
    system = (
        [b["text"] for b in second["system"]] if isinstance(second["system"], list) else [second["system"]]
    )
    assert "Explanatory" in "".join(system) and first["system"] != second["system"]
    assert (workspace / "a.txt").read_text() == "x"
