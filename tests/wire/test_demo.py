"""The offline demo: a recorded turn replayed through the real agent and SDK, with no API key."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_agent.demo.workspace import DEMO_PROMPT, make_workspace
from tests.support import REPO_ROOT
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


def make_demo(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """`make demo`'s own command line (read from the Makefile), run by this interpreter: its console
    script's `main` is `python -m acp_agent`'s. Its scratch project goes under `tmp_path`."""
    recipe = re.search(r"^demo:.*\n\t\$\(BIN\)/(\S+) (.+)$", (REPO_ROOT / "Makefile").read_text(), re.M)
    assert recipe is not None and recipe[1] == "governed-acp-agent", "make demo's recipe moved"
    return subprocess.run(
        [sys.executable, "-m", "acp_agent", *shlex.split(recipe[2]), *extra],
        env=base_env(tmp_path, TMPDIR=str(tmp_path)),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def raw_json_objects(text: str) -> list[str]:
    """Every JSON object written out as such in `text` (a log line, a `{}`), wherever it starts."""
    decoder = json.JSONDecoder()
    found = []
    for brace in re.finditer(r"\{", text):
        try:
            value, end = decoder.raw_decode(text, brace.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(text[brace.start() : end])
    return found


def test_the_json_check_sees_a_log_line_glued_to_the_answer() -> None:
    glued = 'to check.{"turnId": "t_1", "limits": {"maxTurnRequests": 50}, "event": "turn.ended"}\n'
    assert raw_json_objects(glued) == [glued[9:-1], '{"maxTurnRequests": 50}']
    assert raw_json_objects("input: path=calc.py\nplan: {not json}") == []


@pytest.mark.slow
def test_make_demo_tells_the_turn_then_a_short_summary_with_no_raw_json_and_no_none(tmp_path: Path) -> None:
    done = make_demo(tmp_path)
    combined = done.stdout + done.stderr  # what the person at the terminal sees
    assert done.returncode == 0, combined[-2000:]
    assert raw_json_objects(combined) == []
    assert re.search(r"\bNone\b", combined) is None
    assert "session title: The average test fails" in done.stdout
    assert "(or `python -m pytest -q`) to check.\n\nstop reason: end_turn\n" in done.stdout
    summary = done.stdout[done.stdout.index("stop reason: end_turn") :].splitlines()
    assert summary[1:5] == [
        "requests: 6 of 50",
        "tool calls: 5",
        "tokens: 13,730 in, 455 out",
        "cost: $0.0320",
    ]
    assert "turn record:\n" not in combined and "turnId" not in combined  # the whole record: -v or --json
    assert "turn.started" not in combined  # the agent's log lines: -v


@pytest.mark.slow
def test_make_demo_verbose_shows_rendered_log_lines_and_json_gives_the_whole_record(tmp_path: Path) -> None:
    done = make_demo(tmp_path, "-v", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)  # stdout holds the result alone
    assert result["stopReason"] == "end_turn"
    assert result["_meta"]["acp-agent"]["turn"]["modelRequests"] == 6
    story = done.stderr
    assert raw_json_objects(story) == [] and re.search(r"\bNone\b", story) is None
    assert re.search(r"^\d\d:\d\d:\d\d info turn\.started turn_id=t_\w+ max_turn_requests=50$", story, re.M)
    assert re.search(r"to check\.\n\d\d:\d\d:\d\d info turn\.ended ", story)  # never glued to the answer
    assert "turn record:\n  turnId: t_" in story and "  modelRequests: 6\n" in story
    assert "  limits: maxTurnRequests=50 maxToolCalls=200" in story


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
        assert "requests: 6 of 50" in done.stdout
    lines = cassette.read_text().splitlines()
    assert len(lines) == 7 and json.loads(lines[0])["model"] == "claude-sonnet-5-5"
