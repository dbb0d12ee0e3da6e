"""The Models API is not trusted: bad figures are ignored, listings are read within caps, and the
model choices shown are capped (issue 29, item 12).

The fake serves the hostile answers (`ModelsListing`, `model_info`); the agent asks it once, in the
background, after the first `session/new`, and logs `models.listed` when it is done.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from acp_agent.model.models_listing import MAX_BYTES, MAX_PAGES
from acp_agent.session.options.catalog import MAX_MODEL_CHOICES
from acp_agent.testing import FakeMessagesAPI, ModelsListing, replies
from tests.support import base_env
from tests.support.agent import AgentProcess
from tests.support.waits import wait_until
from tests.wire.conftest import chunks

MODEL = "claude-test-1"


@contextmanager
def hostile_api(
    tmp_path: Path, streaming: bool = True, **fake: Any
) -> Iterator[tuple[FakeMessagesAPI, dict]]:
    with FakeMessagesAPI(**fake) as api:
        env = base_env(
            tmp_path,
            ANTHROPIC_API_KEY="test-key",
            ANTHROPIC_BASE_URL=api.base_url,
            ACP_AGENT_MODEL=MODEL,
            ACP_AGENT_STREAMING="1" if streaming else "0",
            ACP_AGENT_STATE_DIR=str(tmp_path / "state"),
        )
        yield api, env


async def listed(agent: AgentProcess, timeout: float = 30) -> str:
    """Wait until the agent has read the Models API (or given up on it); its stderr so far.

    The line waited for is the listing's last act: every page it asked for has been asked by then,
    and nothing is asked later (the Models API is asked once per process)."""

    def ended() -> str | None:
        text = agent.stderr_text()
        return text if "models.listed" in text or "models.unavailable" in text else None

    return await wait_until(ended, "the Models API's listing to end", timeout=timeout)


def gets(api: FakeMessagesAPI) -> int:
    return sum(1 for r in api.other_requests if r.path.startswith("/v1/models"))


def model_choices(answer: dict[str, Any]) -> tuple[str, list[str]]:
    option = next(o for o in answer["result"]["configOptions"] if o["id"] == "model")
    return option["currentValue"], [c["value"] for c in option["options"]]


@pytest.mark.parametrize("bad", [0, -1])
async def test_a_bad_max_tokens_or_window_from_the_models_api_is_ignored(
    tmp_path: Path, acp_schema: Any, workspace: Path, streaming: bool, bad: Any
) -> None:
    info = {MODEL: {"max_tokens": bad, "max_input_tokens": bad}}
    with hostile_api(tmp_path, streaming, model_info=info) as (api, env):
        api.script(replies.text("fine"))
        async with AgentProcess.start(env=env, schema=acp_schema) as agent:
            await agent.initialize()
            await agent.new_session(workspace)
            log = await listed(agent)
            session = await agent.new_session(workspace)  # made after the listing: uses it
            response = await agent.prompt(session, "hello")
            status = await agent.prompt(session, "/status")
            shown = "".join(c["content"]["text"] for c in chunks(agent, session))
    assert response["result"]["stopReason"] == "end_turn", response
    assert status["result"]["stopReason"] == "end_turn"
    assert api.requests[0].body["max_tokens"] == 16_000  # the configured figure, not the API's
    assert "of 200,000 tokens" in shown  # the window of an unknown model, not the API's
    assert "models.figures_ignored" in log and "max_tokens" in log


async def test_100k_listed_models_give_a_small_session_new_answer_with_50_choices(
    tmp_path: Path, acp_schema: Any, workspace: Path
) -> None:
    models = [f"gw-{i}" for i in range(100_000)]
    models[3_000] = "claude-sonnet-5-5"  # a model this agent knows: shown before the others
    models[70_000] = MODEL  # past what is read: the configured model is shown all the same
    with hostile_api(tmp_path, models=models) as (api, env):
        async with AgentProcess.start(env=env, schema=acp_schema) as agent:
            await agent.initialize()
            await agent.new_session(workspace)
            await listed(agent)
            answer = await agent.request("session/new", {"cwd": str(workspace), "mcpServers": []})
            session = answer["result"]["sessionId"]
            chosen = await agent.request(
                "session/set_config_option", {"sessionId": session, "configId": "model", "value": "gw-1"}
            )
            hidden = await agent.request(
                "session/set_config_option", {"sessionId": session, "configId": "model", "value": "gw-4000"}
            )
    current, choices = model_choices(answer)
    assert len(json.dumps(answer)) < 20_000
    assert len(choices) == MAX_MODEL_CHOICES
    assert current == MODEL
    assert choices[:3] == [MODEL, "claude-sonnet-5-5", "gw-0"]
    assert choices[-1] == f"gw-{MAX_MODEL_CHOICES - 3}"
    current, choices = model_choices(chosen)
    assert current == "gw-1" and len(choices) == MAX_MODEL_CHOICES and MODEL in choices
    assert hidden["error"]["code"] == -32602  # only what is offered can be chosen
    assert len(hidden["error"]["message"]) < 5_000
    assert gets(api) == MAX_PAGES


async def test_an_endless_listing_is_read_for_a_few_pages_only(
    tmp_path: Path, acp_schema: Any, workspace: Path
) -> None:
    with hostile_api(tmp_path, models_listing=ModelsListing(endless=True)) as (api, env):
        async with AgentProcess.start(env=env, schema=acp_schema) as agent:
            await agent.initialize()
            await agent.new_session(workspace)
            log = await listed(agent)
            answer = await agent.request("session/new", {"cwd": str(workspace), "mcpServers": []})
    assert gets(api) == api.models_listing.pages_served == MAX_PAGES
    assert "models.capped" in log and f"more than {MAX_PAGES} pages" in log
    assert len(model_choices(answer)[1]) == MAX_MODEL_CHOICES


async def test_endless_padded_pages_stop_at_the_byte_cap(
    tmp_path: Path, acp_schema: Any, workspace: Path
) -> None:
    padding = 1_500_000
    listing = ModelsListing(endless=True, page_padding=padding)
    with hostile_api(tmp_path, models_listing=listing) as (api, env):
        async with AgentProcess.start(env=env, schema=acp_schema) as agent:
            await agent.initialize()
            await agent.new_session(workspace)
            log = await listed(agent)
    assert gets(api) == MAX_BYTES // padding + 1 < MAX_PAGES  # the third page crosses 4 MiB
    assert "models.capped" in log and f"more than {MAX_BYTES} bytes" in log


async def test_one_huge_page_is_not_read_past_the_byte_cap(
    tmp_path: Path, acp_schema: Any, workspace: Path
) -> None:
    size = 48 * 1024 * 1024
    with hostile_api(tmp_path, models_listing=ModelsListing(page_padding=size)) as (api, env):
        async with AgentProcess.start(env=env, schema=acp_schema) as agent:
            await agent.initialize()
            await agent.new_session(workspace)
            log = await listed(agent)
            session = await agent.new_session(workspace)
        assert session
    assert gets(api) == 1
    assert "models.capped" in log
    # What the socket buffers hold is sent too (a few MB on loopback), never the whole page.
    assert api.models_listing.bytes_sent < size // 2
