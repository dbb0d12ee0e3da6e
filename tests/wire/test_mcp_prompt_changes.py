"""An MCP server whose prompt list changes: its commands follow, and the editor's menu is sent again
(issue 25: "again whenever the set changes"), on both MCP protocol generations."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.client import allow
from tests.support.conventions import MCP_SERVER
from tests.support.waits import wait_until
from tests.wire.test_conventions import user_text

RELISTED, CHANGED = '"mcp.prompts_relisted"', '"mcp.prompts_changed"'


def menus(agent: AgentProcess, session: str) -> list[set[str]]:
    """Each `available_commands_update` sent so far, as its command names."""
    return [
        {c["name"] for c in u["update"]["availableCommands"]}
        for u in agent.updates(session)
        if u["update"]["sessionUpdate"] == "available_commands_update"
    ]


async def menu_count(agent: AgentProcess, session: str, count: int) -> list[set[str]]:
    """The menus, once there are `count` of them. One more that should not have come shows up
    later: the server's watch re-lists and announces in one task, in order, so a menu of the
    next change comes after it."""
    await wait_until(lambda: len(menus(agent, session)) >= count, f"{count} menus")
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
        await wait_until(lambda: CHANGED in agent.stderr_text(), "the offer's change on stderr")
        mark = len(agent.stderr_text())  # stderr is read in the background: past the offer's lines
        assert (await agent.prompt(session, "burst", timeout=60))["result"]["stopReason"] == "end_turn"
        await wait_until(lambda: RELISTED in agent.stderr_text()[mark:], "a re-list after the burst")
        # Withdrawn: announced again without it (after anything the burst's re-lists sent).
        assert (await agent.prompt(session, "withdraw", timeout=60))["result"]["stopReason"] == "end_turn"
        await menu_count(agent, session, 3)
        assert menus(agent, session) == [first, second, first]

        def until_changed() -> str | None:
            """The agent's stderr from the burst to the withdrawal's change, its re-list included."""
            text = agent.stderr_text()[mark:]
            return text.split(CHANGED)[0] if CHANGED in text else None

        relists = (await wait_until(until_changed, "the withdrawal's change on stderr")).count(RELISTED)
        assert 2 <= relists <= 4  # the burst's one to three, and the withdrawal's own
