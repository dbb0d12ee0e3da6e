"""What the editor and the cache see of subagents: a subagent's edits ask the session's question
only where allowed, child 2 reads the children's shared prefix from the cache, and session/load
replays the task call as the live turn ended it (issue 26, D27)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_agent.session.system_prompt import SUBAGENT_MARKER
from acp_agent.testing import FakeMessagesAPI, replies, routes
from tests.support.agent import AgentProcess, RpcError
from tests.wire.conftest import turn_record


def one_task(prompt: str, id: str = "toolu_task") -> replies.Message:
    return replies.message(
        [replies.tool_use_block("task", {"description": "Helper", "prompt": prompt}, id=id)],
        stop_reason="tool_use",
    )


async def test_with_all_tools_a_subagent_asks_the_sessions_question_for_its_command(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.route(
        routes.first_prompt_has("make it"),
        replies.tool_use("write_file", {"path": "made.txt", "content": "made\n"}, id="toolu_child_w"),
        replies.tool_use("run_command", {"command": "echo ran > ran.txt"}, id="toolu_child_cmd"),
        replies.text("wrote made.txt and ran the command"),
    )
    fake_api.script(one_task("make it"), replies.text("done"))
    questions: list[dict[str, Any]] = []

    async def editor(method: str, params: Any) -> Any:
        if method == "session/request_permission":
            questions.append(params["toolCall"])
            return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        return RpcError(-32601, method)

    env = {**agent_env, "ACP_AGENT_SUBAGENT_TOOLS": "all"}
    async with AgentProcess.start(env=env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "acceptEdits"})
        response = await agent.prompt(session, "delegate")
        own = [
            p["update"] for p in agent.updates(session) if p["update"].get("toolCallId") == "toolu_child_cmd"
        ]
    assert response["result"]["stopReason"] == "end_turn", response
    child_tools = [t["name"] for t in fake_api.requests[1].body["tools"]]
    assert "write_file" in child_tools and "run_command" in child_tools
    assert not {"task", "update_plan", "ask_user"} & set(child_tools)
    assert (workspace / "made.txt").read_text() == "made\n"  # an edit: allowed by acceptEdits
    assert (workspace / "ran.txt").exists()
    assert len(questions) == 1  # the command asked, attributed to the subagent's own call
    assert questions[0]["toolCallId"] == "toolu_child_cmd"
    assert questions[0]["title"].startswith("Helper: ")
    assert own[0]["sessionUpdate"] == "tool_call" and own[-1]["status"] == "completed"
    assert turn_record(response)["subagents"][0]["toolCalls"] == 2


async def test_with_all_tools_a_subagent_may_not_edit_in_the_default_mode(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.route(
        routes.system_has(SUBAGENT_MARKER),
        replies.tool_use("write_file", {"path": "made.txt", "content": "made\n"}),
        replies.text("could not"),
    )
    fake_api.script(one_task("make it"), replies.text("done"))
    asked: list[str] = []

    async def editor(method: str, params: Any) -> Any:
        asked.append(method)
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}

    env = {**agent_env, "ACP_AGENT_SUBAGENT_TOOLS": "all"}
    async with AgentProcess.start(env=env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "delegate")
    assert response["result"]["stopReason"] == "end_turn"
    result = fake_api.requests[2].body["messages"][-1]["content"][0]
    assert result["is_error"] and "acceptEdits or bypassPermissions" in result["content"]
    assert asked == [] and not (workspace / "made.txt").exists()


async def test_the_second_subagent_reads_the_shared_prefix_from_the_cache(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    for name in ("one", "two"):
        fake_api.route(routes.first_prompt_has(f"question {name}"), replies.text(f"answer {name}"))
    fake_api.script(
        one_task("question one", "toolu_1"), one_task("question two", "toolu_2"), replies.text("ok")
    )
    env = {**agent_env, "ACP_AGENT_MODEL": "claude-sonnet-5-5"}
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "one after the other")
    assert response["result"]["stopReason"] == "end_turn", response
    first, second = fake_api.requests[1], fake_api.requests[3]
    assert first.body["system"] == second.body["system"] and first.body["tools"] == second.body["tools"]
    usage = [served.usage for served in fake_api.served]
    assert usage[1] is not None and usage[3] is not None
    assert usage[1]["cache_read_input_tokens"] == 0 and usage[1]["cache_creation_input_tokens"] > 0
    assert usage[3]["cache_read_input_tokens"] > 0  # child 2's first request: the children's prefix
    children = turn_record(response)["subagents"]
    assert children[1]["cacheReadInputTokens"] == usage[3]["cache_read_input_tokens"]


async def test_session_load_replays_the_task_call_with_its_lines_and_answer(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.route(
        routes.system_has(SUBAGENT_MARKER),
        replies.tool_use("search_text", {"pattern": "greet"}),
        replies.text("greet is in src/app.py"),
    )
    fake_api.script(one_task("where is greet?"), replies.text("found it"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.prompt(session, "find greet")
        live = [p["update"] for p in agent.updates(session) if p["update"].get("toolCallId") == "toolu_task"]
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        loaded = await agent.request(
            "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
        )
        assert "result" in loaded, loaded
        replayed = [
            p["update"] for p in agent.updates(session) if p["update"].get("toolCallId") == "toolu_task"
        ]
    assert replayed[0]["title"] == live[0]["title"] == "Subagent: Helper"
    assert replayed[-1]["content"] == live[-1]["content"]
    texts = [c["content"]["text"] for c in replayed[-1]["content"]]
    assert texts == ["Search 'greet'", "greet is in src/app.py"]
