"""The handshake before the session layer (D4): `initialize` is answered by the front handler with
none of the session machinery imported; whatever comes right after waits for the layer and works.
"""

from __future__ import annotations

import json
import signal
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.support.agent import AgentProcess
from tests.support.waits import wait_until

pytestmark = pytest.mark.model_free  # none of these reaches the model: each runs once

SESSION_LAYER = (
    "acp_agent.session.acp.handlers",
    "acp_agent.session.manager",
    "acp_agent.journal.store",
    "acp_agent.session.state",
    "acp_agent.turn.journal.entries",
    "acp_agent.turn.events",
)
"""What `initialize` does not need: imported by the warm-up, after the answer is built."""

RECORDING_AGENT = textwrap.dedent("""
    import json, sys
    from acp_agent.session.acp import front

    started = front.warm_up

    def recording(steps):
        # The front starts the warm-up while it answers initialize: what is loaded now is what
        # the handshake needed.
        with open(sys.argv[1], "w") as out:
            json.dump(sorted(m for m in sys.modules if m.startswith("acp_agent")), out)
        return started(steps)

    front.warm_up = recording
    from acp_agent.cli import main
    raise SystemExit(main(sys.argv[2:]))
""")


async def test_initialize_is_answered_before_the_session_layer_is_imported(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, tmp_path: Path
) -> None:
    record = tmp_path / "loaded.json"
    command = (sys.executable, "-c", RECORDING_AGENT, str(record))
    async with AgentProcess.start(command=command, env=agent_env, schema=acp_schema) as agent:
        result = await agent.initialize()
        loaded = json.loads(record.read_text())
        session = await agent.new_session(workspace)  # then the layer is built, and serves
        listed = await agent.call("session/list", {})
    assert "acp_agent.session.acp.front" in loaded  # the record was taken in the real handshake
    assert [m for m in SESSION_LAYER if m in loaded] == []
    # The state dir was checked without the journal machinery: the journal methods are offered.
    assert result["agentCapabilities"]["loadSession"] is True
    assert set(result["agentCapabilities"]["sessionCapabilities"]) >= {"list", "resume", "close", "delete"}
    assert [s["sessionId"] for s in listed["sessions"]] == [session]


async def test_requests_sent_at_once_after_initialize_wait_for_the_layer_and_are_answered(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path
) -> None:
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        # A cancel for a request never seen and a session/cancel before any session exists: dropped.
        await agent.notify("$/cancel_request", {"requestId": 999})
        await agent.notify("session/cancel", {"sessionId": "sess_" + "0" * 32})
        init = await agent.send_request("initialize", {"protocolVersion": 1})
        new = await agent.send_request("session/new", {"cwd": str(workspace), "mcpServers": []})
        listing = await agent.send_request("session/list", {})
        unknown = await agent.send_request("nes/start", {"sessionId": "x"})  # ACP's, not served
        answers = [await agent.response(i) for i in (init, new, listing, unknown)]
        session = answers[1]["result"]["sessionId"]
        mode = await agent.call("session/set_mode", {"sessionId": session, "modeId": "plan"})
    assert answers[0]["result"]["protocolVersion"] == 1
    assert session.startswith("sess_")
    assert "sessions" in answers[2]["result"]  # answered by the journaled handler, sent at once
    assert answers[3]["error"]["code"] == -32601
    assert mode == {}


async def test_a_request_cancelled_while_it_waits_for_the_layer_is_answered_cancelled(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path
) -> None:
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        init = await agent.send_request("initialize", {"protocolVersion": 1})
        new = await agent.send_request("session/new", {"cwd": str(workspace), "mcpServers": []})
        await agent.notify("$/cancel_request", {"requestId": new})
        answered = await agent.response(new)
        await agent.response(init)
        after = await agent.new_session(workspace)  # the layer was built all the same
    # Cancelled before the layer existed, or answered if it was already built: one answer either way.
    assert answered.get("error", {}).get("code") == -32800 or answered["result"]["sessionId"]
    assert after.startswith("sess_")


@pytest.mark.parametrize("how", ["eof", "sigterm"])
async def test_an_agent_that_only_got_initialize_exits_zero(
    agent_env: dict[str, str], acp_schema: Any, how: str
) -> None:
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        if how == "eof":
            await agent.close_stdin()
        else:
            agent.send_signal(signal.SIGTERM)
        code = await agent.wait_exit(timeout=10)
        # The test's reader may still be draining the pipe.
        await wait_until(lambda: '"agent.stopped"' in agent.stderr_text(), "the agent.stopped line")
    assert code == 0
    assert '"agent.stopped"' in agent.stderr_text()
