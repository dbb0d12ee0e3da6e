"""An MCP server whose prompt list changes: its commands follow, and the editor's menu is sent again
(issue 25: "again whenever the set changes"), on both MCP protocol generations."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.client import allow
from tests.support.conventions import MCP_SERVER
from tests.wire.test_conventions import user_text


def menus(agent: AgentProcess, session: str) -> list[set[str]]:
    """Each `available_commands_update` sent so far, as its command names."""
    return [
        {c["name"] for c in u["update"]["availableCommands"]}
        for u in agent.updates(session)
        if u["update"]["sessionUpdate"] == "available_commands_update"
    ]


async def menu_count(agent: AgentProcess, session: str, count: int) -> list[set[str]]:
    """The menus, once there are `count` of them (and no more a moment later)."""
    with anyio.fail_after(30):
        while len(menus(agent, session)) < count:
            await anyio.sleep(0.05)
    await anyio.sleep(1.0)  # a re-list (0.2 s after a notice) that would send one more has run
    return menus(agent, session)


@pytest.mark.parametrize("generation", [[], ["--legacy"]], ids=["2026-07-28", "2025"])
async def test_a_changed_prompt_list_is_offered_and_announced_again_once_per_change(
    agent_env: dict[str, str],
    acp_schema: Any,
    workspace: Path,
    fake_api: FakeMessagesAPI,
    generation: list[str],
) -> None:
    fake_api.script(
        replies.tool_use("mcp__tests__offer_prompt", {"name": "summarize"}, id="toolu_offer"),
        replies.text("offered"),
        replies.text("summarised"),  # /mcp__tests__summarize
        replies.tool_use("mcp__tests__say_prompts_changed", {"times": 25}, id="toolu_burst"),
        replies.text("said"),
        replies.tool_use("mcp__tests__withdraw_prompt", {"name": "summarize"}, id="toolu_withdraw"),
        replies.text("withdrawn"),
    )
    server = {"name": "tests", "command": sys.executable, "args": [str(MCP_SERVER), *generation], "env": []}
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=allow) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace, mcp_servers=[server])
        [first] = await menu_count(agent, session, 1)
        assert "mcp__tests__review_code" in first and "mcp__tests__summarize" not in first
        # The model calls the tool that adds a prompt: the menu is sent again, with it.
        assert (await agent.prompt(session, "offer it", timeout=60))["result"]["stopReason"] == "end_turn"
        _, second = await menu_count(agent, session, 2)
        assert second == first | {"mcp__tests__summarize"}
        # It runs as a command, fetched from the server.
        response = await agent.prompt(session, "/mcp__tests__summarize", timeout=60)
        assert response["result"]["stopReason"] == "end_turn"
        assert user_text(fake_api) == "The summarize prompt's words."
        # A burst of notices that change nothing: re-listed (at most a few times), not announced.
        relisted = agent.stderr_text().count('"mcp.prompts_relisted"')
        assert (await agent.prompt(session, "burst", timeout=60))["result"]["stopReason"] == "end_turn"
        assert len(await menu_count(agent, session, 2)) == 2
        assert 1 <= agent.stderr_text().count('"mcp.prompts_relisted"') - relisted <= 3
        # Withdrawn: announced again without it.
        assert (await agent.prompt(session, "withdraw", timeout=60))["result"]["stopReason"] == "end_turn"
        *_, third = await menu_count(agent, session, 3)
        assert third == first and len(menus(agent, session)) == 3
