"""Logging in from the editor (issue 24, item 1): the key from `_meta["api-key"]` or from a form,
used by the next session in the same process; `logout` takes it away again."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess, base_env
from tests.support.zed import Editor, zed_initialize

KEY = "sk-ant-editor-given-3a9c"


@pytest.fixture
def keyless_env(tmp_path: Path, fake_api: FakeMessagesAPI) -> dict[str, str]:
    """An agent on the fake API with no key anywhere: not in its env, none stored."""
    return base_env(
        tmp_path,
        ANTHROPIC_BASE_URL=str(fake_api.base_url),
        ACP_AGENT_MODEL="claude-test-1",
        ACP_AGENT_STATE_DIR=str(tmp_path / "state"),
    )


def on_path(env: dict[str, str], streaming: bool) -> dict[str, str]:
    return {**env, "ACP_AGENT_STREAMING": "1" if streaming else "0"}


def stored_key(env: dict[str, str]) -> Path:
    return Path(env["XDG_CONFIG_HOME"]) / "acp-agent" / "credentials.json"


def sent_key(fake_api: FakeMessagesAPI) -> str:
    headers = fake_api.requests[-1].headers
    return headers.get("x-api-key", "") + headers.get("authorization", "")


async def new_session(agent: AgentProcess, cwd: Path) -> dict[str, Any]:
    return await agent.request("session/new", {"cwd": str(cwd), "mcpServers": []})


async def test_login_through_the_form_then_a_prompt_carries_that_key_and_logout_ends_it(
    keyless_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, streaming: bool
) -> None:
    editor = Editor({"action": "accept", "content": {"apiKey": f"  {KEY}\n"}})
    fake_api.script(replies.text("logged in"))
    env = on_path(keyless_env, streaming)
    async with AgentProcess.start(env=env, schema=acp_schema, on_request=editor) as agent:
        init = await zed_initialize(agent)
        refused = await new_session(agent, workspace)
        login = await agent.request("authenticate", {"methodId": "login"})
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "hi")
        logout = await agent.request("logout", {})
        after = await new_session(agent, workspace)
    assert init["agentCapabilities"]["auth"] == {"logout": {}}
    assert refused["error"]["code"] == -32000
    assert login == {"jsonrpc": "2.0", "id": login["id"], "result": {}}
    [form] = editor.forms
    assert form["mode"] == "form" and form["requestId"] == login["id"]  # scoped to authenticate
    assert form["requestedSchema"]["required"] == ["apiKey"]
    assert response["result"]["stopReason"] == "end_turn"
    assert KEY in sent_key(fake_api)
    assert logout["result"] == {}
    assert after["error"]["code"] == -32000 and "ANTHROPIC_API_KEY" in after["error"]["message"]
    assert not stored_key(keyless_env).exists()


async def test_a_key_in_meta_api_key_is_stored_privately_and_used_without_a_form(
    keyless_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, streaming: bool
) -> None:
    editor = Editor()  # would leave a form open: none may be asked for
    fake_api.script(replies.text("hello"))
    env = on_path(keyless_env, streaming)
    async with AgentProcess.start(env=env, schema=acp_schema, on_request=editor) as agent:
        init = await zed_initialize(agent)
        method = next(m for m in init["authMethods"] if "api-key" in m.get("_meta", {}))
        answer = await agent.request(
            "authenticate", {"methodId": method["id"], "_meta": {"api-key": {"apiKey": KEY}}}
        )
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "hi")
    assert method["id"] == "anthropic-api-key" and method["_meta"]["api-key"] == {"provider": "anthropic"}
    assert answer["result"] == {} and editor.forms == []
    assert response["result"]["stopReason"] == "end_turn" and KEY in sent_key(fake_api)
    path = stored_key(keyless_env)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["anthropicApiKey"] == KEY


async def test_every_advertised_method_logs_in_or_says_how_and_an_unknown_one_is_invalid(
    keyless_env: dict[str, str], acp_schema: Any
) -> None:
    editor = Editor({"action": "decline"})
    async with AgentProcess.start(env=keyless_env, schema=acp_schema, on_request=editor) as agent:
        init = await zed_initialize(agent, elicitation={"url": {}})  # no form to ask with
        answers = {
            m["id"]: await agent.request("authenticate", {"methodId": m["id"]}) for m in init["authMethods"]
        }
        unknown = await agent.request("authenticate", {"methodId": "oauth"})
        bad_key = await agent.request(
            "authenticate", {"methodId": "anthropic-api-key", "_meta": {"api-key": {"apiKey": "two words"}}}
        )
    async with AgentProcess.start(env=keyless_env, schema=acp_schema, on_request=editor) as agent:
        await zed_initialize(agent)
        declined = await agent.request("authenticate", {"methodId": "anthropic-api-key"})
    assert set(answers) == {"anthropic-api-key", "login"}
    for answer in answers.values():
        assert answer["error"]["code"] == -32000
        assert "ANTHROPIC_API_KEY" in answer["error"]["message"]
        assert "acp-agent login" in answer["error"]["message"]
    assert editor.forms and editor.forms[0]["requestedSchema"]["properties"]["apiKey"]["type"] == "string"
    assert declined["error"]["code"] == -32000
    assert unknown["error"]["code"] == -32602
    assert bad_key["error"]["code"] == -32602 and "two words" not in json.dumps(bad_key)


async def test_a_key_form_answered_outside_its_schema_logs_nobody_in(
    keyless_env: dict[str, str], acp_schema: Any
) -> None:
    outside = [
        {"action": ["accept"], "content": {"apiKey": KEY}},  # an action that is a list
        {"action": "accept", "content": {"apiKey": KEY, "admin": True}},  # a field the form lacks
        {"action": "accept", "content": {"apiKey": "sk-" + "k" * 2_000_000}},  # past every cap
        {"action": "accept", "content": {"apiKey": ["sk-ant-in-a-list"]}},
    ]
    editor = Editor(*outside)
    async with AgentProcess.start(env=keyless_env, schema=acp_schema, on_request=editor) as agent:
        await zed_initialize(agent)
        answers = [await agent.request("authenticate", {"methodId": "login"}) for _ in outside]
        stderr = agent.stderr_text()
    assert [a["error"]["code"] for a in answers] == [-32000] * len(outside), answers
    assert len(editor.forms) == len(outside) and not stored_key(keyless_env).exists()
    assert editor.forms[0]["requestedSchema"]["properties"]["apiKey"]["maxLength"] == 1024
    assert KEY not in stderr and "kkkkkkkk" not in stderr


async def test_logout_also_forgets_the_key_the_agent_was_started_with(
    keyless_env: dict[str, str], acp_schema: Any, workspace: Path
) -> None:
    """The editor's env var cannot be unset from here: it comes back with the next start."""
    env = {**keyless_env, "ANTHROPIC_API_KEY": KEY}
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await zed_initialize(agent)
        before = await new_session(agent, workspace)
        await agent.request("logout", None)
        after = await new_session(agent, workspace)
    assert "result" in before
    assert after["error"]["code"] == -32000


async def test_a_key_the_api_refuses_makes_the_next_authenticate_ask_for_another(
    keyless_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """Zed answers a turn's `auth_required` with `authenticate`: having a key is then not enough."""
    editor = Editor({"action": "accept", "content": {"apiKey": KEY}})
    fake_api.script(replies.error(401, "authentication_error", "invalid x-api-key"), replies.text("better"))
    env = {**keyless_env, "ANTHROPIC_API_KEY": "sk-ant-revoked"}
    async with AgentProcess.start(env=env, schema=acp_schema, on_request=editor) as agent:
        await zed_initialize(agent)
        session = await agent.new_session(workspace)
        refused = await agent.prompt(session, "hi")
        login = await agent.request("authenticate", {"methodId": "login"})
        again = await agent.prompt(session, "hi again")
    assert refused["error"]["code"] == -32000
    assert login["result"] == {} and len(editor.forms) == 1
    assert again["result"]["stopReason"] == "end_turn" and KEY in sent_key(fake_api)
