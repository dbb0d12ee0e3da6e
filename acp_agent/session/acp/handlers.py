"""ACP methods → the session manager: the method table (`AcpHandler.route`, which the front handler
calls directly). Params are validated here; a bad one is -32602 naming the field.

`session/prompt` and `_session/steering` are the prompt turns' (`prompting.py`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import structlog

from acp_agent.errors import JournalFailed, LimitsError, RpcError
from acp_agent.journal.listing import CursorError, list_sessions
from acp_agent.journal.store import now_iso
from acp_agent.journal.titles import normalized_title, rename_stored
from acp_agent.protocol.lifecycle import ClientCapabilities, InitializeRequest
from acp_agent.protocol.session import (
    CancelNotification,
    ForkSessionRequest,
    ListSessionsRequest,
    LoadSessionRequest,
    NewSessionRequest,
    ResumeSessionRequest,
    SessionRef,
    SetConfigOptionRequest,
    SetModeRequest,
    SetTitleRequest,
)
from acp_agent.session.acp.handshake import initialize_answer
from acp_agent.session.acp.prompting import PromptTurns
from acp_agent.session.auth.login import KeyStore, Login, NoKeyNeeded
from acp_agent.session.auth.methods import AUTH_HELP, AUTH_METHOD_ID
from acp_agent.session.client_options import ClientOptions, read_client_options
from acp_agent.session.editor.announce import announce_commands
from acp_agent.session.editor.updates import info_update
from acp_agent.session.machinery.mcp_startup import connect_mcp
from acp_agent.session.manager import SessionManager, journal_fork, journal_reload
from acp_agent.session.options.config_options import modes_state
from acp_agent.session.params import parse
from acp_agent.session.state import Session

if TYPE_CHECKING:
    pass

__all__ = ["AcpHandler"]

log = structlog.get_logger(__name__)

_JOURNAL_METHODS = frozenset(
    {
        "session/load",
        "session/resume",
        "session/fork",
        "session/list",
        "session/close",
        "session/delete",
        "session/set_title",
        "_session/rewind",
    }
)
"""Served (and advertised) only when sessions are journaled."""


class AcpHandler:
    """Routes each ACP method to its handler; unknown requests are -32601, unknown notifications ignored."""

    def __init__(
        self,
        manager: SessionManager,
        *,
        keys: KeyStore | None = None,
        request_id: Callable[[], Any] = lambda: None,
        warm_up: Callable[[], object] | None = None,
    ) -> None:
        self.manager = manager
        self.client_capabilities = ClientCapabilities()
        self._keys = keys or NoKeyNeeded()
        self._login = Login(self._keys, manager.requester, request_id)
        self._warm_up = warm_up
        self.prompts = PromptTurns(manager, key_refused=self._login.key_refused)
        """`session/prompt` and `_session/steering` (`prompting.py`)."""
        self._routes: dict[str, Callable[[Any], Awaitable[Any]]] = {
            "initialize": self.initialize,
            "authenticate": self.authenticate,
            "logout": self._login.logout,
            "session/new": self.new_session,
            "session/prompt": self.prompts.prompt,
            "_session/steering": self.prompts.steer,
            "session/set_mode": self.set_mode,
            "session/load": self.load_session,
            "session/resume": self.resume_session,
            "session/fork": self.fork_session,
            "session/list": self.list_sessions,
            "session/close": self.close_session,
            "session/delete": self.delete_session,
            "session/set_config_option": self.set_config_option,
            "session/set_title": self.set_title,
            "_session/rewind": self.rewind,
        }

    @property
    def journaled(self) -> bool:
        return self.manager.store is not None

    def route(self, method: str) -> Callable[[Any], Awaitable[Any]]:
        """The handler of `method` (-32601 for an unknown one, or a journal's method without a
        journal): the front handler calls it directly (`front.py`)."""
        route = self._routes.get(method)
        if route is None or (method in _JOURNAL_METHODS and not self.journaled):
            raise RpcError.method_not_found(method)
        return route

    async def handle_request(self, method: str, params: Any) -> Any:
        """The `Handler` form of `route` (an embedder's, a test's)."""
        return await self.route(method)(params)

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
        """The handler's own `initialize` (the app's front handler answers it before this layer
        is imported, `front.py`, and hands the request to `accept`)."""
        request = parse(InitializeRequest, params)
        self.accept(request)
        if self._warm_up is not None:
            # The turn machinery and the SDK cost seconds to import: pay for them in the
            # background while the editor sends session/new (acp_agent.lazy).
            self._warm_up()
        return initialize_answer(request, journaled=self.journaled)

    def accept(self, request: InitializeRequest) -> None:
        """Remember what the client said it can do (the capabilities sessions and logins use)."""
        self.client_capabilities = request.client_capabilities

    async def authenticate(self, params: Any) -> dict[str, Any]:
        """Log in with the key the editor gives, or a form, or say how (`session/auth/login.py`)."""
        return await self._login.authenticate(params, self.client_capabilities)

    async def new_session(self, params: Any) -> dict[str, Any]:
        request = parse(NewSessionRequest, params)
        if not await self._keys.found():
            raise RpcError.auth_required(
                f"Authentication required: no Anthropic API key found. {AUTH_HELP}",
                {"authMethods": [AUTH_METHOD_ID]},
            )
        overrides, client = session_options(request)
        try:
            session = self.manager.create(
                request.cwd, overrides, self.client_capabilities, request.additional_directories, client
            )
        except LimitsError as exc:
            raise RpcError.invalid_params(f"Invalid params: {exc}", {"field": exc.field}) from None
        return {"sessionId": session.id, **await self._ready(session, request.mcp_servers)}

    async def _ready(self, session: Session, mcp_servers: list[dict[str, Any]]) -> dict[str, Any]:
        """Connect the session's MCP servers and build the common part of the answer."""
        answer: dict[str, Any] = {
            "modes": modes_state(session.mode, session.permissions.modes),
            "configOptions": self.manager.options.config_options(session),
        }
        failures = await connect_mcp(session, mcp_servers, self.manager.requester, self.manager.task_group)
        if failures:
            answer["_meta"] = {"acp-agent": {"mcpFailures": failures}}
        self._announce_commands(session)
        return answer

    def _announce_commands(self, session: Session) -> None:
        """available_commands_update, sent after the answer that names the session, once its
        commands, skills and MCP prompts are known (read in the background, `commands/conventions.py`)."""
        group = self.manager.task_group
        if group is None:
            return

        async def announce() -> None:
            await anyio.lowlevel.checkpoint()
            await announce_commands(session.id, session.conventions, self.manager.requester, first=True)

        group.start_soon(announce)

    async def load_session(self, params: Any) -> dict[str, Any]:
        """Rebuild the session from its journal and replay it before answering."""
        request = parse(LoadSessionRequest, params)
        session, updates = await self._restore(request)
        return await self._restored(session, updates, request)

    async def resume_session(self, params: Any) -> dict[str, Any]:
        """Like session/load, without replaying the conversation."""
        request = parse(ResumeSessionRequest, params)
        session, _ = await self._restore(request)
        return await self._restored(session, [], request)

    async def _restore(self, request: LoadSessionRequest) -> tuple[Session, list[dict[str, Any]]]:
        """The session rebuilt from its journal, and the updates that replay its conversation."""
        overrides, client = session_options(request)
        await journal_reload()  # imported off the event loop on first use (the load itself is quick)
        try:
            loaded = self.manager.load(
                request.session_id,
                request.cwd,
                overrides,
                self.client_capabilities,
                request.additional_directories,
                client,
            )
        except LimitsError as exc:
            raise RpcError.invalid_params(f"Invalid params: {exc}", {"field": exc.field}) from None
        if loaded.interrupted_rewind:  # a crash stopped a rewind mid-restore: the new state, whole
            await (await self.manager.engine()).rewinds.finish(loaded.session)
        return loaded.session, loaded.updates

    async def _restored(
        self, session: Session, updates: list[dict[str, Any]], request: LoadSessionRequest
    ) -> dict[str, Any]:
        """Replay `updates` (none for session/resume), then answer as session/new does."""
        for update in updates:
            await self.manager.requester.notify("session/update", {"sessionId": session.id, "update": update})
        return await self._ready(session, request.mcp_servers)

    async def fork_session(self, params: Any) -> dict[str, Any]:
        """ACP's unstable `session/fork`: a new session with a copy of the source's conversation
        (`journal/fork.py`), answered like session/new; the source is untouched."""
        request = parse(ForkSessionRequest, params)
        through = request.prompt_index
        if through is not None and (isinstance(through, bool) or not isinstance(through, int) or through < 1):
            raise RpcError.invalid_params(
                "Invalid params: _meta.acp-agent.promptIndex: must be a prompt's number, from 1",
                {"field": "_meta.acp-agent.promptIndex"},
            )
        overrides, client = session_options(request)
        await journal_reload()  # imported off the event loop on first use
        await journal_fork()
        try:
            session = self.manager.fork(
                request.session_id,
                request.cwd,
                overrides,
                self.client_capabilities,
                request.additional_directories,
                through=through,
                client=client,
            )
        except LimitsError as exc:
            raise RpcError.invalid_params(f"Invalid params: {exc}", {"field": exc.field}) from None
        return {"sessionId": session.id, **await self._ready(session, request.mcp_servers)}

    async def list_sessions(self, params: Any) -> dict[str, Any]:
        """One page of the journaled sessions, newest first (`journal/listing.py`)."""
        request = parse(ListSessionsRequest, params if params is not None else {})
        store = self.manager.store
        assert store is not None
        try:
            found, cursor = await anyio.to_thread.run_sync(list_sessions, store, request.cwd, request.cursor)
        except CursorError as exc:
            raise RpcError.invalid_params(
                f"Invalid params: cursor: {exc}", {"cursor": request.cursor}
            ) from None
        sessions = [
            {
                "sessionId": info.session_id,
                "cwd": info.cwd,
                "updatedAt": info.updated_at,
                **({"title": info.title} if info.title else {}),
                **(
                    {"additionalDirectories": list(info.additional_directories)}
                    if info.additional_directories
                    else {}
                ),
            }
            for info in found
        ]
        return {"sessions": sessions, **({"nextCursor": cursor} if cursor else {})}

    async def set_title(self, params: Any) -> dict[str, Any]:
        """ACP's unstable `session/set_title`: journal the user's name for the session
        (`journal/titles.py`)."""
        request = parse(SetTitleRequest, params)
        try:
            title = normalized_title(request.title)
        except ValueError as exc:
            raise RpcError.invalid_params(f"Invalid params: title: {exc}", {"field": "title"}) from None
        assert self.manager.store is not None
        session = self.manager.sessions.get(request.session_id)
        try:
            if session is None or not session.rename(title):
                rename_stored(self.manager.store, request.session_id, title)
        except (OSError, JournalFailed) as exc:
            raise RpcError.journal_error(
                f"Cannot rename session {request.session_id}: {exc}", {"sessionId": request.session_id}
            ) from None
        if session is not None:
            await self._tell(session, info_update(title=title, updated_at=now_iso()))
        return {"title": title}

    async def _tell(self, session: Session, update: dict[str, Any]) -> None:
        await self.manager.requester.notify("session/update", {"sessionId": session.id, "update": update})

    async def rewind(self, params: Any) -> dict[str, Any]:
        """`_session/rewind {sessionId, promptIndex | messageId, scope}`: a rewind for a client's
        button (`session/commands/rewinding.py`); refused while a prompt runs or waits."""
        request = parse(SessionRef, params)
        if request.session_id not in self.manager.sessions:  # never opened here, or closed
            raise RpcError.session_not_found(request.session_id)
        session = self.manager.get(request.session_id)
        if self.manager.busy(session.id):
            raise RpcError.invalid_request(
                "The session is running a prompt: cancel it first (session/cancel), then rewind",
                {"sessionId": session.id},
            )
        engine = await self.manager.engine()
        async with self.manager.turn(session):  # no prompt starts while the files go back
            return await engine.rewinds.request(session, params)

    async def close_session(self, params: Any) -> dict[str, Any]:
        request = parse(SessionRef, params)
        await self.manager.close(request.session_id)
        return {}

    async def delete_session(self, params: Any) -> dict[str, Any]:
        request = parse(SessionRef, params)
        await self.manager.delete(request.session_id)
        return {}

    async def set_mode(self, params: Any) -> dict[str, Any]:
        request = parse(SetModeRequest, params)
        await self.manager.options.set(
            self.manager.get(request.session_id), "mode", request.mode_id, field="modeId"
        )
        return {}

    async def set_config_option(self, params: Any) -> dict[str, Any]:
        request = parse(SetConfigOptionRequest, params)
        session = self.manager.get(request.session_id)
        await self.manager.options.set(session, request.config_id, request.value)
        return {"configOptions": self.manager.options.config_options(session)}


def session_options(request: NewSessionRequest) -> tuple[dict[str, Any], ClientOptions]:
    """A session request's `_meta["acp-agent"]` overrides and the client's options (acpx's
    `_meta`, ACP's `systemPrompt`); acpx's `maxTurns` is `maxTurnRequests` unless the overrides
    name it. Raises RpcError -32602 naming a malformed field."""
    meta = request.meta or {}
    overrides = meta.get("acp-agent")
    if overrides is None:  # absent or null: no overrides (an empty list, 0 or false is no object)
        overrides = {}
    elif not isinstance(overrides, dict):
        raise RpcError.invalid_params(
            "Invalid params: _meta.acp-agent must be an object", {"field": "_meta.acp-agent"}
        )
    client = read_client_options(meta, request.system_prompt)
    if client.max_turns is not None:
        overrides = {"maxTurnRequests": client.max_turns, **overrides}
    return overrides, client
