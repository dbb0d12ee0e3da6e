"""`available_commands_update`: the `/` menu of a session, sent once its commands are known (after
the answer that names the session) and again whenever they change (an MCP server's prompt list).

What it lists and when it is sent again is the session's `ConventionsSlot`'s
(`claude_code/conventions/conventions.py`); this is the sending, through the one update builder
(`updates.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp_agent.session.editor.updates import commands_update
from acp_agent.session.requester import Requester

if TYPE_CHECKING:
    from acp_agent.claude_code.conventions.conventions import ConventionsSlot

__all__ = ["announce_commands"]


async def announce_commands(
    session_id: str, conventions: ConventionsSlot, requester: Requester, *, first: bool
) -> None:
    """A session's commands to the editor: the `first` time always, later only when changed (an
    MCP server's prompt list, `mcp_startup.py`)."""

    async def send(commands: list[dict[str, Any]]) -> None:
        await requester.notify(
            "session/update", {"sessionId": session_id, "update": commands_update(commands)}
        )

    await conventions.announce(send, first=first)
