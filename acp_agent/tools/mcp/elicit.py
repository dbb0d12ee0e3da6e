"""An MCP server's questions to the user (elicitation, form or url), relayed to the editor.

A mode the editor advertised is relayed, scoped to the tool call under way (if exactly one is);
any other is declined at once. Nothing waits unbounded: a question asked during a call is abandoned
when the call ends (answered, timed out or cancelled with its turn), and any other waits at most
`QUESTION_SECONDS`. A url elicitation the server reports complete is passed on to the editor.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import structlog

from acp_agent.errors import ToolError
from acp_agent.tools.base import Elicitation
from acp_agent.tools.mcp.tool import ServerConnection

__all__ = ["QUESTION_SECONDS", "completion_handler", "elicitation_callback"]

log = structlog.get_logger(__name__)

QUESTION_SECONDS = 600.0
"""The longest wait for an answer to a question asked outside a tool call."""


def elicitation_callback(
    connection: ServerConnection, elicitation: Elicitation
) -> Callable[[Any, Any], Awaitable[Any]]:
    """The SDK client's `elicitation_callback` for one server."""

    async def on_elicit(context: Any, params: Any) -> Any:
        from mcp import types

        mode = getattr(params, "mode", None) or "form"
        if mode not in elicitation.modes:
            log.info("mcp.elicitation_declined", server=connection.server, mode=mode)
            return types.ElicitResult(action="decline")
        request: dict[str, Any] = {"mode": mode, "message": params.message}
        if mode == "form":
            request["requestedSchema"] = params.requested_schema
        else:
            request["url"] = params.url
            request["elicitationId"] = params.elicitation_id or f"mcp-{uuid.uuid4().hex}"
        call_id = connection.current_call()
        timeout = connection.call_timeout if connection.calls else QUESTION_SECONDS
        answer: dict[str, Any] = {"action": "cancel"}
        with anyio.CancelScope() as scope:
            connection.questions.setdefault(call_id, set()).add(scope)
            try:
                answer = await elicitation.elicit(request, call_id=call_id, timeout=timeout)
            except ToolError as exc:
                log.info("mcp.elicitation_unanswered", server=connection.server, reason=str(exc))
            finally:
                connection.questions.get(call_id, set()).discard(scope)
        log.info("mcp.elicitation_answered", server=connection.server, mode=mode, action=answer["action"])
        return types.ElicitResult(action=answer["action"], content=answer.get("content"))

    return on_elicit


def completion_handler(
    connection: ServerConnection, elicitation: Elicitation
) -> Callable[[Any], Awaitable[None]]:
    """The SDK client's `message_handler`: a url elicitation done on the server's side is passed on."""

    async def on_message(message: Any) -> None:
        if getattr(message, "method", None) != "notifications/elicitation/complete":
            return
        elicitation_id = getattr(getattr(message, "params", None), "elicitation_id", None)
        if isinstance(elicitation_id, str):
            with anyio.move_on_after(5):
                await elicitation.complete(elicitation_id)

    return on_message
