"""The editor's forms and links for tools: ACP `elicitation/create`, scoped to the session and the
tool call, for `ask_user` and for the MCP servers that ask the user something.

Only the modes the client advertised are used (`tools.base.Elicitation.modes`); its answer is
checked against the question (`form_answers.py`, D19): an unknown action, content outside the
form's schema or past `ANSWER_CHARS` is a dismissal.
"""

from __future__ import annotations

from typing import Any

from acp_agent.errors import RpcError, ToolError
from acp_agent.protocol.lifecycle import ClientCapabilities
from acp_agent.session.editor.form_answers import checked_answer
from acp_agent.session.requester import Requester

__all__ = ["EditorElicitation", "editor_elicitation"]


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
        return checked_answer(answer, request.get("requestedSchema") if mode == "form" else None)

    async def complete(self, elicitation_id: str) -> None:
        await self.requester.notify("elicitation/complete", {"elicitationId": elicitation_id})
