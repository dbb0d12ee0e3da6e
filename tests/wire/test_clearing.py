"""A long session's old tool results leave what it sends (issue 28, docs/decisions.md D28), on the
strict fake as Sonnet 5.5 with its thinking blocks: the fake bills the cache markers it receives and
answers 400 to a thinking block replayed behind a changed prefix, as the API does.

The session's trigger is set low through `_meta` (8,000 tokens, keep 2,000): five reads of 6 KB
files pass it. Every reply carries a thinking block, which the API wants back with the results of
its tool calls, so the clearing waits for the turn's end: the next prompt's first request carries
the four oldest results as notes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from acp_agent.testing.prompt_cache import canonical
from tests.support.agent import AgentProcess
from tests.wire.conftest import chunks

SONNET = "claude-sonnet-5-5"
META = {"acp-agent": {"clearResultsAt": 8_000, "clearResultsKeep": 2_000}}
NOTE = (
    "[cleared to save context: the result of read_file data/part{n}.txt ({kb} KB); "
    "read it again if you need it]"
)


@pytest.fixture
def sonnet_env(agent_env: dict[str, str]) -> dict[str, str]:
    return {**agent_env, "ACP_AGENT_MODEL": SONNET}


def parts(workspace: Path, count: int = 6) -> dict[int, str]:
    """data/part1.txt … of 6,000 characters each, every one ending with its own last line."""
    (workspace / "data").mkdir()
    texts = {}
    for n in range(1, count + 1):
        line = f"part {n}: lorem ipsum dolor sit amet, consectetur adipiscing elit\n"
        text = line * (5_980 // len(line)) + f"END OF PART {n}\n"
        (workspace / "data" / f"part{n}.txt").write_text(text)
        texts[n] = text
    return texts


def noted(note: str, n: int) -> replies.Message:
    """A 5.5 reply between tool calls: its note comes back as a thinking block, then the call."""
    return replies.message(
        [
            replies.thinking_block(note, "unsigned"),
            replies.tool_use_block("read_file", {"path": f"data/part{n}.txt"}),
        ],
        stop_reason="tool_use",
        usage=(0, 40),
    )


def answer(text: str) -> replies.Message:
    return replies.message(
        [replies.thinking_block("Done.", "unsigned"), replies.text_block(text)], usage=(0, 30)
    )


SCRIPT = [
    *(noted(f"Reading part {n}.", n) for n in range(1, 6)),
    answer("All five read."),  # past the trigger, but this turn's thinking must come back whole
    noted("One more.", 6),  # the next prompt's first request: the one that clears
    answer("Six read."),
]


def this_cycle_has_its_thinking(body: dict[str, Any]) -> bool:
    """Every reply since the last user message without a tool result (each of this script's
    replies has a thinking block) is sent with its thinking."""
    messages = body["messages"]
    start = max(
        i
        for i, m in enumerate(messages)
        if m["role"] == "user" and not any(b["type"] == "tool_result" for b in m["content"])
    )
    return all(
        m["content"][0]["type"] == "thinking" for m in messages[start + 1 :] if m["role"] == "assistant"
    )


def cleared_in(body: dict[str, Any]) -> list[str]:
    """The notes a request carried in place of results."""
    return [
        b["content"]
        for m in body["messages"]
        if m["role"] == "user"
        for b in m["content"]
        if b["type"] == "tool_result" and str(b["content"]).startswith("[cleared")
    ]


def sent(text: str) -> str:
    """`text` as it appears inside a JSON document."""
    return json.dumps(text)[1:-1]


def prompt_tokens(usage: dict[str, Any]) -> int:
    return usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]


async def read_six(agent: AgentProcess, workspace: Path) -> str:
    session = await agent.new_session(workspace, META)
    first = await agent.prompt(session, "Read data/part1.txt to part5.txt, one by one.")
    second = await agent.prompt(session, "And part6?")
    assert first["result"]["stopReason"] == second["result"]["stopReason"] == "end_turn", (first, second)
    return session


async def test_old_results_become_notes_that_name_the_file_and_the_cache_is_written_once_then_read(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    texts = parts(workspace)
    fake_api.script(*SCRIPT)
    async with AgentProcess.start(env=sonnet_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await read_six(agent, workspace)
        await agent.prompt(session, "/status")
        status = "".join(c["content"]["text"] for c in chunks(agent, session))
    # Thinking in every reply, a clearing between two turns: the strict fake refused nothing, and
    # every reply of the current tool-use cycle went back with its thinking.
    assert fake_api.attempts == len(fake_api.served) == 8
    bodies = [r.body for r in fake_api.requests]
    assert all(this_cycle_has_its_thinking(b) for b in bodies)
    assert [len(cleared_in(b)) for b in bodies] == [0, 0, 0, 0, 0, 0, 4, 4]
    kb = f"{len(texts[1]) / 1000:.1f}"
    assert cleared_in(bodies[6]) == [NOTE.format(n=n, kb=kb) for n in range(1, 5)]
    assert sent(texts[5]) in json.dumps(bodies[6]) and sent(texts[6]) in json.dumps(bodies[7])  # kept whole
    # The thinking of the replies after the first cleared result left with it; later thinking stays.
    thoughts = [
        [b["thinking"] for m in body["messages"] for b in m["content"] if b["type"] == "thinking"]
        for body in bodies
    ]
    assert thoughts[5] == [f"Reading part {n}." for n in range(1, 6)]
    assert thoughts[6] == ["Reading part 1."] and thoughts[7] == ["Reading part 1.", "One more."]
    # The cache: the clearing request writes what follows the tools and system once; the next reads it.
    usages = [s.usage for s in fake_api.served]
    assert all(u is not None for u in usages)
    before, clearing, after = usages[5], usages[6], usages[7]
    assert before["cache_read_input_tokens"] > 0.8 * prompt_tokens(before)
    assert clearing["cache_read_input_tokens"] < 3_500  # tools and system only
    assert clearing["cache_creation_input_tokens"] > 1_500 and clearing["input_tokens"] == 0  # the rest
    assert after["cache_read_input_tokens"] >= prompt_tokens(clearing) - 100
    assert prompt_tokens(clearing) < prompt_tokens(before) - 4_000
    # The cleared prefix stays the same bytes until the next clearing.
    assert canonical(bodies[7]["messages"][: len(bodies[6]["messages"])]) == canonical(bodies[6]["messages"])
    assert "Old tool results cleared from requests: 4 old tool result(s) in 1 step(s)" in status
    assert f"{4 * len(texts[1]) / 1000:,.1f} KB of text" in status


async def test_the_journal_keeps_the_results_load_replays_them_whole_and_sends_the_same_requests(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    texts = parts(workspace)
    fake_api.script(*SCRIPT, answer("Back."))
    async with AgentProcess.start(env=sonnet_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await read_six(agent, workspace)
    journal = [
        json.loads(line) for line in (tmp_path / "state" / f"{session}.jsonl").read_text().splitlines()
    ]
    results = {
        e["block"]["tool_use_id"]: e["block"]["content"] for e in journal if e["type"] == "tool_result"
    }
    assert all(any(text in str(content) for content in results.values()) for text in texts.values())
    [clearing] = [e for e in journal if e["type"] == "clearing"]
    assert [r[1] for r in clearing["results"]] == cleared_in(fake_api.requests[6].body)
    async with AgentProcess.start(env=sonnet_env, schema=acp_schema) as agent:
        await agent.initialize()
        loaded = await agent.request(
            "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": [], "_meta": META}
        )
        assert "result" in loaded, loaded
        replayed = json.dumps([u["update"] for u in agent.updates(session)])
        response = await agent.prompt(session, "Still there?")
    assert response["result"]["stopReason"] == "end_turn", response
    for n in range(1, 7):  # the editor gets every result whole, the cleared ones too
        assert sent(texts[n]) in replayed, n
    # The first request after the load carries the same notes and the same bytes: a cache read.
    last, after = fake_api.requests[7].body, fake_api.requests[8].body
    assert fake_api.attempts == len(fake_api.served) == 9
    assert canonical(after["messages"][: len(last["messages"])]) == canonical(last["messages"])
    assert cleared_in(after) == cleared_in(last)
    usage = fake_api.served[8].usage
    assert usage is not None and usage["cache_read_input_tokens"] >= 0.9 * prompt_tokens(usage)


async def test_a_short_session_is_never_cleared(
    sonnet_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """At the defaults (100,000 tokens), 19 reads of 6 KB and a follow-up send every result whole."""
    parts(workspace, 19)
    fake_api.script(
        *(noted(f"Reading part {n}.", n) for n in range(1, 20)), answer("All read."), answer("Nothing else.")
    )
    async with AgentProcess.start(env=sonnet_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        assert (await agent.prompt(session, "Read all 19 parts."))["result"]["stopReason"] == "end_turn"
        assert (await agent.prompt(session, "Anything else?"))["result"]["stopReason"] == "end_turn"
        await agent.prompt(session, "/status")
        status = "".join(c["content"]["text"] for c in chunks(agent, session))
    assert len(fake_api.requests) == 21
    assert not any("[cleared" in json.dumps(r.body) for r in fake_api.requests)
    assert "END OF PART 1" in json.dumps(fake_api.requests[-1].body)
    assert (
        "Old tool results cleared from requests: nothing yet (clearing: when a request passes 100,000"
        in status
    )


@pytest.mark.model_free
async def test_a_bad_clearing_setting_in_meta_is_refused_naming_it(
    agent: AgentProcess, workspace: Path
) -> None:
    response = await agent.request(
        "session/new",
        {"cwd": str(workspace), "mcpServers": [], "_meta": {"acp-agent": {"clearResultsAt": -5}}},
    )
    assert response["error"]["code"] == -32602 and "clearResultsAt" in response["error"]["message"]
