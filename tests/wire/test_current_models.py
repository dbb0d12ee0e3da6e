"""Today's models as the API enforces them: Sonnet 5.5 (the default) and Opus 5.5 on the strict fake.

The fake answers 400 wherever the real API does (forced tool choice, budgets, thinking replayed
behind a changed prefix, prefill, more than 4 breakpoints), so a turn that ends `end_turn` here is
one the real API takes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_agent.model.profiles import builtin_profile
from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.waits import wait_until
from tests.wire.conftest import chunks, turn_record

SONNET = "claude-sonnet-5-5"
OPUS = "claude-opus-5-5"


@pytest.fixture
def sonnet_env(agent_env: dict[str, str]) -> dict[str, str]:
    return {**agent_env, "ACP_AGENT_MODEL": SONNET}


def noted(text: str, name: str, args: dict[str, Any]) -> replies.Message:
    """A 5.x reply between tool calls: the note comes back as a thinking block, then the call."""
    return replies.message(
        [replies.thinking_block(text, "unsigned", chunks=2), replies.tool_use_block(name, args)],
        stop_reason="tool_use",
        usage=(0, 40),
    )


def answer(text: str) -> replies.Message:
    return replies.message(
        [replies.thinking_block("Wrapping up.", "unsigned"), replies.text_block(text)], usage=(0, 30)
    )


def priced(usage: dict[str, Any]) -> float:
    """Sonnet 5.5: $2 in, $10 out, $0.10 cache read, $2.50 cache write (5 min), per million."""
    return (
        usage["input_tokens"] * 2
        + usage["output_tokens"] * 10
        + usage["cache_read_input_tokens"] * 0.10
        + usage["cache_creation_input_tokens"] * 2.50
    ) / 1_000_000


async def test_sonnet_55_tool_loop_follow_up_compact_and_after_all_end_turn(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        noted("Let me look at the files first.", "list_files", {}),
        noted("Now the greeting code.", "read_file", {"path": "src/app.py"}),
        answer("It greets by name."),
        answer("Yes, it returns a string."),
        answer("Nothing else to add."),
        replies.text("SUMMARY: the user asked about src/app.py", usage=(0, 20)),  # /compact
        noted("Checking the notes again.", "read_file", {"path": "notes.txt"}),
        answer("alpha, beta, gamma."),
    )
    async with AgentProcess.start(env=sonnet_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        first = await agent.prompt(session, "What does src/app.py do?")
        follow = [await agent.prompt(session, text) for text in ("Does it return?", "Anything else?")]
        compacted = await agent.prompt(session, "/compact")
        after = await agent.prompt(session, "And notes.txt?")
        updates = agent.updates(session)
    for response in (first, *follow, compacted, after):
        assert "error" not in response, response
        assert response["result"]["stopReason"] == "end_turn"
    assert not [s for s in fake_api.requests if s.body.get("model") != SONNET]
    assert fake_api.attempts == len(fake_api.served) == 8  # no 400 anywhere
    for request in fake_api.requests:
        assert request.body["thinking"] == {"type": "adaptive", "display": "summarized"}
        assert "tool_choice" not in request.body and "temperature" not in request.body
        assert request.body["messages"][-1]["role"] == "user"  # never a prefill
    summary = fake_api.requests[5].body
    assert [t["name"] for t in summary["tools"]] == [
        t["name"] for t in fake_api.requests[0].body["tools"]
    ]  # the session's own prefix
    # The model's notes between tool calls reach the editor as thoughts.
    thoughts = "".join(
        u["update"]["content"]["text"]
        for u in updates
        if u["update"]["sessionUpdate"] == "agent_thought_chunk"
    )
    assert "Let me look at the files first." in thoughts and "Now the greeting code." in thoughts
    sizes = {u["update"]["size"] for u in updates if u["update"]["sessionUpdate"] == "usage_update"}
    assert sizes == {1_000_000}
    assert "SUMMARY" in json.dumps(fake_api.requests[6].body["messages"][0])


async def test_sonnet_55_cost_follows_its_prices_and_the_cache_figures_are_the_fakes(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        noted("Listing.", "list_files", {}),
        noted("Reading.", "read_file", {"path": "notes.txt"}),
        answer("Done."),
    )
    async with AgentProcess.start(env=sonnet_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "Look around.")
        costs = [
            u["update"]["cost"]
            for u in agent.updates(session)
            if u["update"]["sessionUpdate"] == "usage_update"
        ]
    record = turn_record(response)
    served = [s.usage for s in fake_api.served]
    assert all(u is not None for u in served)
    assert record["cacheReadInputTokens"] == sum(u["cache_read_input_tokens"] for u in served)
    assert record["cacheCreationInputTokens"] == sum(u["cache_creation_input_tokens"] for u in served)
    assert record["inputTokens"] == sum(u["input_tokens"] for u in served)
    assert record["cacheReadInputTokens"] > 0  # the second and third requests hit the cache
    assert record["costUsd"] == pytest.approx(sum(priced(u) for u in served), abs=1e-6)
    assert record["models"] == [SONNET] * 3
    assert costs[-1] == {"amount": pytest.approx(record["costUsd"], abs=1e-6), "currency": "USD"}
    assert [c["amount"] for c in costs] == sorted(c["amount"] for c in costs)  # cumulative


async def test_a_verify_turn_with_a_model_judge_passes_on_sonnet_55(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    verdict = json.dumps({"score": 0.9, "passed": True, "feedback": "clear and correct"})
    fake_api.script(
        noted("Reading it.", "read_file", {"path": "notes.txt"}),
        answer("The notes list alpha, beta and gamma."),
        replies.message([replies.thinking_block("Judging.", "x"), replies.text_block(verdict)]),
    )
    env = {
        **sonnet_env,
        "ACP_AGENT_LOOP": "verify",
        "ACP_AGENT_VERIFY_RUBRIC": "The answer names every item in notes.txt.",
    }
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "What is in notes.txt?")
    assert "error" not in response, response
    record = turn_record(response)
    assert response["result"]["stopReason"] == "end_turn" and record["modelRequests"] == 3
    assert [t["passed"] for t in record["trials"]] == [True]
    judge = fake_api.requests[2].body
    assert judge["output_config"]["format"]["type"] == "json_schema"
    assert "tool_choice" not in judge
    assert judge["tools"] == fake_api.requests[1].body["tools"]  # no new tools: the cache holds
    assert fake_api.served[2].usage["cache_read_input_tokens"] > 0  # type: ignore[index]


def test_a_thinking_budget_is_refused_at_start_up_for_a_model_that_takes_none(tmp_path: Path) -> None:
    env = {**os.environ, "ACP_AGENT_MODEL": SONNET, "ACP_AGENT_STATE_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "acp_agent", "--thinking-budget", "4096"],
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "--effort" in done.stderr and "claude-sonnet-5-5" in done.stderr


async def test_opus_to_sonnet_mid_session_keeps_working_and_says_what_it_dropped(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        noted("Opus looks first.", "list_files", {}),
        answer("Opus answered."),
        noted("Sonnet reads.", "read_file", {"path": "notes.txt"}),
        answer("Sonnet answered."),
    )
    env = {**agent_env, "ACP_AGENT_MODEL": OPUS}
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        first = await agent.prompt(session, "Look around.")
        switched = await agent.request(
            "session/set_config_option", {"sessionId": session, "configId": "model", "value": SONNET}
        )
        second = await agent.prompt(session, "Now the notes.")
        thoughts = [c["content"]["text"] for c in chunks(agent, session, "agent_thought_chunk")]
    assert "error" not in switched, switched
    for response in (first, second):
        assert "error" not in response and response["result"]["stopReason"] == "end_turn"
    note = next(t for t in thoughts if "Switched model" in t)
    assert "2 earlier thinking block(s)" in note and "cache starts over" in note
    assert turn_record(first)["models"] == [OPUS, OPUS]
    assert turn_record(second)["models"] == [SONNET, SONNET]
    after = fake_api.requests[2].body
    assert after["model"] == SONNET and "thinking" not in json.dumps(after["messages"])
    assert builtin_profile(SONNET).reads_thinking_from(OPUS) is False


async def test_what_the_models_api_says_sets_the_window_of_an_unknown_model(
    tmp_path: Path, acp_schema: Any, workspace: Path
) -> None:
    """A gateway's model: the Models API is asked once in the background; later sessions use it."""
    from tests.support import base_env

    info = {"gw-model": {"max_input_tokens": 300_000, "max_tokens": 20_000}}
    with FakeMessagesAPI(models=["gw-model"], model_info=info) as api:
        env = base_env(
            tmp_path,
            ANTHROPIC_API_KEY="test-key",
            ANTHROPIC_BASE_URL=api.base_url,
            ACP_AGENT_MODEL="gw-model",
            ACP_AGENT_STATE_DIR=str(tmp_path / "state"),
        )
        async with AgentProcess.start(env=env, schema=acp_schema) as agent:
            await agent.initialize()
            await agent.new_session(workspace)  # the first session has the Models API asked
            await wait_until(lambda: "models.listed" in agent.stderr_text(), "the Models API's answer")
            session = await agent.new_session(workspace)  # made after the answer: uses it
            await agent.prompt(session, "/status")
            shown = "".join(c["content"]["text"] for c in chunks(agent, session))
        listed = [r for r in api.other_requests if r.path.startswith("/v1/models")]
    assert "of 300,000 tokens" in shown, shown
    assert len(listed) == 1  # asked once per process


async def test_effort_from_meta_and_the_config_option_reaches_output_config(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(answer("low effort"), answer("max effort"))
    async with AgentProcess.start(env=sonnet_env, schema=acp_schema) as agent:
        await agent.initialize()
        bad = await agent.request(
            "session/new",
            {"cwd": str(workspace), "mcpServers": [], "_meta": {"acp-agent": {"effort": "extreme"}}},
        )
        session = await agent.new_session(workspace, meta={"acp-agent": {"effort": "low"}})
        await agent.prompt(session, "quick")
        changed = await agent.request(
            "session/set_config_option", {"sessionId": session, "configId": "effort", "value": "max"}
        )
        await agent.prompt(session, "thorough")
        refused = await agent.request(
            "session/set_config_option", {"sessionId": session, "configId": "effort", "value": "extreme"}
        )
    assert bad["error"]["code"] == -32602 and "effort" in bad["error"]["message"]
    assert refused["error"]["code"] == -32602
    option = next(o for o in changed["result"]["configOptions"] if o["id"] == "effort")
    assert option["currentValue"] == "max"
    assert [r.body.get("output_config") for r in fake_api.requests] == [{"effort": "low"}, {"effort": "max"}]
