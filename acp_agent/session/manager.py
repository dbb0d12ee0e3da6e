"""The sessions of the process: create, load, close and delete them, and run their turns.

A prompt turn builds a fresh meter (the reset), runs the strategy inside a cancel scope that
`session/cancel` cancels, and answers with the turn record. Turns of different sessions run at once;
within one session a prompt that arrives while a turn runs waits in the session's `PromptLine`.

What the models accept is the `ModelCatalog`'s (`options/catalog.py`); a session's options (mode, model,
effort, loop) are `SessionOptions`' (`options/config_options.py`), which session/load asks to restore the
journaled choices; reading a journal back is `journal/reload.py`'s; what a session is built from,
`builder.py`'s. The turn machinery and the journal reading are imported on first use
(`engine_class`, `journal_reload`, `journal_fork`).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

import anyio
import structlog

from acp_agent.claude_code.settings.agent_settings import AgentSettings
from acp_agent.claude_code.setup.trust import TrustStore
from acp_agent.config import Config
from acp_agent.errors import RpcError
from acp_agent.journal.listing import session_roots
from acp_agent.journal.store import SessionStore, creation_error
from acp_agent.journal.timeline import interrupted_rewind
from acp_agent.journal.titles import session_title
from acp_agent.lazy import deferred
from acp_agent.model.cloud.platforms import Platform
from acp_agent.model.profiles import load_prices
from acp_agent.model.provider import SaysWhenAnswered
from acp_agent.protocol.lifecycle import ClientCapabilities
from acp_agent.session.client_options import ClientOptions
from acp_agent.session.machinery.builder import SessionBuilder
from acp_agent.session.machinery.roots import checked_roots
from acp_agent.session.options.catalog import ModelCatalog
from acp_agent.session.options.config_options import SessionOptions
from acp_agent.session.requester import Requester
from acp_agent.session.state import RunningTurn, Session, Title, cancel_subagent
from acp_agent.session.usage import Spend
from acp_agent.tools.hidden import agent_hidden_paths, hide_credential_files
from acp_agent.turn.context.history import History
from acp_agent.turn.journal.entries import PromptEntry, RootsEntry, TitleEntry, TurnEntry
from acp_agent.user_dirs import user_data_dir

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from acp_agent.model.base import ModelClient
    from acp_agent.session.loading.reload import Reloaded
    from acp_agent.session.machinery.engine import Engine
    from acp_agent.tools.registry import ToolRegistry
    from acp_agent.turn.steering import Expected

__all__ = ["Loaded", "SessionManager", "engine_class", "journal_fork", "journal_reload"]

log = structlog.get_logger(__name__)

FIRST_ANSWER_WAIT = 120.0
"""How long the Models API question waits, at most, for a prompt's first answer to begin."""


class Loaded(NamedTuple):
    """A session rebuilt from its journal: the updates that show its conversation (session/load
    replays them), and whether its journal ends in a rewind a crash stopped mid-restore."""

    session: Session
    updates: list[dict[str, Any]]
    interrupted_rewind: bool


def new_session_id() -> str:
    """A fresh session id of the agent's own format (`sess_` and 32 hex digits)."""
    return f"sess_{uuid.uuid4().hex}"


@deferred
def engine_class() -> type[Engine]:
    """The turn machinery, imported after the handshake (see `acp_agent.lazy`)."""
    from acp_agent.session.machinery.engine import Engine

    return Engine


@deferred
def journal_reload() -> Callable[[SessionStore, str, ClientCapabilities | None], Reloaded]:
    """session/load's journal reading and replay, imported on first use (session/new needs neither)."""
    from acp_agent.session.loading.reload import reload_journal

    return reload_journal


@deferred
def journal_fork() -> Callable[..., None]:
    """session/fork's journal copy, imported on first use (with session/load's reading)."""
    from acp_agent.session.loading.fork import fork_journal

    return fork_journal


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
        platform: Platform | None = None,
        agent_settings: AgentSettings | None = None,
    ) -> None:
        self.config = config
        if platform is not None:  # before any tool runs, with the agent's own (`tools/hidden.py`)
            hide_credential_files(platform.secret_files)
        self.hidden = agent_hidden_paths(config.state_dir)  # no root, no tool, no command sees them
        self.store = store
        self.prices = load_prices(config.prices, platform.price_factor if platform else 1.0)
        self.requester = requester
        self.catalog = ModelCatalog(
            config,
            model,
            ask_models_api,
            before_asking=self.after_first_answer,
            platform=platform,
            allowlist=agent_settings.allowlist if agent_settings is not None else None,
            notes=agent_settings.describe() if agent_settings is not None else (),
        )
        self.options = SessionOptions(config, self.catalog, requester)
        self._model = model
        self._tools = tools
        self._engine: Engine | None = None
        self.sessions: dict[str, Session] = {}
        self.builder = SessionBuilder(
            config,
            self.catalog,
            self.options,
            requester,
            sessions=self.sessions,
            hidden=self.hidden,
            prices=self.prices,
            trust_store=TrustStore((config.state_dir or user_data_dir()) / "trust.json"),
            agent_settings=agent_settings,
        )

        """What a new or loaded session is built from (`builder.py`)."""
        self._open_turns = 0
        """Turns running or waiting, across the sessions (the Models API question waits for none)."""
        self._task_group: TaskGroup | None = None
        self._idle: anyio.Event | None = None
        """Set when a session's last prompt ends (see `after_first_answer`)."""

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Serve inside this block: the sessions' long-lived services (MCP servers, the Models API
        question, the command announcements) run in a task group that ends with it."""
        async with anyio.create_task_group() as group:
            self._task_group = group
            try:
                yield
            finally:
                self._task_group = None

    @property
    def task_group(self) -> TaskGroup | None:
        """The task group of `running()`; None outside it (then nothing runs in the background)."""
        return self._task_group

    async def engine(self) -> Engine:
        """The turn machinery, loaded off the event loop on first use."""
        if self._engine is None:
            engine_type = await engine_class()
            model = await self._model()
            if self._engine is None:  # another session's first prompt may have got here first
                self._engine = engine_type(
                    self.requester,
                    model,
                    self._tools,
                    self.config,
                    catalog=self.catalog,
                    prices=self.prices,
                    tasks_group=self._task_group,
                    spool_root=self.store.directory / "tasks" if self.store is not None else None,
                    store=self.store,
                )
        return self._engine

    def create(
        self,
        cwd: str,
        overrides: dict[str, Any],
        capabilities: ClientCapabilities | None = None,
        directories: list[str] | None = None,
        client: ClientOptions | None = None,
    ) -> Session:
        """A new session rooted at `cwd` (absolute) and the additional `directories`, with
        `_meta` limit overrides applied and the `client`'s options.

        The client's capabilities decide whether tools use the editor's files and terminals.
        """
        session_id = new_session_id()
        root, extra = checked_roots(cwd, directories, self.hidden)
        session = self.builder.build(
            session_id, root, overrides, capabilities, History(), client=client, extra_roots=extra
        )
        if self.store is not None:  # only once the session is valid: no journal for a refusal
            try:
                session.keep_journal(self.store.create(session_id, str(root), tuple(map(str, extra))))
            except OSError as exc:  # a full or read-only disk: keep nothing (the id is fresh)
                del self.sessions[session_id]
                with suppress(OSError):
                    self.store.delete(session_id)
                raise creation_error(self.store, session_id, exc) from None
        log.info("session.created", session_id=session_id, cwd=str(root))
        self.catalog.learn(self._task_group)
        return session

    def load(
        self,
        session_id: str,
        cwd: str,
        overrides: dict[str, Any],
        capabilities: ClientCapabilities | None = None,
        directories: list[str] | None = None,
        client: ClientOptions | None = None,
    ) -> Loaded:
        """Rebuild a journaled session, with the additional `directories` as its roots now (the
        request's whole list, `roots.py`) and the `client`'s options; returns it, the updates that
        show its conversation, and whether its journal ends in a rewind a crash stopped."""
        if self.store is None or not self.store.exists(session_id):
            raise RpcError.session_not_found(session_id)
        current = self.sessions.get(session_id)
        if current is not None and current.running is not None:
            raise RpcError.invalid_request(
                "The session is running a prompt; cancel it before loading it again",
                {"sessionId": session_id},
            )
        if current is not None:
            if current.tasks is not None:  # they belonged to the session object replaced here
                current.tasks.close_soon()
            if current.mcp is not None and self._task_group is not None:  # and its MCP servers
                self._task_group.start_soon(current.mcp.aclose)
            self._forget(current)
        root, extra = checked_roots(cwd, directories, self.hidden)
        entries, history, updates, journal = journal_reload.now()(self.store, session_id, capabilities)
        title = Title(session_title(entries), any(isinstance(e, PromptEntry | TitleEntry) for e in entries))
        try:
            session = self.builder.build(
                session_id,
                root,
                overrides,
                capabilities,
                history,
                client=client,
                extra_roots=extra,
                title=title,
                spend=Spend.of(e.record for e in entries if isinstance(e, TurnEntry)),
            )
        except BaseException:
            journal.close()  # a refused load (bad cwd or _meta) leaves no file handle behind
            raise
        session.keep_journal(journal)
        if tuple(map(str, extra)) != session_roots(entries):
            session.history.note(RootsEntry(tuple(map(str, extra))))
        updates.extend(self.options.restore(session, entries))
        log.info("session.loaded", session_id=session_id, entries=len(entries))
        return Loaded(session, updates, interrupted_rewind(entries) is not None)

    def fork(
        self,
        source_id: str,
        cwd: str,
        overrides: dict[str, Any],
        capabilities: ClientCapabilities | None = None,
        directories: list[str] | None = None,
        *,
        through: int | None = None,
        client: ClientOptions | None = None,
    ) -> Session:
        """A new session with a copy of `source_id`'s conversation (whole, or through the end of
        prompt `through`; `journal/fork.py`), rooted at `cwd` and `directories`, open here.

        The source may be open or only journaled; a turn it is running is not copied. Raises
        -32002 for a source with no journal, -32602 for a prompt it does not have (or bad roots),
        -32010 for a journal that cannot be read or written; nothing is left behind then.
        """
        if self.store is None or not self.store.exists(source_id):
            raise RpcError.session_not_found(source_id)
        root, extra = checked_roots(cwd, directories, self.hidden)
        self.config.limits.with_overrides(overrides)  # a bad `_meta` refuses the fork before it is written
        source = self.sessions.get(source_id)
        fork_id = new_session_id()
        try:
            journal_fork.now()(
                self.store,
                source_id,
                fork_id,
                str(root),
                tuple(map(str, extra)),
                through=through,
                running=source is not None and source.running is not None,
            )
        except LookupError as exc:  # PromptNotFound
            raise RpcError.invalid_params(f"Invalid params: {exc}", {"sessionId": source_id}) from None
        try:
            session = self.load(fork_id, cwd, overrides, capabilities, directories, client).session
        except BaseException:
            self.store.delete(fork_id)
            raise
        log.info("session.forked", session_id=fork_id, source=source_id, through=through)
        return session

    async def close(self, session_id: str) -> None:
        """session/close: cancel its work, stop its MCP servers, free it (the journal stays).

        From the first moment a prompt for it is refused (`get`) and a queued one ends
        `cancelled`, so no turn runs on after its journal is closed.
        """
        session = self.sessions.get(session_id)
        if session is None:
            raise RpcError.unknown_session(session_id)
        session.line.close()
        self.cancel(session_id)
        line = session.line
        if line.turns:
            with anyio.move_on_after(5):  # every prompt of the line answers `cancelled` first
                await line.turns[-1].done.wait()
        if session.hooks is not None:  # SessionEnd, within its budget
            await session.hooks.session_ended("other")
        if session.tasks is not None:  # its background commands, with all they started
            await session.tasks.aclose()
        if session.mcp is not None:
            await session.mcp.aclose()
        self._forget(session)

    def busy(self, session_id: str) -> bool:
        """A prompt of the session is running or waiting."""
        session = self.sessions.get(session_id)
        return session is not None and bool(session.line.turns)

    async def delete(self, session_id: str) -> None:
        """session/delete: close it if open and remove its journal; unknown ids succeed silently."""
        if session_id in self.sessions:
            await self.close(session_id)
        if self.store is not None:
            self.store.delete(session_id)

    def _forget(self, session: Session) -> None:
        if self.sessions.get(session.id) is session:  # not a session/load that replaced it meanwhile
            del self.sessions[session.id]
        if session.journal is not None:
            session.journal.close()

    async def aclose(self) -> None:
        """At the agent's shutdown: every session's SessionEnd hooks at once (within the exit
        grace), then stop their services (background commands, MCP servers), close the journals."""
        async with anyio.create_task_group() as group:
            for session in self.sessions.values():
                if session.hooks is not None:
                    group.start_soon(partial(session.hooks.session_ended, "prompt_input_exit", at_exit=True))
        for session in list(self.sessions.values()):
            if session.tasks is not None:
                await session.tasks.aclose()
            if session.mcp is not None:
                await session.mcp.aclose()
            if session.journal is not None:
                session.journal.close()

    def get(self, session_id: str) -> Session:
        """The open session of that id (-32602 if unknown, -32002 while it is being closed)."""
        session = self.sessions.get(session_id)
        if session is None:
            raise RpcError.unknown_session(session_id)
        if session.closing:
            raise RpcError.session_closed(session_id)
        return session

    def cancel(self, session_id: str) -> bool:
        """session/cancel: end the running turn and every queued prompt; a running subagent's
        child session (D27): only that subagent; an idle or unknown session is ignored."""
        session = self.sessions.get(session_id)  # its line's first turn is its running one
        if session is not None and session.line.turns:
            return session.line.cancel()
        return session is None and cancel_subagent(self.sessions.values(), session_id)

    def cancel_all(self) -> None:
        for session_id in list(self.sessions):
            self.cancel(session_id)

    def turns_in_progress(self) -> list[RunningTurn]:
        """Every session's turns, running or queued (a SIGINT's shutdown waits for their answers)."""
        return [turn for session in self.sessions.values() for turn in session.line.turns]

    def check_queue(self, session: Session) -> None:
        """Raises -32001 when the session's queue has no room for another prompt now."""
        session.line.check_room(session.id)

    @asynccontextmanager
    async def turn(self, session: Session, expected: Expected | None = None) -> AsyncIterator[RunningTurn]:
        """Queue behind the session's running turn (FIFO); the session runs this one in the block.
        `expected`: this turn takes the session's steering messages (`turn/steering.py`), from
        before it queues until its driver ends it (withdrawn here if it never ran).

        Raises -32001 when the queue is full. A turn cancelled while it waited comes out with
        `cancelled` set: answer it without running it.
        """
        self._open_turns += 1
        try:
            async with session.line.turn(session.id) as turn:
                session.steering.holds(expected)
                try:
                    yield turn
                finally:
                    session.steering.stop()  # the driver closed it; this covers any other way out
        finally:
            if expected is not None:
                session.steering.withdraw(expected)
            self._open_turns -= 1
            if not self._open_turns and self._idle is not None:
                self._idle.set()

    async def after_first_answer(self, model: ModelClient) -> None:
        """Returns once no prompt waits for the model's first answer: at once when no prompt runs,
        else when the API begins to answer a request of `model` or every prompt has ended. The
        Models API question waits here, so it never goes out ahead of a prompt's first request."""
        if not isinstance(model, SaysWhenAnswered) or not self._open_turns:  # others: no wait
            return
        answered = model.answered_once
        with anyio.move_on_after(FIRST_ANSWER_WAIT):
            async with anyio.create_task_group() as group:

                async def first_answer() -> None:
                    await answered()
                    group.cancel_scope.cancel()

                group.start_soon(first_answer)
                while self._open_turns:
                    self._idle = anyio.Event()
                    await self._idle.wait()
                group.cancel_scope.cancel()
