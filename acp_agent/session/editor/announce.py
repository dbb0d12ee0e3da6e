"""`available_commands_update`: the `/` menu of a session, sent once its commands are known (after
the answer that names the session) and again whenever they change (an MCP server's prompt list).

What it lists and when it is sent again is the session's `ConventionsSlot`'s (`conventions.py`);
this is the sending, through the one update builder (`updates.py`).
"""

from __future__ import annotations

from typing import Any

from acp_agent.session.requester import Requester
from acp_agent.session.state import Session
from acp_agent.session.updates import commands_update

__all__ = ["announce_commands", "prompts_changed"]


async def announce_commands(session: Session, requester: Requester, *, first: bool) -> None:
    """The session's commands to the editor: the `first` time always, later only when changed."""

    async def send(commands: list[dict[str, Any]]) -> None:
        await requester.notify(
            "session/update", {"sessionId": session.id, "update": commands_update(commands)}
        )

    await session.conventions.announce(send, first=first)


async def prompts_changed(session: Session, requester: Requester) -> None:
    """An MCP server's prompts changed (`McpConnections.on_prompts_changed`): offer the new ones,
    and tell the editor if its menu changed."""
    if session.mcp is None or session.closing:
        return
    session.conventions.set_prompts(session.mcp.prompts)
    await announce_commands(session, requester, first=False)
