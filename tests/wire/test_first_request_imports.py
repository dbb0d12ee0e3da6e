"""A first request loads only what it needs: the modules loaded by the time it has gone out, counted.

Import is most of what a prompt sent right after `session/new` waits for (issue 46): a plain
`import anthropic` is ~2,900 modules, and the SDK's client core alone used to bring in ~950 of them
(the beta API's types for its tracing helpers, every error class, the batches). The agent loads the
SDK with lazy re-exports and late names (`model/lean_sdk/import_hook.py`, `model/lean_sdk/late_names.py`) and
leaves for later what only a later step uses. This test holds that to a ceiling: the agent, spawned
with its phases logged (`acp_agent/phases.py`), says how many modules it had loaded when its first
Messages request returned, of them how many of the SDK. It counts, it does not time.

When a ceiling fails, see what grew: `python bench/first_request.py --rounds 1` lists the modules
at each phase, and `python -X importtime -m acp_agent` names them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp_agent.phases import ENV, REQUEST_PHASE
from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess

SDK_CEILING = 160
"""SDK modules loaded by the end of the first request: 138 with anthropic 2.12 (204 before the
annotations naming late names were postponed in modules without `from __future__ import
annotations`, 986 without late names, ~2,900 after a plain import)."""

ALL_CEILING = 950
"""Every module of the process by then: 854 here (922 before, 1,704 without late names)."""


def phases(stderr: str) -> list[dict[str, Any]]:
    found = []
    for line in stderr.splitlines():
        if '"phase"' in line:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "phase":
                found.append(event)
    return found


async def test_the_first_request_loads_what_a_request_needs_and_no_more(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.text("Hello there."))
    env = {**agent_env, ENV: "1", "PYTHONDONTWRITEBYTECODE": ""}
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "hi")
        assert response["result"]["stopReason"] == "end_turn", response
        stderr = agent.stderr_text()
    request = [p for p in phases(stderr) if p["name"] == REQUEST_PHASE]
    assert request, f"no `{REQUEST_PHASE}` phase logged:\n{stderr[-3000:]}"
    first = request[0]
    assert first["sdk_modules"] <= SDK_CEILING, (
        f"the first request loaded {first['sdk_modules']} modules of the SDK (ceiling {SDK_CEILING})"
    )
    assert first["modules"] <= ALL_CEILING, (
        f"{first['modules']} modules were loaded by the end of the first request (ceiling {ALL_CEILING})"
    )
    assert first["sdk_modules"] > 50  # the request did go through the SDK (and the count is real)
