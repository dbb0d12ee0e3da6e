"""The permission seam: the loop asks before a tool that edits or executes, and obeys the answer.

`permission` is "edit", "execute", or "sensitive": an edit of a file that makes tools run code
(`tools/files/sensitive.py`), which is asked in every mode but bypassPermissions.

Implemented in `session/` (modes, remembered "always" answers, `session/request_permission`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from acp_agent.tools.base import Preview

__all__ = ["ALLOW", "PermissionAsker", "PermissionDecision"]


@dataclass(frozen=True, slots=True)
class PermissionDecision:
    """`allowed` runs the tool; `cancelled` ends the turn; otherwise `message` tells the model why not.

    `grants`: the ids of the preview's `Grant`s the user chose for this one call.
    """

    allowed: bool
    cancelled: bool = False
    message: str = ""
    grants: frozenset[str] = frozenset()


ALLOW = PermissionDecision(True)


class PermissionAsker(Protocol):
    async def ask(
        self,
        *,
        call_id: str,
        tool_name: str,
        title: str,
        kind: str,
        permission: str,
        raw_input: dict[str, Any],
        preview: Callable[[], Awaitable[Preview | None]] | None = None,
    ) -> PermissionDecision:
        """`preview()` computes what the call would change; await it only when asking the user."""
        ...


class AllowAll:
    """For runs with nobody to ask (and for tests of the loop alone)."""

    async def ask(self, **_: Any) -> PermissionDecision:
        return ALLOW
