"""`ask_user` (issue 24, item 2): a question to the user as an elicitation form, scoped to the
session and the tool call; the answer, a decline or a dismissal goes back to the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.zed import Editor, answer_each, zed_initialize
from tests.wire.conftest import turn_record

QUESTION = {"question": "Which database should the app use?", "choices": ["SQLite", "Postgres"]}


def tool_result(fake_api: FakeMessagesAPI, call_id: str) -> dict[str, Any]:
    return next(
        b
        for m in fake_api.requests[-1].body["messages"]
        for b in m["content"]
        if b.get("tool_use_id") == call_id
    )


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"action": "accept", "content": {"choice": "Postgres"}}, "The user chose: Postgres"),
        ({"action": "decline"}, "The user declined to answer"),
        ({"action": "cancel"}, "The user dismissed the question"),
    ],
    ids=["answer", "decline", "cancel"],
)
async def test_a_question_round_trips_as_a_form_scoped_to_its_tool_call(
    agent_env: dict[str, str],
    acp_schema: Any,
    workspace: Path,
    fake_api: FakeMessagesAPI,
    answer: dict[str, Any],
    expected: str,
) -> None:
    editor = Editor(answer)
    fake_api.script(replies.tool_use("ask_user", QUESTION, id="toolu_ask"), replies.text("noted"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await zed_initialize(agent)
        session = await agent.new_session(workspace)
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "plan"})  # allowed there
        response = await agent.prompt(session, "set up the app")
    assert response["result"]["stopReason"] == "end_turn"
    assert "ask_user" in {t["name"] for t in fake_api.requests[0].body["tools"]}
    [form] = editor.forms
    assert form["sessionId"] == session and form["toolCallId"] == "toolu_ask"
    assert form["mode"] == "form" and form["message"] == QUESTION["question"]
    assert form["requestedSchema"]["properties"]["choice"]["enum"] == ["SQLite", "Postgres"]
    assert expected in str(tool_result(fake_api, "toolu_ask")["content"])
    assert turn_record(response)["toolCalls"] == 1 and turn_record(response)["modelRequests"] == 2
    shown = [p["update"] for p in agent.updates(session) if p["update"].get("toolCallId") == "toolu_ask"]
    assert shown[-1]["status"] == "completed"


async def test_an_open_question_gets_a_text_box_and_the_answer_in_words(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    editor = Editor({"action": "accept", "content": {"answer": "  call it Ledger  "}})
    fake_api.script(
        replies.tool_use("ask_user", {"question": "A name?"}, id="toolu_open"), replies.text("ok")
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await zed_initialize(agent)
        session = await agent.new_session(workspace)
        await agent.prompt(session, "name the project")
    schema = editor.forms[0]["requestedSchema"]
    assert set(schema["properties"]) == {"answer"} and schema["required"] == ["answer"]
    assert "The user answered: call it Ledger" in str(tool_result(fake_api, "toolu_open")["content"])


async def test_session_cancel_while_the_question_waits_ends_the_turn_and_abandons_the_form(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    editor = Editor()  # never answers
    fake_api.script(replies.tool_use("ask_user", QUESTION, id="toolu_wait"), replies.text("unreached"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await zed_initialize(agent)
        session = await agent.new_session(workspace)
        prompt_id = await agent.send_request(
            "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "ask"}]}
        )
        with anyio.fail_after(30):
            await editor.asked.wait()
        await agent.notify("session/cancel", {"sessionId": session})
        response = await agent.response(prompt_id, timeout=5)
        asked = next(m for m in agent.messages if m.get("method") == "elicitation/create")
        abandoned = await agent.wait_for(lambda m: m["method"] == "$/cancel_request", timeout=5)
    assert response["result"]["stopReason"] == "cancelled"
    assert abandoned["params"] == {"requestId": asked["id"]}
    shown = [p["update"] for p in agent.updates(session) if p["update"].get("toolCallId") == "toolu_wait"]
    assert shown[-1]["status"] == "failed"
    assert len(fake_api.requests) == 1


async def test_no_question_tool_for_a_client_without_forms(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.tool_use("ask_user", QUESTION, id="toolu_nope"), replies.text("fine"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await zed_initialize(agent, elicitation={"url": {}})
        session = await agent.new_session(workspace)
        await agent.prompt(session, "ask me")
    assert "ask_user" not in {t["name"] for t in fake_api.requests[0].body["tools"]}
    assert "unknown tool" in json.dumps(tool_result(fake_api, "toolu_nope"))
    assert not any(m.get("method") == "elicitation/create" for m in agent.messages)


OUTSIDE_THE_FORM = {
    "a choice never offered": {"action": "accept", "content": {"choice": "MongoDB"}},
    "a 5 MB choice": {"action": "accept", "content": {"choice": "SQLite" + "x" * 5_000_000}},
    "a number for the choice": {"action": "accept", "content": {"choice": 2}},
    "a field the form lacks": {"action": "accept", "content": {"choice": "SQLite", "sql": "DROP"}},
    "an action that is a list": {"action": ["accept"], "content": {"choice": "SQLite"}},
    "an action that is an object": {"action": {"accept": True}},
    "content that is a list": {"action": "accept", "content": ["SQLite"]},
    "the required choice missing": {"action": "accept", "content": {}},
}


async def test_an_answer_outside_the_form_is_a_dismissal_and_the_turn_goes_on(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    call = ("ask_user", QUESTION)
    agent, session, ran = await answer_each(
        agent_env, acp_schema, workspace, fake_api, OUTSIDE_THE_FORM, call
    )
    for case, call_id, response in ran:
        assert response["result"]["stopReason"] == "end_turn", (case, response)
        result = json.dumps(tool_result(fake_api, call_id))
        assert "The user dismissed the question" in result and "chose" not in result, (case, result)
        assert len(result) < 2_000  # nothing of the answer reached the model
        shown = [p["update"] for p in agent.updates(session) if p["update"].get("toolCallId") == call_id]
        assert shown[-1]["status"] == "completed" and shown[-1]["rawOutput"] == {"action": "cancel"}


async def test_a_free_text_answer_past_its_length_is_a_dismissal(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    editor = Editor({"action": "accept", "content": {"answer": "y" * 9_000}})
    fake_api.script(replies.tool_use("ask_user", {"question": "Why?"}, id="toolu_long"), replies.text("ok"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await zed_initialize(agent)
        session = await agent.new_session(workspace)
        await agent.prompt(session, "ask")
    assert editor.forms[0]["requestedSchema"]["properties"]["answer"]["maxLength"] == 8000
    assert "The user dismissed the question" in json.dumps(tool_result(fake_api, "toolu_long"))
