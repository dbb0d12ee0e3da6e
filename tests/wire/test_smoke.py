"""`acp-agent smoke`: one prompt turn shown for a person, with an exit code per stop reason.

Run as a real process (`python -m acp_agent.harness.smoke`) against this agent on the loopback
Messages API, and against a small agent built on the official `acp` SDK (any agent must work).
"""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support import base_env

SDK_AGENT = f"{sys.executable} -m tests.support.sdk_agent"
SMOKE = [sys.executable, "-m", "acp_agent.harness.smoke"]


def smoke(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run the smoke runner with stdin that is not a terminal (/dev/null)."""
    return subprocess.run(
        [*SMOKE, *args, "--agent-stderr", str(tmp_path / "agent-stderr.log")],
        env=env or base_env(tmp_path),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def on_fake(tmp_path: Path, fake: FakeMessagesAPI, **extra: str) -> dict[str, str]:
    return base_env(
        tmp_path,
        ANTHROPIC_API_KEY="test-key",
        ANTHROPIC_BASE_URL=fake.base_url,
        ACP_AGENT_MODEL="claude-test-1",
        ACP_AGENT_STALL_SECONDS="5",
        **extra,
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("alpha\nbeta\ngamma\n", encoding="utf-8")
    return root


# --- this agent -------------------------------------------------------------------------------


@pytest.mark.slow
def test_end_turn_streams_the_text_then_the_turn_record_and_exits_0(
    tmp_path: Path, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.set_fallback(replies.text("Hello there, smoke tester.", chunks=4))
    done = smoke(tmp_path, "say hi", "--cwd", str(workspace), env=on_fake(tmp_path, fake_api))
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "Hello there, smoke tester." in out  # the chunks joined on one line, as streamed
    assert out.index("> say hi") < out.index("Hello there") < out.index("stop reason: end_turn")
    assert "requests: 1 of 50" in out and "tool calls: 0" in out  # the summary of the turn record


@pytest.mark.slow
def test_the_request_limit_exits_4_and_each_tool_call_shows_its_status(
    tmp_path: Path, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.set_fallback(lambda body, n: replies.tool_use("list_files", {"pattern": f"*{n}*"}))
    done = smoke(
        tmp_path,
        "loop",
        "--cwd",
        str(workspace),
        "--env",
        "ACP_AGENT_MAX_TURN_REQUESTS=2",
        env=on_fake(tmp_path, fake_api),
    )
    assert done.returncode == 4, done.stdout + done.stderr
    assert done.stdout.count("-> tool ") == 2
    assert done.stdout.count(": completed") + done.stdout.count(": failed") == 2
    assert "stop reason: max_turn_requests" in done.stdout and "limit: maxTurnRequests" in done.stdout
    assert "requests: 2 of 2" in done.stdout
    assert fake_api.attempts == 2


def test_without_an_api_key_the_agents_auth_error_is_shown_and_exit_is_7(
    tmp_path: Path, workspace: Path
) -> None:
    done = smoke(
        tmp_path,
        "hi",
        "--cwd",
        str(workspace),  # base_env has no key
        "--agent",
        f"{sys.executable} -m acp_agent",
    )
    assert done.returncode == 7, done.stdout + done.stderr
    assert "the agent needs authentication" in done.stdout and "ANTHROPIC_API_KEY" in done.stdout
    assert "Anthropic API key:" in done.stdout  # the auth method the agent offered in initialize


@pytest.mark.slow
def test_without_an_api_key_or_agent_the_offline_demo_runs(tmp_path: Path) -> None:
    done = smoke(tmp_path, "--yes")  # no key, no --agent, no --cwd: the demo in a scratch copy
    assert done.returncode == 0, done.stdout + done.stderr
    assert "offline demo" in done.stderr
    assert "stop reason: end_turn" in done.stdout


# --- any agent: one built on the official SDK ------------------------------------------------


def test_without_a_terminal_permission_is_rejected_with_a_line_saying_so(
    tmp_path: Path, workspace: Path
) -> None:
    done = smoke(tmp_path, "think plan edit", "--cwd", str(workspace), "--agent", SDK_AGENT)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "(thinking) pondering" in out
    assert "plan:\n  [x] look around\n  [>] make the edit  (high)\n  [ ] report back" in out
    assert "-> tool Edit hello.txt (edit): pending" in out
    assert "   +world" in out  # the diff
    assert "? permission: Edit hello.txt" in out and "[3] Reject (reject_once)" in out
    assert "rejected: stdin is not a terminal" in out
    assert "Edit hello.txt: failed" in out and "| edit rejected" in out
    assert not (workspace / "hello.txt").exists()
    assert "Hello from the SDK agent." in out and "stop reason: end_turn" in out


def test_yes_allows_and_the_agent_writes_through_the_client(tmp_path: Path, workspace: Path) -> None:
    done = smoke(tmp_path, "edit", "--yes", "--cwd", str(workspace), "--agent", SDK_AGENT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "-> Allow once (--yes)" in done.stdout and "| edit allowed" in done.stdout
    assert (workspace / "hello.txt").read_text(encoding="utf-8") == "hello\nworld\n"


def test_no_rejects_quietly(tmp_path: Path, workspace: Path) -> None:
    done = smoke(tmp_path, "edit", "--no", "--cwd", str(workspace), "--agent", SDK_AGENT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "-> Reject (--no)" in done.stdout and "stdin is not a terminal" not in done.stdout
    assert not (workspace / "hello.txt").exists()


def test_the_agent_reads_files_through_the_client(tmp_path: Path, workspace: Path) -> None:
    done = smoke(tmp_path, "read", "--cwd", str(workspace), "--agent", SDK_AGENT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "line 2 of notes.txt is 'beta'" in done.stdout


@pytest.mark.parametrize(
    ("word", "code"),
    [
        ("stop:end_turn", 0),
        ("stop:max_tokens", 3),
        ("stop:max_turn_requests", 4),
        ("stop:refusal", 5),
        ("stop:cancelled", 6),
        ("stop:bogus", 7),
    ],
)
def test_each_stop_reason_has_its_exit_code(tmp_path: Path, workspace: Path, word: str, code: int) -> None:
    done = smoke(tmp_path, word, "--cwd", str(workspace), "--agent", SDK_AGENT)
    assert done.returncode == code, done.stdout + done.stderr
    assert f"stop reason: {word.removeprefix('stop:')}" in done.stdout or code == 7


def test_an_error_answer_exits_7_with_the_error(tmp_path: Path, workspace: Path) -> None:
    done = smoke(tmp_path, "error", "--cwd", str(workspace), "--agent", SDK_AGENT)
    assert done.returncode == 7, done.stdout + done.stderr
    assert "-32603" in done.stdout and "failed on purpose" in done.stdout


def test_a_crash_exits_8_and_shows_the_end_of_its_stderr(tmp_path: Path, workspace: Path) -> None:
    done = smoke(tmp_path, "crash", "--cwd", str(workspace), "--agent", SDK_AGENT)
    assert done.returncode == 8, done.stdout + done.stderr
    assert "exited with code 3" in done.stdout and "crashing on purpose" in done.stdout


def test_an_agent_that_never_answers_times_out_with_exit_8(tmp_path: Path, workspace: Path) -> None:
    done = smoke(tmp_path, "wait", "--timeout", "3", "--cwd", str(workspace), "--agent", SDK_AGENT)
    assert done.returncode == 8, done.stdout + done.stderr
    assert "did not finish within 3.0 s" in done.stdout


def test_an_agent_that_cannot_start_exits_8(tmp_path: Path, workspace: Path) -> None:
    done = smoke(tmp_path, "--cwd", str(workspace), "--agent", str(tmp_path / "missing"))
    assert done.returncode == 8 and "cannot start the agent" in done.stdout


def test_a_line_that_is_not_json_rpc_is_reported(tmp_path: Path, workspace: Path) -> None:
    done = smoke(tmp_path, "junk", "--cwd", str(workspace), "--agent", SDK_AGENT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not JSON-RPC: this is not JSON-RPC" in done.stdout


def test_usage_errors_exit_2_and_help_lists_every_exit_code(tmp_path: Path) -> None:
    assert smoke(tmp_path, "--yes", "--no").returncode == 2
    assert smoke(tmp_path, "--cwd", str(tmp_path / "nowhere")).returncode == 2
    help_text = smoke(tmp_path, "--help").stdout
    for line in (
        "0  the turn ended with end_turn",
        "3  max_tokens",
        "4  max_turn_requests",
        "5  refusal",
        "6  cancelled",
        "7  the agent answered with a JSON-RPC error",
        "8  the agent could not start",
    ):
        assert line in help_text


# --- at a terminal --------------------------------------------------------------------------


class Terminal:
    """The smoke runner with a pseudo-terminal as stdin, its stdout read as it comes."""

    def __init__(self, tmp_path: Path, *args: str) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            [*SMOKE, *args, "--agent", SDK_AGENT, "--agent-stderr", str(tmp_path / "err.log")],
            stdin=slave,
            stdout=subprocess.PIPE,
            env=base_env(tmp_path),
            cwd=tmp_path,
        )
        os.close(slave)
        self.out = b""

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(30)
        assert self.process.stdout is not None
        self.process.stdout.close()
        os.close(self.master)

    def read_until(self, marker: bytes, timeout: float = 30) -> None:
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while marker not in self.out:
            left = deadline - time.monotonic()
            assert left > 0, f"no {marker!r} in {self.out.decode()!r}"
            if select.select([self.process.stdout], [], [], left)[0]:
                chunk = os.read(self.process.stdout.fileno(), 4096)
                assert chunk, f"stdout closed before {marker!r}: {self.out.decode()!r}"
                self.out += chunk

    def finish(self) -> tuple[int, str]:
        """Read stdout to its end; the exit code and everything written."""
        assert self.process.stdout is not None
        rest = self.process.stdout.read()
        return self.process.wait(30), (self.out + rest).decode()


def test_a_person_at_a_terminal_answers_the_permission_question(tmp_path: Path) -> None:
    with Terminal(tmp_path, "edit", "--cwd", str(tmp_path)) as term:
        term.read_until(b"choose 1-3")
        os.write(term.master, b"2\n")
        code, out = term.finish()
    assert code == 0, out
    assert "-> Always allow (your choice)" in out and "| edit allowed" in out
    assert (tmp_path / "hello.txt").exists()


def test_ctrl_c_cancels_the_turn_the_acp_way_and_exits_6(tmp_path: Path) -> None:
    with Terminal(tmp_path, "wait", "--cwd", str(tmp_path)) as term:
        term.read_until(b"waiting for cancel")
        term.process.send_signal(signal.SIGINT)
        code, out = term.finish()
    assert code == 6, out
    assert "cancelling the turn" in out and "stop reason: cancelled" in out


def test_ctrl_c_during_a_question_answers_it_cancelled(tmp_path: Path) -> None:
    with Terminal(tmp_path, "edit", "--cwd", str(tmp_path)) as term:
        term.read_until(b"choose 1-3")
        term.process.send_signal(signal.SIGINT)
        code, out = term.finish()
    assert "-> cancelled (the turn is being cancelled)" in out
    assert "| edit rejected" in out  # the SDK agent treats a cancelled outcome as not allowed
    assert code == 0, out  # that agent does not end its turn `cancelled`; the exit code follows it
