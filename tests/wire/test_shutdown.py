"""Shutdown: stdin closing, SIGTERM and SIGINT each end the running turn (answered `cancelled`
while stdout is writable) and the process exits 0, leaving no command it ran behind: no orphan
still running, no child left unreaped (durable issue, part 7; decisions D3, D5).

Time bounds are generous here (exit within 10 s); the tight 2 s figure is measured in bench/.
"""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess, method_not_found
from tests.support.waits import wait_until
from tests.wire.conftest import turn_record

EXIT_BOUND = 10.0

pytestmark = pytest.mark.parametrize("streaming", [True], ids=["stream"])  # path-independent


@dataclass(frozen=True)
class Proc:
    """One /proc entry: enough to tell a live process from a zombie, and whose it is."""

    pid: int
    ppid: int
    sid: int
    state: str
    start: int  # clock ticks after boot: tells a reused pid from the one we saw


def read_proc(pid: int) -> Proc | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()
    return Proc(pid, int(fields[1]), int(fields[3]), fields[0].decode(), int(fields[19]))


def all_procs() -> list[Proc]:
    entries = (read_proc(int(name)) for name in os.listdir("/proc") if name.isdigit())
    return [proc for proc in entries if proc is not None]


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def is_update(kind: str, **fields: Any) -> Callable[[dict[str, Any]], bool]:
    def match(message: dict[str, Any]) -> bool:
        update = message["params"]["update"]
        return update["sessionUpdate"] == kind and all(update.get(k) == v for k, v in fields.items())

    return match


async def stop_agent(agent: AgentProcess, how: str) -> None:
    """The editor's three ways of ending an agent."""
    if how == "stdin_eof":
        await agent.close_stdin()
    else:
        agent.send_signal(getattr(signal, how))


async def allow_once(method: str, params: Any) -> Any:
    """The editor's user clicks "Allow once" for every permission question."""
    if method == "session/request_permission":
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
    return await method_not_found(method, params)


async def run_and_stop(
    agent: AgentProcess,
    session: str,
    how: str,
    started: Callable[[dict[str, Any]], bool],
    ready: Callable[[], Any] | None = None,
) -> tuple[dict[str, Any], int]:
    """Prompt; once an update matches `started` (and `ready()` returned), stop the agent `how`.

    Returns the prompt's answer and the exit code (an agent still running EXIT_BOUND s after the
    stop fails the wait).
    """
    results: dict[str, Any] = {}

    async def prompt() -> None:
        results["response"] = await agent.prompt(session, "go", timeout=60)

    async with anyio.create_task_group() as tg:
        tg.start_soon(prompt)
        await agent.wait_for(lambda m: m.get("method") == "session/update" and started(m), timeout=20)
        if ready is not None:
            await ready()
        await stop_agent(agent, how)
        code = await agent.wait_exit(timeout=EXIT_BOUND)
    return results["response"], code


def assert_cancelled_then_exited(response: dict[str, Any], code: int, aborted_during: str) -> None:
    assert response.get("result", {}).get("stopReason") == "cancelled", response
    assert turn_record(response)["abortedDuring"] == aborted_during
    assert code == 0, f"exit code {code}"


@pytest.mark.parametrize("how", ["stdin_eof", "SIGTERM", "SIGINT"])
async def test_a_streaming_turn_is_answered_cancelled_and_the_agent_exits_zero(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, how: str
) -> None:
    fake_api.script(replies.text("x" * 600, chunks=300, chunk_delay=0.05))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response, code = await run_and_stop(agent, session, how, is_update("agent_message_chunk"))
    assert_cancelled_then_exited(response, code, "model")


@pytest.mark.parametrize(
    ("how", "permission"),
    [("stdin_eof", "bypassPermissions"), ("SIGTERM", "allow_once"), ("SIGINT", "bypassPermissions")],
)
async def test_a_running_command_is_stopped_and_reaped_before_the_agent_exits_zero(
    agent_env: dict[str, str],
    acp_schema: Any,
    workspace: Path,
    fake_api: FakeMessagesAPI,
    how: str,
    permission: str,
) -> None:
    marker = f"shutdown-marker-{uuid.uuid4().hex}"
    call_id = "toolu_sleeper"
    fake_api.script(replies.tool_use("run_command", {"command": f"sleep 300; echo {marker}"}, id=call_id))
    fake_api.set_fallback(replies.text("never asked"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=allow_once) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        if permission == "bypassPermissions":
            answer = await agent.request(
                "session/set_mode", {"sessionId": session, "modeId": "bypassPermissions"}
            )
            assert answer.get("result") == {}, answer

        found: dict[str, Proc] = {}

        async def sleeping() -> None:
            """The command's shell is the agent's child, and its `sleep` is running (nothing signals
            that a process appeared: /proc is looked at again)."""
            shell = await wait_until(
                lambda: next(
                    (p for p in all_procs() if p.ppid == agent.pid and marker in cmdline(p.pid)), None
                ),
                "the command's shell",
            )
            found["shell"] = shell
            found["sleep"] = await wait_until(
                lambda: next(
                    (p for p in all_procs() if p.ppid == shell.pid and "sleep" in cmdline(p.pid)), None
                ),
                "its `sleep 300`",
            )

        response, code = await run_and_stop(
            agent,
            session,
            how,
            is_update("tool_call_update", toolCallId=call_id, status="in_progress"),
            sleeping,
        )
        if permission == "allow_once":
            asked = [m for m in agent.messages if m.get("method") == "session/request_permission"]
            assert len(asked) == 1, "the command ran without the user's permission"
        finals = [p["update"] for p in agent.updates(session) if p["update"].get("toolCallId") == call_id]
        assert finals[-1]["status"] == "failed", finals[-1]
    assert_cancelled_then_exited(response, code, "tools")
    shell, sleeper = found["shell"], found["sleep"]
    # No orphan: nothing of the command's session still runs (zombies run nothing).
    survivors = [p for p in all_procs() if p.sid == shell.sid and p.state not in ("Z", "X")]
    assert survivors == [], f"processes of the command outlived the agent: {survivors}"
    # No zombie of the agent's: its direct child was reaped before it exited. (A grandchild
    # killed with the group is its dead shell's child: reaping it falls to init.)
    after = read_proc(shell.pid)
    assert after is None or after.start != shell.start, (
        f"the agent exited without reaping its child shell: {after}"
    )
    late = read_proc(sleeper.pid)
    assert late is None or late.start != sleeper.start or late.state in ("Z", "X"), late
