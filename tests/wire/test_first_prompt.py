"""A prompt sent at once after `session/new` never waits for the Models API question.

The agent asks `GET /v1/models` once, in the background. Here the fake holds that question until the
prompt's Messages request has arrived: an agent that waited for the question would stall until the
hold gives up (20 s).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from acp_agent.testing.recorded import RecordedRequest
from tests.support.agent import AgentProcess
from tests.support.waits import wait_until


def watch_arrivals(
    fake_api: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch, *, hold: bool = True
) -> list[str]:
    """Record what reaches the fake, in order; hold `/v1/models` until a Messages request came."""
    arrivals: list[str] = []
    messages_came = threading.Event()
    receive = fake_api.receive

    def held(request: RecordedRequest) -> Any:
        path = request.path.split("?", 1)[0]
        arrivals.append(f"{request.method} {path}")
        if path == "/v1/models" and hold:
            messages_came.wait(20)
        elif path == "/v1/messages":
            messages_came.set()
        return receive(request)

    monkeypatch.setattr(fake_api, "receive", held)
    return arrivals


async def asked(arrivals: list[str]) -> bool:
    """Once the Models API question has reached the fake (True), or a hang guard failed the test."""
    return await wait_until(lambda: "GET /v1/models" in arrivals, "the Models API question")


async def test_a_prompt_sent_at_once_never_waits_for_the_models_api_question(
    agent_env: dict[str, str],
    acp_schema: Any,
    workspace: Path,
    fake_api: FakeMessagesAPI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    arrivals = watch_arrivals(fake_api, monkeypatch)
    fake_api.script(replies.text("Hello there."))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        # In one write, as an editor opening a session at start-up does: the warm-up (started by
        # `initialize`) is then still building the model client when the prompt arrives. A test
        # that paused between the two (a loaded box) would let the warm-up finish first, and the
        # question rightly go out at once, with no prompt waiting (the test below).
        requests = [
            ("hello", "initialize", {"protocolVersion": 1}),
            ("open", "session/new", {"cwd": str(workspace), "mcpServers": []}),
        ]
        for id_, _, _ in requests:
            agent._inbox.expect(id_)
        await agent.send_raw(
            "".join(
                json.dumps({"jsonrpc": "2.0", "id": i, "method": m, "params": p}) + "\n"
                for i, m, p in requests
            )
        )
        assert "result" in await agent.response("hello"), agent.messages
        session = (await agent.response("open"))["result"]["sessionId"]
        with anyio.fail_after(15):  # far below the 20 s hold: it never waited for the question
            response = await agent.prompt(session, "hi")
        still_asked = await asked(arrivals)
    assert response["result"]["stopReason"] == "end_turn"
    # Which of the two reaches the fake first is not asserted: a test stalled between session/new's
    # answer and its prompt (a loaded box) lets the warm-up build the client first, and then the
    # question rightly goes out at once. The hold above is what shows the prompt never waits for it.
    assert still_asked, arrivals  # once the API has begun to answer, the question goes out


@pytest.mark.model_free
async def test_with_no_prompt_the_models_api_is_asked_at_once(
    agent_env: dict[str, str],
    acp_schema: Any,
    workspace: Path,
    fake_api: FakeMessagesAPI,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    arrivals = watch_arrivals(fake_api, monkeypatch, hold=False)
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        await agent.new_session(workspace)
        still_asked = await asked(arrivals)
    assert still_asked and arrivals == ["GET /v1/models"]
