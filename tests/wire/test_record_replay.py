"""A turn recorded against the loopback API replays to the same ACP updates and turn record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess, base_env
from tests.wire.conftest import turn_record

VOLATILE = {"turnId", "durationMs", "modelDurationMs", "streaming"}


def normalised(agent: AgentProcess, session: str) -> list[dict[str, Any]]:
    """The session's updates without what is fresh per run: message ids and update times. The
    commands announcement comes first: it follows session/new on its own, so it may arrive before
    or after the first prompt's title (a stable sort keeps the turn's order)."""
    out = [
        {k: v for k, v in params["update"].items() if k not in {"messageId", "updatedAt"}}
        for params in agent.updates(session)
    ]
    return sorted(out, key=lambda update: update["sessionUpdate"] != "available_commands_update")


def text_of(updates: list[dict[str, Any]]) -> str:
    return "".join(u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk")


def tool_updates(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionUpdate"] in {"tool_call", "tool_call_update", "plan"}]


async def run_turn(
    args: list[str], env: dict[str, str], workspace: Path, schema: Any
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    async with AgentProcess.start(args=args, env=env, schema=schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "look around", timeout=60)
    record = {k: v for k, v in turn_record(response).items() if k not in VOLATILE}
    return normalised(agent, session), record


@pytest.mark.parametrize("replay_streaming", [True, False], ids=["replay-stream", "replay-json"])
async def test_a_recording_replays_to_the_same_updates_and_record(
    agent_env: dict[str, str],
    acp_schema: Any,
    workspace: Path,
    fake_api: FakeMessagesAPI,
    tmp_path: Path,
    streaming: bool,
    replay_streaming: bool,
) -> None:
    (workspace / "notes.md").write_text("# notes\n")
    fake_api.script(
        replies.tool_use("list_files", {}, text="Looking.", usage=(300, 20)),
        replies.tool_use("read_file", {"path": "notes.md"}, usage=(340, 25)),
        replies.text("There is one notes file with a heading.", chunks=6, usage=(380, 30)),
    )
    cassette = tmp_path / "turn.jsonl"
    recorded, recorded_record = await run_turn(["--record", str(cassette)], agent_env, workspace, acp_schema)
    replay_env = base_env(tmp_path, ACP_AGENT_STREAMING="1" if replay_streaming else "0")
    replayed, replayed_record = await run_turn(
        ["--model", f"replay:{cassette}"], replay_env, workspace, acp_schema
    )
    assert replayed_record == recorded_record
    assert replayed_record["modelRequests"] == 3 and replayed_record["toolCalls"] == 2
    if replay_streaming == streaming:
        assert replayed == recorded
    else:  # the other path chunks text differently; what it says and does is the same
        assert text_of(replayed) == text_of(recorded)
        assert tool_updates(replayed) == tool_updates(recorded)
