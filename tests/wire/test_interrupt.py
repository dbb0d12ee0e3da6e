"""Ctrl-C in acpx (issue 41 item 13): acpx runs the agent in its own foreground process group, so
^C reaches the agent as SIGINT just before acpx's `session/cancel`. With prompts in progress, that
SIGINT cancels them and the agent goes on serving until each is answered `cancelled`, however long
the client takes to answer what the cancel asks of it (`terminal/kill`), then leaves (exit 0). The
client's EOF or SIGTERM still ends it within the usual bounds, and a second SIGINT at once."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.client import TerminalEditor
from tests.wire.conftest import turn_record

pytestmark = pytest.mark.parametrize("streaming", [True], ids=["stream"])  # path-independent

KILL_SECONDS = 2.5
"""How long the client takes to answer `terminal/kill`: past the shutdown's 1.5 s grace."""


class SlowKillEditor(TerminalEditor):
    """An editor with terminals that answers `terminal/kill` after `delay` seconds (never: None)."""

    def __init__(self, delay: float | None) -> None:
        super().__init__("building...\n")
        self.delay = delay

    async def __call__(self, method: str, params: Any) -> Any:
        if method == "terminal/kill":
            self.calls.append((method, params))
            if self.delay is None:
                await anyio.sleep_forever()
            await anyio.sleep(self.delay)  # deliberate: the client's pace, past the 1.5 s grace
            self.killed.set()
            return {}
        return await super().__call__(method, params)


def in_the_terminal(message: dict[str, Any]) -> bool:
    """The command runs in the editor's terminal (its tool call embeds it)."""
    if message.get("method") != "session/update":
        return False
    return any(c.get("type") == "terminal" for c in message["params"]["update"].get("content") or [])


async def test_a_sigint_lets_the_prompt_be_answered_cancelled_at_the_clients_pace_then_leaves(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    editor = SlowKillEditor(KILL_SECONDS)
    fake_api.script(replies.tool_use("run_command", {"command": "make all"}, id="toolu_make"))
    fake_api.set_fallback(replies.text("never asked"))
    results: dict[str, Any] = {}
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize(terminal=True)
        session = await agent.new_session(workspace)

        async def run() -> None:
            results["answer"] = await agent.prompt(session, "build it", timeout=30)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await agent.wait_for(in_the_terminal)
            agent.send_signal(signal.SIGINT)  # acpx's ^C reaches its process group first
            await anyio.sleep(0.01)  # deliberate: acpx's session/cancel follows its ^C by 10 ms
            await agent.notify("session/cancel", {"sessionId": session})
        code = await agent.wait_exit(timeout=15)
        log = agent.stderr_text()
    answer = results["answer"]
    assert answer.get("result", {}).get("stopReason") == "cancelled", (answer, log)
    assert turn_record(answer)["abortedDuring"] == "tools"
    calls = editor.methods()
    assert calls.index("terminal/kill") < calls.index("terminal/release"), calls
    assert code == 0, log
    assert "Traceback" not in log


@pytest.mark.parametrize("then", ["SIGTERM", "stdin_eof", "SIGINT"])
async def test_eof_sigterm_or_a_second_sigint_still_end_an_agent_waiting_on_its_client(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, then: str
) -> None:
    """The client never answers `terminal/kill`: its EOF or SIGTERM ends the agent within the
    shutdown's bounds (exit 0), a second SIGINT at once, by that signal."""
    editor = SlowKillEditor(None)
    fake_api.script(replies.tool_use("run_command", {"command": "make all"}, id="toolu_make"))
    fake_api.set_fallback(replies.text("never asked"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize(terminal=True)
        session = await agent.new_session(workspace)
        async with anyio.create_task_group() as tg:

            async def run() -> None:
                try:
                    await agent.prompt(session, "build it", timeout=30)
                except BaseException:  # an agent ended at once answers nothing
                    return

            tg.start_soon(run)
            await agent.wait_for(in_the_terminal)
            agent.send_signal(signal.SIGINT)
            await agent.wait_for(lambda m: m.get("method") == "terminal/kill", timeout=10)
            await anyio.sleep(2.0)  # deliberate: past the usual 1.5 s grace, the agent still serves
            assert agent.returncode is None
            began = time.monotonic()
            if then == "stdin_eof":
                await agent.close_stdin()
            else:
                agent.send_signal(getattr(signal, then))
            code = await agent.wait_exit(timeout=15)
            tg.cancel_scope.cancel()
        log = agent.stderr_text()
    assert time.monotonic() - began < 10, log
    assert code == (-signal.SIGINT if then == "SIGINT" else 0), log
    assert "Traceback" not in log
