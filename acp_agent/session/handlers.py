"""ACP methods → the session manager. Params are validated here; a bad one is -32602 naming the field."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import anyio.to_thread
import structlog

from acp_agent.errors import JournalFailed, LimitsError, RpcError
from acp_agent.protocol.lifecycle import ClientCapabilities, InitializeRequest
from acp_agent.protocol.session import (
    CancelNotification,
    ForkSessionRequest,
    ListSessionsRequest,
    LoadSessionRequest,
    NewSessionRequest,
    PromptRequest,
    ResumeSessionRequest,
    SessionRef,
    SetConfigOptionRequest,
    SetModeRequest,
    SetTitleRequest,
    SteeringRequest,
)
from acp_agent.protocol.turn import PromptResponse, PromptUsage
from acp_agent.session.auth.login import KeyStore, Login, NoKeyNeeded
from acp_agent.session.auth.methods import AUTH_HELP, AUTH_METHOD_ID
from acp_agent.session.client_options import ClientOptions, read_client_options
from acp_agent.session.commands.builtins import CLAUDE_CODE_NAMES
from acp_agent.session.editor.announce import announce_commands
from acp_agent.session.editor.updates import info_update, user_chunks
from acp_agent.session.handshake import initialize_answer
from acp_agent.session.journal.listing import CursorError, list_sessions
from acp_agent.session.journal.store import now_iso
from acp_agent.session.journal.titles import normalized_title, prompt_title, rename_stored
from acp_agent.session.manager import SessionManager, journal_fork, journal_reload
from acp_agent.session.options.config_options import modes_state
from acp_agent.session.params import parse
from acp_agent.session.prompts import PreparedPrompt, prepared_prompt
from acp_agent.session.state import Session
from acp_agent.turn.steering import SteeringMessage

if TYPE_CHECKING:
    from acp_agent.turn.record import TurnRecord

__all__ = ["AcpHandler", "prompt_answer"]

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
        self._routes: dict[str, Callable[[Any], Awaitable[Any]]] = {
            "initialize": self.initialize,
            "authenticate": self.authenticate,
            "logout": self._login.logout,
            "session/new": self.new_session,
            "session/prompt": self.prompt,
            "_session/steering": self.steer,
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
                request.cwd, overrides, self.client_capabilities, request.additional_directories
            )
        except LimitsError as exc:
            raise RpcError.invalid_params(f"Invalid params: {exc}", {"field": exc.field}) from None
        session.client = client
        return {"sessionId": session.id, **await self._ready(session, request.mcp_servers)}

    async def _ready(self, session: Session, mcp_servers: list[dict[str, Any]]) -> dict[str, Any]:
        """Connect the session's MCP servers and build the common part of the answer."""
        answer: dict[str, Any] = {
            "modes": modes_state(session.mode, session.permissions.modes),
            "configOptions": self.manager.options.config_options(session),
        }
        failures = await self.manager.connect_mcp(session, mcp_servers)
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
        session = await self._restore(request)
        return await self._restored(session, request, replay=True)

    async def resume_session(self, params: Any) -> dict[str, Any]:
        """Like session/load, without replaying the conversation."""
        request = parse(ResumeSessionRequest, params)
        session = await self._restore(request)
        return await self._restored(session, request, replay=False)

    async def _restore(self, request: LoadSessionRequest) -> Any:
        overrides, client = session_options(request)
        await journal_reload()  # imported off the event loop on first use (the load itself is quick)
        try:
            session, updates = self.manager.load(
                request.session_id,
                request.cwd,
                overrides,
                self.client_capabilities,
                request.additional_directories,
            )
        except LimitsError as exc:
            raise RpcError.invalid_params(f"Invalid params: {exc}", {"field": exc.field}) from None
        session.replay = updates
        session.client = client
        if session.interrupted_rewind:  # a crash stopped a rewind mid-restore: the new state, whole
            await (await self.manager.engine()).rewinds.finish(session)
            session.interrupted_rewind = False
        return session

    async def _restored(self, session: Any, request: Any, *, replay: bool) -> dict[str, Any]:
        if replay:
            for update in session.replay:
                await self.manager.requester.notify(
                    "session/update", {"sessionId": session.id, "update": update}
                )
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
            )
        except LimitsError as exc:
            raise RpcError.invalid_params(f"Invalid params: {exc}", {"field": exc.field}) from None
        session.client = client
        return {"sessionId": session.id, **await self._ready(session, request.mcp_servers)}

    async def _fork_command(self, session: Session, argument: str) -> str:
        """`/fork [N]`: fork `session` as session/fork does (its cwd, roots and options), and say
        which session that made, or why none."""
        if self.manager.store is None:
            return "Nothing to fork from: sessions are not journaled (the agent runs with --no-journal)."
        if argument and not argument.isdigit():
            return "Usage: /fork [N]: copy this session into a new one, whole or through prompt N."
        through = int(argument) if argument else None
        await journal_reload()
        await journal_fork()
        try:
            fork = self.manager.fork(
                session.id,
                str(session.cwd),
                dict(session.overrides),
                session.capabilities,
                [str(root) for root in session.extra_roots],
                through=through,
            )
        except RpcError as exc:
            return f"Cannot fork this session: {exc.message.removeprefix('Invalid params: ')}"
        fork.client = session.client
        what = "this session" if through is None else f"this session through prompt {through}"
        return (
            f"Forked {what} as a new session, {fork.id}"
            + (f' ("{fork.title}")' if fork.title else "")
            + ". Open it from the editor's list of sessions (session/load); this one is unchanged."
        )

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

    async def _named(self, session: Session, shown: list[dict[str, Any]]) -> None:
        """The session's first prompt names it (as session/list will): tell the editor at once."""
        if session.titled:
            return
        session.titled = True
        session.title = prompt_title(shown)
        if session.title:
            await self._tell(session, info_update(title=session.title, updated_at=now_iso()))

    async def rewind(self, params: Any) -> dict[str, Any]:
        """`_session/rewind {sessionId, promptIndex | messageId, scope}`: a rewind for a client's
        button (`session/rewinding.py`); refused while a prompt runs or waits."""
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

    async def prompt(self, params: Any) -> dict[str, Any]:
        """Validate, queue behind the running turn (D3), then run the prompt in its turn."""
        request = parse(PromptRequest, params)
        session = self.manager.get(request.session_id)
        return await self._run_prompt(session, await self._prepared(session, request))

    async def steer(self, params: Any) -> dict[str, Any]:
        """`_session/steering`: the message joins the running turn (`injected`); with none running
        it starts a turn of its own, as claude-agent-acp does (`startedNewTurn`, answered at once,
        the turn answered by its updates), or, when `_meta.steering.idleBehavior` asks for it,
        is left to the client to send as a prompt (`promptRequired`)."""
        request = parse(SteeringRequest, params)
        session = self.manager.sessions.get(request.session_id)
        if session is None:
            raise RpcError.session_not_found(request.session_id)
        if session.closing:
            raise RpcError.session_closed(request.session_id)
        prepared = await self._prepared(session, request)
        if prepared.empty or prepared.command is not None:
            raise RpcError.invalid_params(
                "Invalid params: prompt: "
                + ("it is empty" if prepared.empty else "a command runs as a prompt (session/prompt)"),
                {"field": "prompt"},
            )
        if session.steering.put(SteeringMessage(prepared.blocks, prepared.shown)):
            return {"outcome": "injected"}
        if request.prompt_required:
            return {"outcome": "promptRequired", "reason": "noRunningTurn"}
        group = self.manager.task_group
        if group is None:  # not serving (an embedder's handler): nothing can run it detached
            raise RpcError.invalid_request("No turn is running: send it with session/prompt")
        self.manager.check_queue(session)
        group.start_soon(self._steered_turn, session, prepared)
        return {"outcome": "startedNewTurn"}

    async def _prepared(self, session: Session, request: PromptRequest) -> PreparedPrompt:
        """The prompt read for the session's model; a built-in named after Claude Code's everyday
        commands (`/agents`...) gives way to the project's command of that name."""
        prepared = prepared_prompt(request, session.settings.profile)
        if (
            prepared.command is not None
            and prepared.command[0] in CLAUDE_CODE_NAMES
            and (await session.conventions.current()).find(prepared.command[0]) is not None
        ):
            return prepared_prompt(request, session.settings.profile, built_ins=False)
        return prepared

    async def _steered_turn(self, session: Session, prepared: PreparedPrompt) -> None:
        """A turn a steering message started: no request waits for its answer, so a failure is
        told to the editor (and logged) instead of lost."""
        try:
            await self._run_prompt(session, prepared, echo=True)
        except Exception as exc:  # no request answers it: it must not end the agent's task group
            message = exc.message if isinstance(exc, RpcError) else f"internal error: {exc!r}"
            log.warning("steering.turn_failed", session_id=session.id, error=message)
            with suppress(RpcError, JournalFailed):
                engine = await self.manager.engine()
                await engine.tell_failure(session, message)

    async def _run_prompt(
        self, session: Session, prepared: PreparedPrompt, *, echo: bool = False
    ) -> dict[str, Any]:
        """Run a prompt in its turn; with `echo` (no session/prompt sent it: a steering message),
        its content is shown to the editor as the user's message when the turn starts."""
        shown, command, empty, blocks = prepared
        async with self.manager.turn(session) as turn:
            if echo and not (turn.cancelled or session.closing):
                for update in user_chunks(shown, str(uuid.uuid4())):
                    await self._tell(session, update)
            if turn.cancelled or session.closing or empty or command is not None:
                engine = await self.manager.engine()
                if turn.cancelled or session.closing:  # cancelled or closed while it waited: never run
                    record = engine.quiet_turn(session, "cancelled", journal=False)
                elif empty:  # Enter on an empty line: nothing to ask the model
                    record = engine.quiet_turn(session, "end_turn", journal=True)
                else:
                    assert command is not None
                    name, arguments = command
                    answer = await self._fork_command(session, arguments) if name == "fork" else None
                    with turn.scope:  # session/cancel ends it (a rewind's question, say)
                        record = await engine.run_command(
                            name, session, self.manager.prices.get(session.model), arguments, answer=answer
                        )
                    if turn.scope.cancelled_caught:
                        record = engine.quiet_turn(session, "cancelled", journal=False)
                if not (turn.cancelled or session.closing):
                    session.spend.add(record.to_meta())
                    await self._tell(session, info_update(updated_at=now_iso()))
                return prompt_answer(record)
            await self._named(session, shown)
            result = await self.manager.prompt(session, turn, blocks, shown)
            session.spend.add(result.record.to_meta())
            if not session.closing:  # its last activity, for the editor's list of threads
                await self._tell(session, info_update(updated_at=now_iso()))
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
                self._login.key_refused()
                raise RpcError.auth_required(f"Authentication required: {failure}. {AUTH_HELP}", data)
            if failure.kind == "journal":
                raise RpcError.journal_error(f"The turn failed: {failure}", data)
            raise RpcError.internal_error(f"The turn failed: {failure}", data)
        return prompt_answer(result.record)


def prompt_answer(record: TurnRecord) -> dict[str, Any]:
    """The `session/prompt` result of a turn that ended (not failed): its stop reason (the record
    already names it as ACP does: one mapping, so the two always agree), its token usage (ACP's
    unstable `usage`, from the record's own figures) and the record under `_meta`."""
    cached_read, cached_write = record.cache_read_input_tokens, record.cache_creation_input_tokens
    usage = PromptUsage(
        total_tokens=record.input_tokens + record.output_tokens + cached_read + cached_write,
        input_tokens=record.input_tokens,
        output_tokens=record.output_tokens,
        cached_read_tokens=cached_read,
        cached_write_tokens=cached_write,
    )
    return PromptResponse(
        stop_reason=record.stop_reason,  # a failed turn ("error") is answered with an error instead
        usage=usage,
        meta={"acp-agent": {"turn": record.to_meta()}},
    ).to_wire()


def session_options(request: NewSessionRequest) -> tuple[dict[str, Any], ClientOptions]:
    """A session request's `_meta["acp-agent"]` overrides and the client's options (acpx's
    `_meta`, ACP's `systemPrompt`); acpx's `maxTurns` is `maxTurnRequests` unless the overrides
    name it. Raises RpcError -32602 naming a malformed field."""
    meta = request.meta or {}
    overrides = meta.get("acp-agent") or {}
    if not isinstance(overrides, dict):
        raise RpcError.invalid_params("Invalid params: _meta.acp-agent must be an object")
    client = read_client_options(meta, request.system_prompt)
    if client.max_turns is not None:
        overrides = {"maxTurnRequests": client.max_turns, **overrides}
    return overrides, client
