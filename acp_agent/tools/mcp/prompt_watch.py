"""Following a server's prompt list: re-listed when the server says it changed.

A server says so with `notifications/prompts/list_changed`. On a 2025 connection it may send it at
any time (the SDK client hands it to the `message_handler`); on a 2026-07-28 one it sends it only
on a `subscriptions/listen` stream, which is opened here when the server offers it. Either way the
notice only sets a flag: one task per server waits a moment (a burst of notices is one re-list),
re-lists the prompts (`list_prompts`, past the client's response cache) and hands them on. A
re-list that fails or times out keeps the old list, with a warning. Nothing here runs in a turn:
the task lives with the server's connection (`connections.py`), and is cancelled with it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import structlog

from acp_agent.tools.mcp.prompts import list_prompts
from acp_agent.tools.mcp.servers import failure_reason

__all__ = ["CHANGED", "QUIET_SECONDS", "RELIST_SECONDS", "PromptWatch"]

log = structlog.get_logger(__name__)

CHANGED = "notifications/prompts/list_changed"
QUIET_SECONDS = 0.2
"""How long after a change notice the prompts are re-listed: the notices of a burst are one re-list."""
RELIST_SECONDS = 30.0
"""How long a re-list may take; past it the old list stays."""


class PromptWatch:
    """One server's prompt list, re-listed on its change notices and handed to `relisted`."""

    def __init__(self, server: str, relisted: Callable[[list[Any]], Awaitable[None]]) -> None:
        self.server = server
        self._relisted = relisted
        self._changed = anyio.Event()

    def notice(self, message: Any) -> None:
        """For the client's `message_handler`: a change notice sets the flag; anything else is not
        this watch's."""
        if getattr(message, "method", None) == CHANGED:
            self._changed.set()

    async def run(self, client: Any) -> None:
        """Re-list after each change (or burst of changes) until cancelled."""
        async with anyio.create_task_group() as group:
            group.start_soon(self._listen, client)
            while True:
                await self._changed.wait()
                await anyio.sleep(QUIET_SECONDS)
                self._changed = anyio.Event()  # a notice from now on means another re-list
                try:
                    with anyio.fail_after(RELIST_SECONDS):
                        listed = await list_prompts(client, fresh=True)
                except Exception as exc:
                    log.warning("mcp.prompts_relist_failed", server=self.server, error=failure_reason(exc))
                    continue
                log.info("mcp.prompts_relisted", server=self.server, prompts=len(listed))
                try:
                    await self._relisted(listed)
                except Exception:  # a bug in handing them on must cost the new list, not the server
                    log.exception("mcp.prompts_unused", server=self.server)

    async def _listen(self, client: Any) -> None:
        """On a 2026-07-28 connection whose server offers it, the stream its notices come on (they
        also reach `notice`, through the client's message handler; reading them here keeps the
        stream's backlog empty)."""
        prompts = getattr(client.server_capabilities, "prompts", None)
        if not getattr(prompts, "list_changed", False):
            return
        try:
            async with client.listen(prompts_list_changed=True) as changes:
                async for _ in changes:
                    self._changed.set()
        except Exception as exc:  # a 2025 connection (no streams), or the stream was lost
            log.debug("mcp.prompts_unwatched", server=self.server, reason=failure_reason(exc))
