"""What a test's editor says back: a permission handler that allows, and a prompt that may die."""

from __future__ import annotations

from typing import Any

from tests.support.agent import AgentProcess, RpcError

__all__ = ["allow", "prompt_until_killed"]


async def allow(method: str, params: Any) -> Any:
    """`on_request` of a user who allows every tool call once (and supports nothing else)."""
    if method == "session/request_permission":
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
    return RpcError(-32601, method)


async def prompt_until_killed(agent: AgentProcess, session: str, text: str = "work") -> None:
    """Send a prompt whose agent the test is about to SIGKILL: no answer is expected."""
    try:
        await agent.prompt(session, text, timeout=30)
    except BaseException:  # the agent is killed under it
        return
