"""The offline demo: a recorded turn replayed through the real agent and SDK, with no API key."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_agent.demo import DEMO_PROMPT, make_workspace
from tests.support.agent import AgentProcess, RpcError, base_env
from tests.wire.conftest import chunks, turn_record


async def allow_async(method: str, params: Any) -> Any:
    if method == "session/request_permission":
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
    return RpcError(-32601, method)


async def test_the_demo_runs_a_real_turn_without_a_key_on_both_paths(
    tmp_path: Path, acp_schema: Any, streaming: bool
) -> None:
    workspace = make_workspace(tmp_path)
    env = base_env(tmp_path, ACP_AGENT_STREAMING="1" if streaming else "0")
    assert "ANTHROPIC_API_KEY" not in env
    async with AgentProcess.start(
        args=["--model", "demo"], env=env, schema=acp_schema, on_request=allow_async
    ) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, DEMO_PROMPT, timeout=60)
    assert response["result"]["stopReason"] == "end_turn"
    record = turn_record(response)
    assert record["modelRequests"] == 6 and record["toolCalls"] == 5
    assert record["streaming"] is streaming
    assert "return sum(values) / len(values)\n" in (workspace / "calc.py").read_text()
    assert "+ 1" not in (workspace / "calc.py").read_text()
    assert chunks(agent, session, "plan")
    text = "".join(c["content"]["text"] for c in chunks(agent, session))
    assert "Fixed" in text


async def test_a_replay_beyond_the_cassette_is_a_clear_error(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    async with AgentProcess.start(
        args=["--model", "demo", "--max-retries", "0"], env=base_env(tmp_path), on_request=allow_async
    ) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.prompt(session, DEMO_PROMPT, timeout=60)
        extra = await agent.prompt(session, "one more thing", timeout=60)
    assert extra["error"]["code"] == -32603
    assert "cassette exhausted" in extra["error"]["message"]


@pytest.mark.slow
def test_the_smoke_runner_shows_the_demo_and_exits_zero(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "acp_agent",
            "smoke",
            "--demo",
            "--yes",
            "--cwd",
            str(make_workspace(tmp_path)),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "stop reason: end_turn" in done.stdout
    assert "modelRequests: 6" in done.stdout


def test_record_then_replay_gives_the_same_turn(tmp_path: Path) -> None:
    cassette = tmp_path / "rec.jsonl"
    demo = Path(__file__).resolve().parents[2] / "acp_agent" / "demo" / "demo.jsonl"
    # Re-record the demo's own replay: the cassette it writes replays to the same turn.
    for model, extra in ((f"replay:{demo}", ["--record", str(cassette)]), (f"replay:{cassette}", [])):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "acp_agent",
                "smoke",
                DEMO_PROMPT,
                "--yes",
                "--cwd",
                str(make_workspace(tmp_path)),
                "--agent",
                " ".join([sys.executable, "-m", "acp_agent", "--model", model, *extra]),
            ],
            env=base_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert "modelRequests: 6" in done.stdout
    lines = cassette.read_text().splitlines()
    assert len(lines) == 7 and json.loads(lines[0])["model"] == "claude-sonnet-5-5"
