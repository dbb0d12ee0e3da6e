"""`acp-agent harness`: the shipped example scripts pass against this agent on the loopback API,
and the report fails a step with a diff, holds and answers the agent's requests, and works
against another agent (one built on the official SDK)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support import REPO_ROOT, base_env

EXAMPLES = REPO_ROOT / "examples"
SDK_AGENT = f"{sys.executable} -m tests.support.sdk_agent"


def harness(tmp_path: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "acp_agent.harness.script",
            *args,
            "--agent-stderr",
            str(tmp_path / "agent-stderr.log"),
        ],
        env=base_env(tmp_path),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def fake_env(fake: FakeMessagesAPI) -> list[str]:
    """What the tests pass with --env so the spawned agent talks to the fake."""
    pairs = {
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake.base_url,
        "ACP_AGENT_MODEL": "claude-test-1",
        "NO_PROXY": "127.0.0.1,localhost",
        "ACP_AGENT_STALL_SECONDS": "5",
    }
    return [arg for key, value in pairs.items() for arg in ("--env", f"{key}={value}")]


def tool_use_forever(body: dict[str, Any], n: int) -> replies.Message:
    return replies.tool_use("list_files", {"pattern": f"*{n}*"})


def script(tmp_path: Path, *steps: dict[str, Any]) -> str:
    path = tmp_path / "script.jsonl"
    path.write_text("".join(json.dumps(step) + "\n" for step in steps), encoding="utf-8")
    return str(path)


def report_lines(out: str) -> list[str]:
    return [line.split("  ")[0] for line in out.splitlines() if line[:4] in ("PASS", "FAIL")]


INIT = {
    "op": "request",
    "method": "initialize",
    "params": {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}},
}
NEW = {
    "op": "request",
    "method": "session/new",
    "params": {"cwd": "$cwd", "mcpServers": []},
    "match": {"result": {"sessionId": "$sessionId"}},
}


def prompt(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "op": "request",
        "method": "session/prompt",
        "params": {"sessionId": "$sessionId", "prompt": [{"type": "text", "text": text}]},
        **extra,
    }


# --- the shipped examples, against this agent, run bare ------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.jsonl")))
def test_every_example_passes_run_bare(tmp_path: Path, example: str) -> None:
    """No fake started by hand, no --env: the script's first step names the model it needs."""
    done = harness(tmp_path, str(EXAMPLES / example))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAIL" not in done.stdout
    assert done.stdout.splitlines()[1].startswith("model: acp_agent.testing --reply ")
    assert done.stdout.rstrip().endswith(" passed")


@pytest.mark.slow
def test_a_wrong_expectation_in_an_example_still_fails_with_a_diff(tmp_path: Path) -> None:
    text = (EXAMPLES / "max_turn_requests.jsonl").read_text(encoding="utf-8")
    wrong = text.replace('"stopReason": "max_turn_requests", "_meta"', '"stopReason": "end_turn", "_meta"', 1)
    assert wrong != text
    path = tmp_path / "wrong.jsonl"
    path.write_text(wrong, encoding="utf-8")
    done = harness(tmp_path, str(path))
    assert done.returncode == 1, done.stdout + done.stderr
    assert '@ $.result.stopReason\n    - "end_turn"\n    + "max_turn_requests"' in done.stdout


def test_a_script_that_names_a_model_still_drives_another_agent(tmp_path: Path) -> None:
    path = script(
        tmp_path,
        {"op": "model", "fake": "acp_agent.testing", "reply": "text"},
        INIT,
        NEW,
        prompt("hello", match={"result": {"stopReason": "end_turn"}}),
        {"op": "close", "exit_code": 0},
    )
    done = harness(tmp_path, path, "--agent", SDK_AGENT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert report_lines(done.stdout) == ["PASS"] * 4
    assert "model: acp_agent.testing --reply text at http://127.0.0.1:" in done.stdout


def test_env_options_win_over_the_model_steps_variables(tmp_path: Path) -> None:
    """--env ANTHROPIC_BASE_URL=<dead port> beats the fake: the prompt then fails to connect."""
    path = script(
        tmp_path,
        {"op": "model", "fake": "acp_agent.testing", "reply": "text"},
        INIT,
        NEW,
        prompt("hello", match={"result": {"stopReason": "end_turn"}}),
    )
    done = harness(
        tmp_path, path, "--env", "ANTHROPIC_BASE_URL=http://127.0.0.1:9", "--env", "ACP_AGENT_MAX_RETRIES=0"
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert report_lines(done.stdout) == ["PASS", "PASS", "FAIL"]


# --- the report, against the SDK-built agent ------------------------------------------------


def test_a_mismatch_fails_the_step_with_a_diff_and_skips_the_rest(tmp_path: Path) -> None:
    path = script(
        tmp_path,
        INIT,
        NEW,
        prompt("stop:refusal", match={"result": {"stopReason": "end_turn"}}),
        {"op": "close"},
    )
    done = harness(tmp_path, path, "--agent", SDK_AGENT)
    assert done.returncode == 1, done.stdout + done.stderr
    assert report_lines(done.stdout) == ["PASS", "PASS", "FAIL"]
    assert '@ $.result.stopReason\n    - "end_turn"\n    + "refusal"' in done.stdout
    assert done.stdout.rstrip().endswith("2 passed, 1 failed, 1 skipped")


def test_the_agents_requests_are_held_for_respond_or_answered_by_a_rule(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    path = script(
        tmp_path,
        INIT,
        NEW,
        {
            "op": "answer",
            "method": "fs/*",
            "match": {"path": "${cwd}/notes.txt", "line": "$line"},
            "result": {"content": "canned line ${line}"},
        },
        prompt("edit read", name="turn", wait=False),
        {
            "op": "expect",
            "match": {
                "method": "session/request_permission",
                "id": "$permId",
                "params": {"options": {"$contains": [{"kind": "reject_once", "optionId": "$reject"}]}},
            },
        },
        {
            "op": "respond",
            "id": "$permId",
            "result": {"outcome": {"outcome": "selected", "optionId": "$reject"}},
        },
        {"op": "expect", "response": "turn", "match": {"result": {"stopReason": "end_turn"}}},
        {
            "op": "expect",
            "match": {
                "method": "session/update",
                "params": {"update": {"sessionUpdate": "tool_call_update", "status": "failed"}},
            },
        },
        {
            "op": "expect",
            "match": {"params": {"update": {"content": {"text": {"$regex": "is 'canned line 2'"}}}}},
            "note": "the rule's answer was used",
        },
        {"op": "close", "exit_code": 0},
    )
    done = harness(tmp_path, path, "--agent", SDK_AGENT, "--cwd", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert report_lines(done.stdout) == ["PASS"] * 10


def test_an_expect_that_times_out_shows_the_nearest_message_and_what_the_agent_waits_on(
    tmp_path: Path,
) -> None:
    path = script(
        tmp_path,
        INIT,
        NEW,
        prompt("plan edit", wait=False),
        {
            "op": "expect",
            "timeout": 1,
            "match": {
                "method": "session/update",
                "params": {"update": {"sessionUpdate": "plan", "entries": [{"content": "nothing"}]}},
            },
        },
        {"op": "close"},
    )
    done = harness(tmp_path, path, "--agent", SDK_AGENT)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "no message matched within 1.0 s" in done.stdout
    assert "@ $.params.update.entries" in done.stdout  # the plan is the nearest message
    assert "waiting for answers to: session/request_permission" in done.stdout


def test_an_agent_that_dies_fails_the_step_and_shows_its_stderr(tmp_path: Path) -> None:
    path = script(tmp_path, INIT, NEW, prompt("crash"), {"op": "close"})
    done = harness(tmp_path, path, "--agent", SDK_AGENT)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "exited with code 3" in done.stdout
    assert "crashing on purpose" in done.stdout


def test_close_checks_the_exit_code(tmp_path: Path) -> None:
    path = script(tmp_path, INIT, {"op": "close", "exit_code": 7})
    done = harness(tmp_path, path, "--agent", SDK_AGENT)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "exited with code 0, not 7" in done.stdout


def test_an_agent_that_cannot_start_is_a_failure(tmp_path: Path) -> None:
    path = script(tmp_path, INIT)
    done = harness(tmp_path, path, "--agent", str(tmp_path / "no-such-agent"))
    assert done.returncode == 1
    assert "cannot start the agent" in done.stdout
