"""The sessions of the process: create, load, close and delete them, and run their turns.

A prompt turn builds a fresh meter (the reset), runs the strategy inside a cancel scope that
`session/cancel` cancels, and answers with the turn record. Turns of different sessions run at once;
within one session a prompt that arrives while a turn runs waits in the session's `PromptLine`.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import structlog

from acp_agent.config import Config
from acp_agent.errors import LimitsError, RpcError
from acp_agent.lazy import aload
from acp_agent.model.profiles import (
    ModelProfile,
    ProfileError,
    builtin_profile,
    load_prices,
    output_config,
    profile_from_api,
    thinking_param,
)
from acp_agent.protocol.lifecycle import ClientCapabilities
from acp_agent.session.models import (
    DEFAULT_EFFORT,
    available_models,
    effort_config_option,
    loop_config_option,
    model_config_option,
)
from acp_agent.session.modes import DEFAULT_MODE, mode_config_option
from acp_agent.session.permissions import SessionPermissions
from acp_agent.session.queue import PromptLine
from acp_agent.session.replay import replay_updates
from acp_agent.session.requester import Requester
from acp_agent.session.state import RunningTurn, Session
from acp_agent.session.store import JournalCorrupt, JournalWriteFailed, SessionStore
from acp_agent.turn.history import History
from acp_agent.turn.loops import choose_loop
from acp_agent.turn.settings import RunnerSettings

if TYPE_CHECKING:
    from acp_agent.model.base import ModelClient
    from acp_agent.session.engine import Engine
    from acp_agent.tools.registry import ToolRegistry
    from acp_agent.turn.driver import TurnResult

__all__ = ["SessionManager"]

log = structlog.get_logger(__name__)

MODELS_API_SECONDS = 15.0
"""How long the background Models API question may take."""
MCP_START_SECONDS = 15.0
"""How long session/new waits for its MCP servers (editors give up at about 20 s)."""

ENGINE = "acp_agent.session.engine"
"""The turn machinery, imported after the handshake (see `acp_agent.lazy`)."""
MCP = "acp_agent.tools.mcp"
"""MCP connections, imported when a session has servers."""


class SessionManager:
    """Creates sessions and runs their turns."""

    def __init__(
        self,
        config: Config,
        requester: Requester,
        model: Callable[[], Awaitable[ModelClient]],
        tools: Callable[[], ToolRegistry] | None = None,
        store: SessionStore | None = None,
        ask_models_api: bool = False,
    ) -> None:
        self.config = config
        self.store = store
        self.prices = load_prices(config.prices)
        self.requester = requester
        self._model = model
        self._tools = tools
        self._engine: Engine | None = None
        self.sessions: dict[str, Session] = {}
        self.model_info: dict[str, dict[str, Any]] = {}
        """What the Models API said of each model (`ModelInfo` as dicts), once it answered."""
        self._ask_models_api = ask_models_api
        """Ask the Models API once credentials exist (never while replaying or recording: the
        cassette holds Messages exchanges only)."""
        self._lines: dict[str, PromptLine] = {}
        """Each busy session's running and waiting prompts."""
        self.task_group: Any = None
        """Long-lived task group for per-session services (MCP servers); set by the app."""

    async def engine(self) -> Engine:
        """The turn machinery, loaded off the event loop on first use."""
        if self._engine is None:
            module = await aload(ENGINE)
            model = await self._model()
            if self._engine is None:  # another session's first prompt may have got here first
                self._engine = module.Engine(self.requester, model, self._tools)
        return self._engine

    def create(
        self, cwd: str, overrides: dict[str, Any], capabilities: ClientCapabilities | None = None
    ) -> Session:
        """A new session rooted at `cwd` (absolute), with `_meta` limit overrides applied.

        The client's capabilities decide whether tools use the editor's files and terminals.
        """
        session_id = f"sess_{uuid.uuid4().hex}"
        root = self._root(cwd)
        session = self._build(session_id, root, overrides, capabilities, History())
        if self.store is not None:  # only once the session is valid: no journal for a refusal
            session.journal = self.store.create(session_id, str(root))
            session.history.journal = session.journal.append
        log.info("session.created", session_id=session_id, cwd=str(root))
        self.learn_models()
        return session

    def load(
        self,
        session_id: str,
        cwd: str,
        overrides: dict[str, Any],
        capabilities: ClientCapabilities | None = None,
    ) -> tuple[Session, list[dict[str, Any]]]:
        """Rebuild a journaled session; returns it and the updates that show its conversation."""
        if self.store is None or not self.store.exists(session_id):
            raise RpcError.session_not_found(session_id)
        current = self.sessions.get(session_id)
        if current is not None and current.running is not None:
            raise RpcError.invalid_request(
                "The session is running a prompt; cancel it before loading it again",
                {"sessionId": session_id},
            )
        if current is not None:
            self._forget(current)
        entries, history, updates = self._replay(session_id)
        try:
            journal = self.store.reopen(session_id)
        except OSError as exc:
            raise _journal_error(session_id, JournalWriteFailed(self.store.path(session_id), exc)) from None
        history.journal = journal.append
        session = self._build(session_id, self._root(cwd), overrides, capabilities, history)
        session.journal = journal
        for entry in entries:
            if entry.get("type") == "mode":
                session.permissions.mode = str(entry.get("modeId"))
            elif entry.get("type") == "model":
                self._restore(session, str(entry.get("modelId")), session.effort)
            elif entry.get("type") == "effort":
                effort = entry.get("effort")
                self._restore(session, session.model, effort if isinstance(effort, str) else None)
        log.info("session.loaded", session_id=session_id, entries=len(entries))
        return session, updates

    def _replay(self, session_id: str) -> tuple[list[dict[str, Any]], History, list[dict[str, Any]]]:
        """The journal's entries, the history and the updates they rebuild; a bad journal is a
        clear error naming the file and the line."""
        assert self.store is not None
        path = self.store.path(session_id)
        try:
            entries = self.store.read(session_id)
            try:
                return entries, History.replay(entries), replay_updates(entries)
            except Exception as exc:  # shapes the entry check let through: still this journal's fault
                log.exception("journal.replay_failed", path=str(path))
                raise JournalCorrupt(
                    path, None, f"cannot be replayed ({type(exc).__name__}: {str(exc)[:200]})"
                ) from exc
        except (JournalCorrupt, OSError) as exc:
            raise _journal_error(session_id, exc) from None

    def _restore(self, session: Session, model_id: str, effort: str | None) -> None:
        """A journaled model or effort choice, unless the model now refuses it."""
        try:
            session.use_settings(self.settings_for(model_id, effort, session.settings))
            session.effort = effort
        except ProfileError as exc:
            log.warning("session.setting_dropped", session_id=session.id, reason=str(exc))

    def _root(self, cwd: str) -> Path:
        root = Path(cwd)
        if not root.is_dir():
            raise RpcError.invalid_params(
                f"Invalid params: cwd: {cwd!r} is not an existing directory", {"cwd": cwd}
            )
        return root.resolve()

    def _build(
        self,
        session_id: str,
        root: Path,
        overrides: dict[str, Any],
        capabilities: ClientCapabilities | None,
        history: History,
    ) -> Session:
        limits = self.config.limits.with_overrides(overrides)
        loop = choose_loop(self.config, overrides)
        config = self.config
        effort = overrides.get("effort", config.effort)
        if effort is not None and not isinstance(effort, str):
            raise LimitsError("effort", "must be a string (low, medium, high, xhigh, max) or null")
        try:
            settings = self.settings_for(config.model, effort)
        except ProfileError as exc:
            raise LimitsError("effort", str(exc).removeprefix("effort: ")) from None
        permissions = SessionPermissions(
            session_id,
            self.requester,
            DEFAULT_MODE,
            on_switch=lambda mode_id: self.switch_mode(self.sessions[session_id], mode_id),
        )
        session = Session(
            session_id,
            root,
            limits,
            history,
            permissions,
            settings,
            loop,
            capabilities or ClientCapabilities(),
        )
        session.overrides = dict(overrides)
        session.effort = effort
        if limits.max_turn_cost_usd is not None and config.model not in self.prices:
            log.warning(
                "session.cost_unknown",
                model=config.model,
                hint="maxTurnCostUsd is not enforced without a price: pass --prices FILE",
            )
        self.sessions[session_id] = session
        return session

    def learn_models(self) -> None:
        """Ask the Models API, once and in the background, which models exist and what they take.

        Called when a session is created (credentials exist by then). Sessions created after the
        answer use it; a failure leaves the built-in table in charge.
        """
        if not self._ask_models_api or self.task_group is None:
            return
        self._ask_models_api = False
        self.task_group.start_soon(self._fetch_models)

    async def _fetch_models(self) -> None:
        try:
            with anyio.fail_after(MODELS_API_SECONDS):
                client = await self._model()
                listing = getattr(client, "list_models", None)
                infos = await listing() if listing is not None else {}
        except Exception as exc:  # the table covers every built-in model
            log.info("models.unavailable", error=f"{type(exc).__name__}: {exc}"[:300])
            return
        self.model_info.update(infos)
        log.info("models.listed", models=len(infos))

    def available_models(self) -> list[str]:
        """The model config option's choices: the Models API's active models, else the built-in
        list; the configured model always among them."""
        listed = [m for m, info in self.model_info.items() if info.get("lifecycle", "active") == "active"]
        return available_models(self.config.model, listed)

    def profile(self, model_id: str) -> ModelProfile:
        """What `model_id` accepts: the built-in table, what the Models API said, the flags."""
        profile = builtin_profile(model_id)
        info = self.model_info.get(model_id)
        if info is not None:
            profile = profile_from_api(profile, info)
        if self.config.context_window:
            profile = replace(profile, context_window=self.config.context_window)
        return profile

    def settings_for(
        self, model_id: str, effort: str | None, base: RunnerSettings | None = None
    ) -> RunnerSettings:
        """What a session's requests carry on `model_id`: thinking and effort as it accepts them.

        Raises:
            ProfileError: the effort (or the configured thinking budget) is refused by the model.
        """
        config = self.config
        profile = self.profile(model_id)
        budget = (
            config.thinking_budget if "enabled" in profile.thinking_types or not profile.known else None
        )  # a budget set for another model is never sent
        values: dict[str, Any] = {
            "model": model_id,
            "max_tokens": min(config.max_tokens, profile.max_output),
            "thinking": thinking_param(profile, budget=budget),
            "output_config": output_config(profile, effort=effort),
            "context_window": profile.context_window,
            "profile": profile,
        }
        if base is not None:
            return replace(base, **values)
        return RunnerSettings(**values, compact_at=config.compact_at, on_limit=config.on_limit)

    def config_options(self, session: Session) -> list[dict[str, Any]]:
        """Every config option of a session with its current value (mode, model, effort, loop)."""
        return [
            mode_config_option(session.mode),
            model_config_option(session.model, self.available_models()),
            effort_config_option(session.effort, session.settings.profile),
            loop_config_option(session.loop.loop),
        ]

    def set_effort(self, session: Session, value: str) -> None:
        """The effort config option: a level the model accepts, or "default".

        Raises:
            ProfileError: the model does not accept that level.
        """
        effort = None if value == DEFAULT_EFFORT else value
        session.use_settings(self.settings_for(session.model, effort, session.settings))
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
            settings = self.settings_for(model_id, effort, session.settings)
        except ProfileError:  # the new model does not take the session's effort level
            effort = None
            settings = self.settings_for(model_id, None, session.settings)
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

    async def close(self, session_id: str) -> None:
        """session/close: cancel its work, stop its MCP servers, free it (the journal stays)."""
        session = self.sessions.get(session_id)
        if session is None:
            raise RpcError.unknown_session(session_id)
        self.cancel(session_id)
        line = self._lines.get(session_id)
        if line is not None and line.turns:
            with anyio.move_on_after(5):  # every prompt of the line answers `cancelled` first
                await line.turns[-1].done.wait()
        if session.mcp is not None:
            await session.mcp.aclose()
        self._forget(session)

    async def delete(self, session_id: str) -> None:
        """session/delete: close it if open and remove its journal; unknown ids succeed silently."""
        if session_id in self.sessions:
            await self.close(session_id)
        if self.store is not None:
            self.store.delete(session_id)

    def _forget(self, session: Session) -> None:
        self.sessions.pop(session.id, None)
        if session.journal is not None:
            session.journal.close()

    async def connect_mcp(self, session: Session, servers: list[dict[str, Any]]) -> list[str]:
        """Start the session's MCP servers and offer their tools; returns the failures to report.

        Called by session/new and session/load before they answer, so before the first prompt.
        """
        mcp = await aload(MCP)  # under the deferred-import lock, like every late import
        connections = mcp.McpConnections(self.task_group)
        session.mcp = connections
        tools = await connections.start(servers, cwd=session.cwd, allow_http=True, timeout=MCP_START_SECONDS)
        session.extra_tools.extend(tools)  # the runner, built on the first prompt, offers them
        failures = [f"{f.server}: {f.reason}" for f in connections.failures]
        if failures:
            log.warning("session.mcp_failed", session_id=session.id, failures=failures)
        log.info("session.mcp_connected", session_id=session.id, tools=len(tools))
        return failures

    async def aclose(self) -> None:
        """Stop every session's services (MCP servers) and close the journals."""
        for session in list(self.sessions.values()):
            if session.mcp is not None:
                await session.mcp.aclose()
            if session.journal is not None:
                session.journal.close()

    def get(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            raise RpcError.unknown_session(session_id)
        return session

    def cancel(self, session_id: str) -> bool:
        """session/cancel: end the running turn and every queued prompt; an idle or unknown
        session is ignored."""
        line = self._lines.get(session_id)  # its first turn is the session's running one
        return line.cancel() if line is not None else False

    def cancel_all(self) -> None:
        for session_id in list(self.sessions):
            self.cancel(session_id)

    @asynccontextmanager
    async def turn(self, session: Session) -> AsyncIterator[RunningTurn]:
        """Queue behind the session's running turn (FIFO); the session runs this one in the block.

        Raises -32001 when the queue is full. A turn cancelled while it waited comes out with
        `cancelled` set: answer it without running it.
        """
        line = self._lines.setdefault(session.id, PromptLine())
        try:
            async with line.turn(session.id) as turn:
                session.running = turn
                try:
                    yield turn
                finally:
                    session.running = None
        finally:
            if not line.turns and self._lines.get(session.id) is line:
                del self._lines[session.id]

    async def prompt(
        self,
        session: Session,
        turn: RunningTurn,
        blocks: list[dict[str, Any]],
        shown: list[dict[str, Any]] | None = None,
    ) -> TurnResult:
        """Run one prompt turn in `turn` (from `self.turn(session)`)."""
        engine = await self.engine()
        return await engine.run_turn(
            session, blocks, scope=turn.scope, shown=shown, price=self.prices.get(session.model)
        )


def _journal_error(session_id: str, exc: Exception) -> RpcError:
    log.warning("journal.unusable", session_id=session_id, problem=str(exc))
    data: dict[str, Any] = {"sessionId": session_id, "journal": str(getattr(exc, "path", ""))}
    if isinstance(exc, JournalCorrupt) and exc.line is not None:
        data["line"] = exc.line
    message = str(exc)
    if isinstance(exc, OSError) and not isinstance(exc, JournalWriteFailed):
        message = f"cannot read its journal: {exc.strerror or exc}"
    return RpcError.journal_error(f"Cannot load session {session_id}: {message}", data)
