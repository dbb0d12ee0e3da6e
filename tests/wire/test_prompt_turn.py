"""A prompt turn end to end, on both model paths: relay, stop reasons, history, usage."""

from __future__ import annotations

import base64
from pathlib import Path

import anyio
import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.images import png as real_png
from tests.wire.conftest import chunks, turn_record

TEXT = 'Hello there! Here is a longer answer, streamed in pieces: ünïcødé ✓ and "quotes"\nnewline.'


async def test_plain_answer_ends_the_turn_with_end_turn(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, streaming: bool
) -> None:
    fake_api.script(replies.text(TEXT, chunks=7))
    response = await agent.prompt(session, "hi")
    assert response["result"]["stopReason"] == "end_turn"
    record = turn_record(response)
    assert record["modelRequests"] == 1
    assert record["streaming"] is streaming
    assert record["stopReason"] == "end_turn"
    assert record["inputTokens"] == 10 and record["outputTokens"] == 5
    assert fake_api.requests[0].is_stream is streaming


async def test_streamed_text_is_never_doubled(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, streaming: bool
) -> None:
    fake_api.script(replies.text(TEXT, chunks=12))
    await agent.prompt(session, "hi")
    message_chunks = chunks(agent, session)
    assert "".join(c["content"]["text"] for c in message_chunks) == TEXT
    assert len({c["messageId"] for c in message_chunks}) == 1
    if streaming:
        assert len(message_chunks) == 12


async def test_every_update_goes_out_before_the_prompt_response(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.tool_use("list_files", {}), replies.text("done", chunks=3))
    response = await agent.prompt(session, "hi")
    await agent.close_stdin()  # once it has exited, the agent has written all it ever will
    assert await agent.wait_exit(timeout=10) == 0
    position = agent.messages.index(response)
    late = [m for m in agent.messages[position + 1 :] if m.get("method") == "session/update"]
    assert late == []


async def test_model_stop_reasons_map_to_acp(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    cases = [
        ("end_turn", "end_turn"),
        ("stop_sequence", "end_turn"),
        ("max_tokens", "max_tokens"),
        ("model_context_window_exceeded", "max_tokens"),
        ("refusal", "refusal"),
    ]
    for model_stop, acp_stop in cases:
        fake_api.script(replies.text("x", stop_reason=model_stop))
        response = await agent.prompt(session, "go")
        assert response["result"]["stopReason"] == acp_stop, model_stop
        assert turn_record(response)["modelStopReason"] == model_stop


async def test_pause_turn_is_a_counted_continuation(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.text("part one ", stop_reason="pause_turn"), replies.text("part two"))
    response = await agent.prompt(session, "go")
    record = turn_record(response)
    assert response["result"]["stopReason"] == "end_turn"
    assert record["modelRequests"] == 2 and record["continuations"] == 1
    ids = {c["messageId"] for c in chunks(agent, session)}
    assert len(ids) == 2  # a continuation is a new response with a new messageId


async def test_a_refusal_drops_that_prompt_from_the_next_request(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        replies.text("first answer"), replies.text("no", stop_reason="refusal"), replies.text("third answer")
    )
    await agent.prompt(session, "first prompt")
    refused = await agent.prompt(session, "refused prompt")
    assert refused["result"]["stopReason"] == "refusal"
    await agent.prompt(session, "third prompt")
    sent = fake_api.requests[-1].body["messages"]
    texts = [b.get("text") for m in sent for b in m["content"] if isinstance(b, dict)]
    assert "refused prompt" not in texts and "no" not in texts
    assert texts == ["first prompt", "first answer", "third prompt"]


async def test_a_reply_without_stop_reason_is_an_error_not_success(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.text("cut", stop_reason=None), replies.text("recovered"))
    response = await agent.prompt(session, "go")
    assert "error" in response, response
    assert response["error"]["code"] == -32603
    assert response["error"]["data"]["acp-agent"]["turn"]["modelRequests"] == 1
    again = await agent.prompt(session, "again")
    assert again["result"]["stopReason"] == "end_turn"


async def test_links_resources_and_images_reach_the_model(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    fake_api.script(replies.text("seen"))
    png = base64.b64encode(real_png(2, 2)).decode()
    response = await agent.prompt(
        session,
        [
            {"type": "text", "text": "look"},
            {
                "type": "resource_link",
                "uri": f"file://{workspace}/README.md",
                "name": "README.md",
                "mimeType": "text/markdown",
            },
            {"type": "resource", "resource": {"uri": "file:///notes.txt", "text": "embedded body"}},
            {"type": "image", "mimeType": "image/png", "data": png},
        ],
    )
    assert response["result"]["stopReason"] == "end_turn"
    content = fake_api.requests[0].plain_body["messages"][0]["content"]
    assert content[0] == {"type": "text", "text": "look"}
    assert f"file://{workspace}/README.md" in content[1]["text"]
    assert "README.md" in content[1]["text"]
    assert "embedded body" in content[2]["text"] and "file:///notes.txt" in content[2]["text"]
    assert content[3] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": png},
    }


async def test_a_prompt_image_that_is_not_a_valid_image_is_refused_before_any_request(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    """Issue 29 item 8: sent on, the API's 400 would fail this prompt and every later one."""
    cases = [
        base64.b64encode(b"\x89PNG\r\n\x1a\n but then text").decode(),
        "not base64 at all!",
        base64.b64encode(real_png(9000, 1)).decode(),
    ]
    for data in cases:
        response = await agent.prompt(
            session, [{"type": "text", "text": "x"}, {"type": "image", "mimeType": "image/png", "data": data}]
        )
        assert response["error"]["code"] == -32602, response
        assert response["error"]["message"].startswith("Invalid params: prompt.1")
    assert fake_api.attempts == 0
    fake_api.script(replies.text("fine"))
    assert (await agent.prompt(session, "and now"))["result"]["stopReason"] == "end_turn"


@pytest.mark.model_free
async def test_unsupported_prompt_content_is_refused_before_any_request(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    blob = {
        "type": "resource",
        "resource": {"uri": "file:///a.bin", "blob": "AAAA", "mimeType": "application/octet-stream"},
    }
    response = await agent.prompt(session, [{"type": "text", "text": "x"}, blob])
    assert response["error"]["code"] == -32602
    assert "prompt.1" in response["error"]["message"]
    assert fake_api.attempts == 0


async def test_usage_update_carries_the_current_context_not_a_running_total(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        replies.tool_use("list_files", {}, usage=(1000, 20)), replies.text("done", usage=(1100, 30))
    )
    await agent.prompt(session, "go")
    usage = chunks(agent, session, "usage_update")
    assert [u["used"] for u in usage] == [1020, 1130]
    assert all(u["size"] == 200_000 for u in usage)


async def test_two_sessions_prompting_at_once_do_not_cross(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    first = await agent.new_session(workspace)
    second = await agent.new_session(workspace)

    def answer(body: dict, n: int) -> replies.Message:
        prompt = body["messages"][0]["content"][0]["text"]
        return replies.text(f"answer to {prompt}", chunks=20, chunk_delay=0.01)

    fake_api.set_fallback(answer)
    results = {}

    async def run(session_id: str, text: str) -> None:
        results[session_id] = await agent.prompt(session_id, text)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, first, "one")
        tg.start_soon(run, second, "two")
    assert results[first]["result"]["stopReason"] == "end_turn"
    assert results[second]["result"]["stopReason"] == "end_turn"
    assert "".join(c["content"]["text"] for c in chunks(agent, first)) == "answer to one"
    assert "".join(c["content"]["text"] for c in chunks(agent, second)) == "answer to two"
