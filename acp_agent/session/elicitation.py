"""The editor's forms and links for tools: ACP `elicitation/create`, scoped to the session and the
tool call, for `ask_user` and for the MCP servers that ask the user something.

Only the modes the client advertised are used (`tools.base.Elicitation.modes`); its answer is
checked (D19): an unknown action is a dismissal, and content keeps only the value types ACP allows.
"""

from __future__ import annotations

from typing import Any

import structlog

from acp_agent.errors import RpcError, ToolError
from acp_agent.protocol.lifecycle import ClientCapabilities
from acp_agent.session.requester import Requester

__all__ = ["EditorElicitation", "editor_elicitation"]

log = structlog.get_logger(__name__)

ACTIONS = frozenset({"accept", "decline", "cancel"})


def editor_elicitation(
    session_id: str, requester: Requester, capabilities: ClientCapabilities
) -> EditorElicitation | None:
    """The session's `Elicitation`, or None when the client advertised no elicitation mode."""
    modes = capabilities.elicitation_modes
    return EditorElicitation(session_id, requester, modes) if modes else None


class EditorElicitation:
    """`tools.base.Elicitation` over ACP: `elicitation/create` and `elicitation/complete`."""

    def __init__(self, session_id: str, requester: Requester, modes: frozenset[str]) -> None:
        self.session_id = session_id
        self.requester = requester
        self.modes = modes

    async def elicit(self, request: dict[str, Any], *, call_id: str | None, timeout: float) -> dict[str, Any]:
        mode = request.get("mode")
        if mode not in self.modes:
            raise ToolError(f"the editor does not offer {mode} elicitation")
        params = {**request, "sessionId": self.session_id}
        if call_id is not None:
            params["toolCallId"] = call_id
        try:
            answer = await self.requester.request("elicitation/create", params, timeout=timeout)
        except RpcError as exc:
            raise ToolError(f"the editor could not ask the user: {exc.message}") from None
        except TimeoutError:
            raise ToolError(f"the user did not answer within {timeout:g} s") from None
        return _checked(answer)

    async def complete(self, elicitation_id: str) -> None:
        await self.requester.notify("elicitation/complete", {"elicitationId": elicitation_id})


def _checked(answer: Any) -> dict[str, Any]:
    action = answer.get("action") if isinstance(answer, dict) else None
    if action not in ACTIONS:
        log.info("elicitation.unknown_answer", action=str(action)[:40])
        return {"action": "cancel"}
    if action != "accept":
        return {"action": action}
    content = answer.get("content")
    if not isinstance(content, dict):
        return {"action": "accept"}
    return {
        "action": "accept",
        "content": {k: v for k, v in content.items() if isinstance(k, str) and _allowed(v)},
    }


def _allowed(value: Any) -> bool:
    """ACP's `ElicitationContentValue`: a string, number, boolean or list of strings."""
    if isinstance(value, str | bool | int | float):
        return True
    return isinstance(value, list) and all(isinstance(item, str) for item in value)
