"""A session's config options (mode, model, effort, loop) and the changes a client makes to them.

Each change is journaled (session/load restores it) and, where the editor shows it, announced:
a mode switch as `current_mode_update` and `config_option_update`, a model switch as a thought that
says what it costs.
"""

from __future__ import annotations

import uuid
from typing import Any

import structlog

from acp_agent.model.profiles import ProfileError
from acp_agent.session.catalog import ModelCatalog
from acp_agent.session.models import (
    DEFAULT_EFFORT,
    effort_config_option,
    loop_config_option,
    model_config_option,
)
from acp_agent.session.modes import mode_config_option
from acp_agent.session.requester import Requester
from acp_agent.session.state import Session

__all__ = ["SessionOptions"]

log = structlog.get_logger(__name__)


class SessionOptions:
    """Reads and changes any session's options: for the handlers, and for a strategy's mode switch."""

    def __init__(self, catalog: ModelCatalog, requester: Requester) -> None:
        self.catalog = catalog
        self.requester = requester

    def config_options(self, session: Session) -> list[dict[str, Any]]:
        """Every config option of a session with its current value (mode, model, effort, loop)."""
        return [
            mode_config_option(session.mode),
            model_config_option(session.model, self.catalog.available_models()),
            effort_config_option(session.effort, session.settings.profile),
            loop_config_option(session.loop.loop),
        ]

    def set_effort(self, session: Session, value: str) -> None:
        """The effort config option: a level the model accepts, or "default".

        Raises:
            ProfileError: the model does not accept that level.
        """
        effort = None if value == DEFAULT_EFFORT else value
        session.use_settings(self.catalog.settings_for(session.model, effort, session.settings))
        session.effort = effort
        session.history.note({"type": "effort", "effort": effort})

    async def switch_model(self, session: Session, model_id: str) -> None:
        """Another model for the next prompts; says in a thought what the switch costs.

        Thinking blocks the new model cannot read are dropped from the history (the API would drop
        them anyway, unbilled, but a history rewritten later must not hold them), and the prompt
        cache of the old model is of no use to the new one.
        """
        old = session.settings.profile
        if model_id == session.model:
            return
        effort = session.effort
        try:
            settings = self.catalog.settings_for(model_id, effort, session.settings)
        except ProfileError:  # the new model does not take the session's effort level
            effort = None
            settings = self.catalog.settings_for(model_id, None, session.settings)
        dropped = 0
        if not settings.profile.reads_thinking_from(old.id):
            dropped = session.history.drop_thinking(f"model switch {old.id} → {model_id}")
        session.use_settings(settings)
        session.effort = effort
        session.history.note({"type": "model", "modelId": model_id})
        parts = [f"Switched model: {old.id} → {model_id}."]
        if dropped:
            parts.append(
                f"{dropped} earlier thinking block(s) written by {old.id} cannot be read "
                f"by {model_id}: they are dropped, so its earlier reasoning is lost."
            )
        if len(session.history):
            parts.append(
                "The prompt cache starts over: the next request pays the full input "
                "price for the conversation so far."
            )
        log.info(
            "session.model_switched",
            session_id=session.id,
            old=old.id,
            new=model_id,
            thinking_dropped=dropped,
        )
        await self.requester.notify(
            "session/update",
            {
                "sessionId": session.id,
                "update": {
                    "sessionUpdate": "agent_thought_chunk",
                    "messageId": str(uuid.uuid4()),
                    "content": {"type": "text", "text": " ".join(parts) + "\n"},
                },
            },
        )

    async def switch_mode(self, session: Session, mode_id: str) -> None:
        """Change the permission mode, journal it, and tell the editor (both ways it can listen)."""
        if session.permissions.mode == mode_id:
            return
        session.permissions.mode = mode_id
        session.history.note({"type": "mode", "modeId": mode_id})
        notify = self.requester.notify
        await notify(
            "session/update",
            {
                "sessionId": session.id,
                "update": {"sessionUpdate": "current_mode_update", "currentModeId": mode_id},
            },
        )
        await notify(
            "session/update",
            {
                "sessionId": session.id,
                "update": {
                    "sessionUpdate": "config_option_update",
                    "configOptions": self.config_options(session),
                },
            },
        )
