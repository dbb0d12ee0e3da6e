"""session/set_mode and session/set_config_option: the option and its value are checked here (-32602
names the bad one), then changed through the manager (`options.py` journals and announces it)."""

from __future__ import annotations

from typing import Any

from acp_agent.errors import LimitsError, RpcError
from acp_agent.protocol.session import SetConfigOptionRequest, SetModeRequest
from acp_agent.session.manager import SessionManager
from acp_agent.session.modes import MODES
from acp_agent.session.params import parse
from acp_agent.session.state import Session
from acp_agent.turn.loops import choose_loop

__all__ = ["OptionMethods"]


class OptionMethods:
    """The handlers of the two methods that change a session's config options."""

    def __init__(self, manager: SessionManager) -> None:
        self.manager = manager

    async def set_mode(self, params: Any) -> dict[str, Any]:
        request = parse(SetModeRequest, params)
        session = self.manager.get(request.session_id)
        await self._switch_mode(session, request.mode_id, "modeId")
        return {}

    async def set_config_option(self, params: Any) -> dict[str, Any]:
        request = parse(SetConfigOptionRequest, params)
        session = self.manager.get(request.session_id)
        if request.config_id not in {"mode", "model", "effort", "loop"}:
            raise RpcError.invalid_params(
                f"Invalid params: configId: unknown config option {request.config_id!r}",
                {"configId": request.config_id},
            )
        if not isinstance(request.value, str):
            raise RpcError.invalid_params("Invalid params: value: must be a string")
        if request.config_id == "mode":
            await self._switch_mode(session, request.value, "value")
        elif request.config_id == "effort":
            try:
                self.manager.set_effort(session, request.value)
            except ValueError as exc:
                raise RpcError.invalid_params(
                    f"Invalid params: value: {exc}", {"value": request.value}
                ) from None
        elif request.config_id == "loop":
            if session.running is not None:
                raise RpcError.invalid_request(
                    "Cannot change the loop while a prompt runs", {"sessionId": session.id}
                )
            try:
                session.choose_loop(
                    choose_loop(self.manager.config, {**session.overrides, "loop": request.value})
                )
            except LimitsError as exc:
                raise RpcError.invalid_params(
                    f"Invalid params: value: {exc}", {"value": request.value}
                ) from None
            session.overrides = {**session.overrides, "loop": request.value}
        else:
            models = self.manager.available_models()
            if request.value not in models:
                raise RpcError.invalid_params(
                    f"Invalid params: value: unknown model {request.value!r} (one of {', '.join(models)})",
                    {"value": request.value},
                )
            await self.manager.switch_model(session, request.value)
        return {"configOptions": self.manager.config_options(session)}

    async def _switch_mode(self, session: Session, mode_id: str, field: str) -> None:
        if mode_id not in MODES:
            raise RpcError.invalid_params(
                f"Invalid params: {field}: unknown mode {mode_id!r} (one of {', '.join(MODES)})",
                {field: mode_id},
            )
        await self.manager.switch_mode(session, mode_id)
