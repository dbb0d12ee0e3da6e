"""Bad input of every kind is answered, and the agent goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.agent import AgentProcess


@pytest.mark.model_free
@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"{not json", -32700),
        (b"\xff\xfe\x00garbage", -32700),
        (b"[]", -32600),
        (b"42", -32600),
        (b'{"jsonrpc":"2.0"}', -32600),
        (b'[{"jsonrpc":"2.0","id":1,"method":"initialize"}]', -32600),
        (b'{"jsonrpc":"1.0","id":9999,"method":"initialize"}', -32600),
    ],
)
async def test_malformed_lines_are_answered_with_null_id_and_the_agent_goes_on(
    agent: AgentProcess, line: bytes, code: int
) -> None:
    start = len(agent.messages)
    await agent.send_raw(line + b"\n")
    error = await agent.wait_for(lambda m: "error" in m, since=start)
    assert error["error"]["code"] == code
    if code == -32700:
        assert error["id"] is None
    result = await agent.initialize()
    assert result["protocolVersion"] == 1


@pytest.mark.model_free
@pytest.mark.parametrize("request_id", [0, "abc", -5, 2**40])
async def test_unknown_method_is_method_not_found_with_the_id_echoed(
    agent: AgentProcess, request_id: object
) -> None:
    response = await agent.request("no/such_method", {}, id=request_id)  # type: ignore[arg-type]
    assert response["id"] == request_id and type(response["id"]) is type(request_id)
    assert response["error"]["code"] == -32601


@pytest.mark.model_free
async def test_unknown_vendor_request_is_method_not_found(agent: AgentProcess) -> None:
    response = await agent.request("_vendor/x", {})
    assert response["error"]["code"] == -32601


@pytest.mark.model_free
async def test_removed_set_model_is_method_not_found(agent: AgentProcess, session: str) -> None:
    response = await agent.request("session/set_model", {"sessionId": session, "modelId": "x"})
    assert response["error"]["code"] == -32601


@pytest.mark.model_free
async def test_unknown_notifications_get_no_answer(agent: AgentProcess) -> None:
    start = len(agent.messages)
    await agent.notify("foo/bar", {"x": 1})
    await agent.notify("_x/y", {})
    await agent.notify("$/progress", {})
    await agent.initialize()
    assert len(agent.messages) == start + 1


@pytest.mark.model_free
@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"mcpServers": []}, "cwd"),
        ({"cwd": "relative/path", "mcpServers": []}, "cwd"),
        ({"cwd": "/tmp"}, "mcpServers"),
        ({"cwd": 7, "mcpServers": []}, "cwd"),
    ],
)
async def test_bad_session_new_params_name_the_field(agent: AgentProcess, params: dict, field: str) -> None:
    response = await agent.request("session/new", params)
    assert response["error"]["code"] == -32602
    assert field in response["error"]["message"]


@pytest.mark.model_free
async def test_params_that_are_not_an_object_are_invalid(agent: AgentProcess) -> None:
    response = await agent.request("session/new", ["/tmp", []])
    assert response["error"]["code"] == -32602


@pytest.mark.model_free
async def test_unknown_session_is_an_error_never_success(agent: AgentProcess) -> None:
    response = await agent.prompt("sess_nope", "hi")
    assert response["error"]["code"] == -32602
    assert "sessionId" in response["error"]["message"]


@pytest.mark.model_free
async def test_bad_prompt_content_names_the_block(agent: AgentProcess, session: str) -> None:
    response = await agent.prompt(session, [{"type": "video", "data": "x"}])
    assert response["error"]["code"] == -32602
    assert "prompt.0" in response["error"]["message"]


@pytest.mark.model_free
async def test_unknown_fields_and_meta_are_tolerated(agent: AgentProcess, workspace: Path) -> None:
    response = await agent.request(
        "session/new",
        {
            "cwd": str(workspace),
            "mcpServers": [],
            "futureField": {"a": 1},
            "_meta": {"traceparent": "00-abc-def-01"},
        },
    )
    assert isinstance(response["result"]["sessionId"], str)


async def test_a_one_mebibyte_line_is_accepted(agent: AgentProcess, session: str, fake_api: object) -> None:
    from acp_agent.testing import replies

    fake_api.script(replies.text("big"))  # type: ignore[attr-defined]
    response = await agent.prompt(session, "x" * (1024 * 1024))
    assert response["result"]["stopReason"] == "end_turn"
