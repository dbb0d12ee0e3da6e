"""What an editor may attach (issue 24 item 6): an embedded PDF reaches the API as a `document`
block, for a model that reads PDFs (else -32602 names the model, before any request); a text blob
is decoded; any other blob is refused naming its type."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.zed import zed_initialize

PDF = b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def blob(data: bytes, mime_type: str | None, uri: str = "file:///tmp/attached") -> dict[str, Any]:
    resource: dict[str, Any] = {"uri": uri, "blob": b64(data)}
    if mime_type is not None:
        resource["mimeType"] = mime_type
    return {"type": "resource", "resource": resource}


def asked(text: str, *attached: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}, *attached]


async def test_a_pdf_reaches_the_api_as_a_document_block(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    env = {**agent_env, "ACP_AGENT_MODEL": "claude-sonnet-5-5"}  # a model that reads PDFs, strict fake
    fake_api.script(replies.text("It is a one-page PDF."))
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await zed_initialize(agent)
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, asked("What is in this?", blob(PDF, "application/pdf")))
        replayed_from = len(agent.messages)
        await agent.request("session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []})
        replayed = [
            m["params"]["update"]
            for m in agent.messages[replayed_from:]
            if m.get("method") == "session/update"
        ]
    assert response["result"]["stopReason"] == "end_turn", response
    [prompt] = fake_api.requests[0].plain_body["messages"]
    assert prompt["content"] == [
        {"type": "text", "text": "What is in this?"},
        {
            "type": "document",
            "source": {
                "type": "base64",
                "media_type": "application/pdf",
                "data": base64.b64encode(PDF).decode(),
            },
        },
    ]
    # The editor gets its own attachment back on load, as it sent it.
    shown = [u["content"] for u in replayed if u["sessionUpdate"] == "user_message_chunk"]
    assert shown[1]["resource"]["mimeType"] == "application/pdf"


async def test_a_text_blob_is_decoded_and_reaches_the_model_as_text(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.text("ok"))
    config = '{"name": "démo", "port": 8080}\n'.encode()
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await zed_initialize(agent)
        session = await agent.new_session(workspace)
        response = await agent.prompt(
            session,
            asked(
                "Check these",
                blob(config, "application/json", "file:///w/config.json"),
                blob(b"print('hi')\n", "text/x-python; charset=utf-8", "file:///w/hi.py"),
            ),
        )
    assert response["result"]["stopReason"] == "end_turn", response
    [prompt] = fake_api.requests[0].plain_body["messages"]
    assert prompt["content"][1:] == [
        {"type": "text", "text": f'<resource uri="file:///w/config.json">\n{config.decode()}\n</resource>'},
        {"type": "text", "text": "<resource uri=\"file:///w/hi.py\">\nprint('hi')\n\n</resource>"},
    ]


@pytest.mark.model_free
async def test_blobs_the_agent_cannot_pass_on_are_refused_before_any_request(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await zed_initialize(agent)
        session = await agent.new_session(workspace)
        pdf = await agent.prompt(session, asked("read", blob(PDF, "application/pdf")))
        zipped = await agent.prompt(session, asked("unpack", blob(b"PK\x03\x04rest", "application/zip")))
        untyped = await agent.prompt(session, asked("what", blob(b"\x00\x01", None)))
        latin1 = await agent.prompt(session, asked("read", blob("café".encode("latin-1"), "text/plain")))
        fake = await agent.prompt(session, asked("read", blob(b"not a pdf", "application/pdf")))
    # claude-test-1 is no model the agent knows reads PDFs: the model is named
    assert pdf["error"]["code"] == -32602
    assert "claude-test-1 does not read PDFs" in pdf["error"]["message"]
    assert zipped["error"]["code"] == -32602 and "application/zip" in zipped["error"]["message"]
    assert untyped["error"]["code"] == -32602 and "without a mimeType" in untyped["error"]["message"]
    assert latin1["error"]["code"] == -32602 and "text/plain data is not UTF-8" in latin1["error"]["message"]
    assert fake["error"]["code"] == -32602  # still no PDF reader: refused for the model first
    assert fake_api.attempts == 0
