"""ACP methods → the session manager. Params are validated here; a bad one is -32602 naming the field."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread
import structlog
from pydantic import ValidationError

from acp_agent import __version__
from acp_agent.errors import LimitsError, RpcError
from acp_agent.protocol.base import AcpModel, describe_validation_error
from acp_agent.protocol.lifecycle import (
    AuthenticateRequest,
    ClientCapabilities,
    InitializeRequest,
    negotiate_version,
)
from acp_agent.protocol.session import (
    CancelNotification,
    ListSessionsRequest,
    LoadSessionRequest,
    NewSessionRequest,
    PromptRequest,
    ResumeSessionRequest,
    SessionRef,
    SetConfigOptionRequest,
    SetModeRequest,
)
from acp_agent.protocol.turn import PromptResponse
from acp_agent.session.commands import COMMANDS, command_of
from acp_agent.session.manager import SessionManager
from acp_agent.session.modes import MODES, modes_state
from acp_agent.session.prompts import to_model_blocks
from acp_agent.session.state import Session
from acp_agent.tools.mcp_sdk import mcp_servers_supported_http
from acp_agent.turn.loops import choose_loop

__all__ = ["AUTH_METHOD_ID", "AcpHandler"]

log = structlog.get_logger(__name__)

M = TypeVar("M", bound=AcpModel)

AUTH_METHOD_ID = "anthropic-api-key"
AUTH_HELP = (
    "Set ANTHROPIC_API_KEY in the editor's agent_servers env for this agent and restart "
    "it, or run `acp-agent login` once. To try the agent without a key, start it with "
    "--model demo (an offline, recorded demo turn)."
)

_JOURNAL_METHODS = frozenset(
    {"session/load", "session/resume", "session/list", "session/close", "session/delete"}
)
"""Served (and advertised) only when sessions are journaled."""


def parse(model: type[M], params: Any) -> M:
    """Validate params into `model`, or raise -32602 naming the first bad field."""
    if not isinstance(params, dict):
        raise RpcError.invalid_params("Invalid params: params must be an object")
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        message, details = describe_validation_error(exc)
        raise RpcError.invalid_params(message, {"errors": details}) from None


async def _assume_credentials() -> bool:
    return True


class AcpHandler:
    """Routes each ACP method to its handler; unknown requests are -32601, unknown notifications ignored."""

    def __init__(
        self,
        manager: SessionManager,
        *,
        has_credentials: Callable[[], Awaitable[bool]] | None = None,
        warm_up: Callable[[], object] | None = None,
    ) -> None:
        self.manager = manager
        self.client_capabilities = ClientCapabilities()
        self._terminal_auth = False
        self._has_credentials = has_credentials or _assume_credentials
        self._warm_up = warm_up
        self._routes: dict[str, Callable[[Any], Awaitable[Any]]] = {
            "initialize": self.initialize,
            "authenticate": self.authenticate,
            "session/new": self.new_session,
            "session/prompt": self.prompt,
            "session/set_mode": self.set_mode,
            "session/load": self.load_session,
            "session/resume": self.resume_session,
            "session/list": self.list_sessions,
            "session/close": self.close_session,
            "session/delete": self.delete_session,
            "session/set_config_option": self.set_config_option,
        }

    @property
    def journaled(self) -> bool:
        return self.manager.store is not None

    async def handle_request(self, method: str, params: Any) -> Any:
        route = self._routes.get(method)
        if route is None or (method in _JOURNAL_METHODS and not self.journaled):
            raise RpcError.method_not_found(method)
        return await route(params)

    async def handle_notification(self, method: str, params: Any) -> None:
        if method == "session/cancel":
            try:
                request = parse(CancelNotification, params)
            except RpcError:
                log.warning("rpc.bad_notification", method=method)
                return
            self.manager.cancel(request.session_id)

    def cancel_request(self, method: str, params: Any) -> bool:
        """$/cancel_request for a pending session/prompt acts as session/cancel (D3)."""
        if method == "session/prompt" and isinstance(params, dict):
            session_id = params.get("sessionId")
            return isinstance(session_id, str) and self.manager.cancel(session_id)
        return False

    async def initialize(self, params: Any) -> dict[str, Any]:
        request = parse(InitializeRequest, params)
        self.client_capabilities = request.client_capabilities
        self._terminal_auth = can_run_terminal_auth(request)
        if self._warm_up is not None:
            # The turn machinery and the SDK cost seconds to import: pay for them in the
            # background while the editor sends session/new (acp_agent.lazy).
            self._warm_up()
        return {
            "protocolVersion": negotiate_version(request.protocol_version),
            "agentCapabilities": {
                "loadSession": self.journaled,
                "sessionCapabilities": (
                    {"list": {}, "resume": {}, "close": {}, "delete": {}} if self.journaled else {}
                ),
                "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
                "mcpCapabilities": {"http": mcp_servers_supported_http(), "sse": False},
            },
            "authMethods": self._auth_methods(),
            "agentInfo": {"name": "acp-agent", "title": "acp-agent", "version": __version__},
        }

    def _auth_methods(self) -> list[dict[str, Any]]:
        methods: list[dict[str, Any]] = [
            {"id": AUTH_METHOD_ID, "name": "Anthropic API key", "description": AUTH_HELP}
        ]
        if self._terminal_auth:
            methods.append(
                {
                    "type": "terminal",
                    "id": "login",
                    "name": "Log in with an API key",
                    "description": "Runs `acp-agent login` in a terminal to store a key.",
                    "args": ["login"],
                }
            )
        return methods

    async def authenticate(self, params: Any) -> dict[str, Any]:
        request = parse(AuthenticateRequest, params)
        if request.method_id != AUTH_METHOD_ID:
            raise RpcError.invalid_params(
                f"Invalid params: methodId: unknown auth method {request.method_id!r}",
                {"methodId": request.method_id},
            )
        if not await self._has_credentials():
            raise RpcError.auth_required(f"No Anthropic API key found. {AUTH_HELP}")
        return {}

    async def new_session(self, params: Any) -> dict[str, Any]:
        request = parse(NewSessionRequest, params)
        if not await self._has_credentials():
            raise RpcError.auth_required(
                f"Authentication required: no Anthropic API key found. {AUTH_HELP}",
                {"authMethods": [AUTH_METHOD_ID]},
            )
        overrides = (request.meta or {}).get("acp-agent") or {}
        if not isinstance(overrides, dict):
            raise RpcError.invalid_params("Invalid params: _meta.acp-agent must be an object")
        try:
            session = self.manager.create(request.cwd, overrides, self.client_capabilities)
        except LimitsError as exc:
            raise RpcError.invalid_params(f"Invalid params: {exc}", {"field": exc.field}) from None
        return {"sessionId": session.id, **await self._ready(session, request.mcp_servers)}

    async def _ready(self, session: Session, mcp_servers: list[dict[str, Any]]) -> dict[str, Any]:
        """Connect the session's MCP servers and build the common part of the answer."""
        answer: dict[str, Any] = {
            "modes": modes_state(session.mode),
            "configOptions": self._config_options(session),
        }
        if mcp_servers:
            failures = await self.manager.connect_mcp(session, mcp_servers)
            if failures:
                answer["_meta"] = {"acp-agent": {"mcpFailures": failures}}
        self._announce_commands(session.id)
        return answer

    def _announce_commands(self, session_id: str) -> None:
        """available_commands_update, sent just after the answer that names the session."""
        group = self.manager.task_group
        if group is None:
            return

        async def announce() -> None:
            await anyio.lowlevel.checkpoint()
            await self.manager.requester.notify(
                "session/update",
                {
                    "sessionId": session_id,
                    "update": {"sessionUpdate": "available_commands_update", "availableCommands": COMMANDS},
                },
            )

        group.start_soon(announce)

    def _config_options(self, session: Session) -> list[dict[str, Any]]:
        return self.manager.config_options(session)

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
        return {"configOptions": self._config_options(session)}

    async def load_session(self, params: Any) -> dict[str, Any]:
        """Rebuild the session from its journal and replay it before answering."""
        request = parse(LoadSessionRequest, params)
        session = await self._restore(request)
        return await self._restored(session, request, replay=True)

    async def resume_session(self, params: Any) -> dict[str, Any]:
        """Like session/load, without replaying the conversation."""
        request = parse(ResumeSessionRequest, params)
        session = await self._restore(request)
        return await self._restored(session, request, replay=False)

    async def _restore(self, request: Any) -> Any:
        overrides = (request.meta or {}).get("acp-agent") or {}
        try:
            session, updates = self.manager.load(
                request.session_id, request.cwd, overrides, self.client_capabilities
            )
        except LimitsError as exc:
            raise RpcError.invalid_params(f"Invalid params: {exc}", {"field": exc.field}) from None
        session.replay = updates
        return session

    async def _restored(self, session: Any, request: Any, *, replay: bool) -> dict[str, Any]:
        if replay:
            for update in session.replay:
                await self.manager.requester.notify(
                    "session/update", {"sessionId": session.id, "update": update}
                )
        return await self._ready(session, request.mcp_servers)

    async def list_sessions(self, params: Any) -> dict[str, Any]:
        request = parse(ListSessionsRequest, params if params is not None else {})
        if request.cursor is not None:
            raise RpcError.invalid_params(
                "Invalid params: cursor: unknown cursor (every session is returned in one page)"
            )
        assert self.manager.store is not None
        return {
            "sessions": [
                {
                    "sessionId": info.session_id,
                    "cwd": info.cwd,
                    "updatedAt": info.updated_at,
                    **({"title": info.title} if info.title else {}),
                }
                for info in self.manager.store.list(request.cwd)
            ]
        }

    async def close_session(self, params: Any) -> dict[str, Any]:
        request = parse(SessionRef, params)
        await self.manager.close(request.session_id)
        return {}

    async def delete_session(self, params: Any) -> dict[str, Any]:
        request = parse(SessionRef, params)
        await self.manager.delete(request.session_id)
        return {}

    async def _switch_mode(self, session: Session, mode_id: str, field: str) -> None:
        if mode_id not in MODES:
            raise RpcError.invalid_params(
                f"Invalid params: {field}: unknown mode {mode_id!r} (one of {', '.join(MODES)})",
                {field: mode_id},
            )
        await self.manager.switch_mode(session, mode_id)

    async def prompt(self, params: Any) -> dict[str, Any]:
        """Validate, queue behind the running turn (D3), then run the prompt in its turn."""
        request = parse(PromptRequest, params)
        session = self.manager.get(request.session_id)
        shown = [block.to_wire() for block in request.prompt]
        command = command_of(shown)
        empty = is_empty_prompt(shown)
        blocks = [] if empty or command is not None else to_model_blocks(request.prompt)
        async with self.manager.turn(session) as turn:
            if turn.cancelled or empty or command is not None:
                engine = await self.manager.engine()
                if turn.cancelled:  # session/cancel came while it waited: it never runs
                    record = engine.quiet_turn(session, "cancelled", journal=False)
                elif empty:  # Enter on an empty line: nothing to ask the model
                    record = engine.quiet_turn(session, "end_turn", journal=True)
                else:
                    assert command is not None
                    record = await engine.run_command(
                        command, session, self.manager.prices.get(session.model)
                    )
                return PromptResponse(
                    stop_reason=record.stop_reason, meta={"acp-agent": {"turn": record.to_meta()}}
                ).to_wire()
            result = await self.manager.prompt(session, turn, blocks, shown)
        meta = {"acp-agent": {"turn": result.record.to_meta()}}
        if result.failure is not None:
            failure = result.failure
            data = {
                "acp-agent": {
                    "kind": failure.kind,
                    "retryable": failure.retryable,
                    "turn": result.record.to_meta(),
                }
            }
            if failure.kind == "auth_required":
                raise RpcError.auth_required(f"Authentication required: {failure}. {AUTH_HELP}", data)
            if failure.kind == "journal":
                raise RpcError.journal_error(f"The turn failed: {failure}", data)
            raise RpcError.internal_error(f"The turn failed: {failure}", data)
        # The record already names the stop as ACP does: one mapping, so the two always agree.
        return PromptResponse(stop_reason=result.record.stop_reason, meta=meta).to_wire()


def can_run_terminal_auth(request: InitializeRequest) -> bool:
    """Clients say so in `clientCapabilities.auth.terminal` (the auth-methods RFD) or, like the ACP
    Registry's validator, in a `"terminal-auth": true` `_meta` key (of the capabilities or the
    request): honour every form, so the login is offered everywhere."""
    caps = request.client_capabilities
    auth = caps.auth if isinstance(caps.auth, dict) else {}
    return auth.get("terminal") is True or any(
        isinstance(meta, dict) and meta.get("terminal-auth") is True for meta in (caps.meta, request.meta)
    )


def is_empty_prompt(shown: list[dict[str, Any]]) -> bool:
    """`[]` (codecompanion's Enter on an empty line), or text blocks with nothing but whitespace:
    the API would refuse either with a 400, so the turn ends at once without a request."""
    return all(block.get("type") == "text" and not str(block.get("text", "")).strip() for block in shown)
