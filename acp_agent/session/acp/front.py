"""The handler the endpoint starts with: `initialize` is answered before the session layer exists.

An editor waits for `initialize`, and importing the session layer (the manager, the journal's
vocabulary, the turn events) costs ~45 ms on the 2-core box (docs/decisions.md D4). So this front
answers `initialize` itself (`handshake.py`, the answer `AcpHandler` gives too), then the warm-up
imports the layer first (`session_layer`) and the front builds it on the event loop with the app's
`build`. Every other request waits for that (`LAYER_WAIT` at most) and goes to the real
`AcpHandler`, which is handed the client's `initialize`. A notification or a `$/cancel_request` that
comes before the layer exists has no session to act on: there is none yet.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import CancelledError
from contextlib import asynccontextmanager, suppress
from typing import TYPE_CHECKING, Any, NamedTuple

import anyio
import anyio.from_thread
import anyio.lowlevel
import structlog

from acp_agent.errors import RpcError
from acp_agent.lazy import Deferred, deferred, warm_up
from acp_agent.protocol.lifecycle import InitializeRequest
from acp_agent.session.acp.handshake import initialize_answer
from acp_agent.session.params import parse
from acp_agent.startup import collector, dataclass_code

if TYPE_CHECKING:
    from anyio.abc import TaskGroup, TaskStatus

    from acp_agent.journal.store import SessionStore
    from acp_agent.session.acp.handlers import AcpHandler
    from acp_agent.session.machinery.engine import Engine
    from acp_agent.session.manager import SessionManager

__all__ = ["LAYER_WAIT", "FrontHandler", "SessionLayer", "Sessions", "session_layer"]

log = structlog.get_logger(__name__)

LAYER_WAIT = 60.0
"""Seconds a request waits, at most, for the session layer (its import takes ~50 ms; a loaded box
and a cold disk can make that seconds, never a minute)."""

WarmUpStep = Deferred[Any] | Callable[[], object]


class SessionLayer(NamedTuple):
    """What the warm-up imports first: the session layer's classes, and the turn machinery's import."""

    handler: type[AcpHandler]
    manager: type[SessionManager]
    store: type[SessionStore]
    engine: Deferred[type[Engine]]


class Sessions(NamedTuple):
    """The built session layer: the manager and the handler that routes ACP methods to it."""

    manager: SessionManager
    handler: AcpHandler


@deferred
def session_layer() -> SessionLayer:
    """The session layer, imported after the handshake (see `acp_agent.lazy`)."""
    from acp_agent.journal.store import SessionStore
    from acp_agent.session.acp.handlers import AcpHandler
    from acp_agent.session.manager import SessionManager, engine_class

    return SessionLayer(AcpHandler, SessionManager, SessionStore, engine_class)


def turn_machinery() -> None:
    """Warm-up step: the turn machinery, imported once the layer that names it is."""
    session_layer.now().engine.now()


def parsers() -> None:
    """Warm-up step, the last: tree-sitter's bash grammar, which the rules on commands read
    (`tools/shell/shell_syntax.py`), the `regex` package, which a hook's expression matcher and
    the Python search compile with (`tools/search/regex_bounds.py`), pathspec, which reads a
    `.gitignore` and a memory rule's `paths:` (`tools/globs.py`), and the strategies that verify
    (`turn/strategies/loops.py`), so none loads on the event loop when first used. After the model
    client, and after the first request is answered when the steps before wait for it (`app.py`):
    a first request never waits for them, nor shares the GIL with them (~27 ms of CPU)."""
    from acp_agent.tools.globs import gitignore_spec
    from acp_agent.tools.search.regex_bounds import regex_module
    from acp_agent.tools.shell.shell_syntax import bash_parser  # loaded by the machinery by now
    from acp_agent.turn.strategies.loops import verifying_strategies

    bash_parser.now()
    regex_module.now()
    gitignore_spec.now()
    verifying_strategies.now()


class FrontHandler:
    """The endpoint's `Handler`: answers `initialize`, builds the session layer once, delegates."""

    def __init__(
        self,
        build: Callable[[SessionLayer], Sessions],
        *,
        journaled: bool,
        warm_up_steps: Sequence[WarmUpStep] | None = None,
    ) -> None:
        """`build` makes the manager and handler from the imported classes (the app composes them);
        `journaled` says whether the state dir is usable; `warm_up_steps` run after the layer and
        the turn machinery in the warm-up thread, then the collector paused at start-up resumes
        (`startup/collector.py`), the parsers load, and last the dataclasses' compiled methods are
        kept (`startup/dataclass_code.py`) (None: no warm-up, the layer loads on first use)."""
        self._build = build
        self.journaled = journaled
        self._steps = warm_up_steps
        self._hello: InitializeRequest | None = None
        self._sessions: Sessions | None = None
        self._group: TaskGroup | None = None
        self._done: anyio.Event | None = None
        """Set when the build under way has ended, built or failed (None: none under way)."""
        self._imported: anyio.Event | None = None
        """Set by the warm-up thread once it has imported the layer (None: no warm-up started)."""

    @property
    def manager(self) -> SessionManager | None:
        """The session manager, once the layer is built."""
        return self._sessions.manager if self._sessions is not None else None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Serve inside this block: the build and the manager's own `running()` live in it."""
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield
            finally:
                self._group = None
                group.cancel_scope.cancel()

    async def handle_request(self, method: str, params: Any) -> Any:
        """`initialize` answered here; any other method goes straight to its handler in the
        session layer's method table (built once, D4): `session/prompt` to the prompt turns."""
        if method == "initialize":
            return self.initialize(params)
        sessions = await self.sessions()
        return await sessions.handler.route(method)(params)

    async def handle_notification(self, method: str, params: Any) -> None:
        if self._sessions is not None:
            await self._sessions.handler.handle_notification(method, params)

    def cancel_request(self, method: str, params: Any) -> bool:
        if self._sessions is None:
            return False  # the endpoint cancels the waiting request itself
        return self._sessions.handler.cancel_request(method, params)

    def initialize(self, params: Any) -> dict[str, Any]:
        """Answer from `handshake.py`, start the warm-up (once) and the build of the layer."""
        request = parse(InitializeRequest, params)
        self._hello = request
        if self._sessions is not None:
            self._sessions.handler.accept(request)
        self._warm_up()
        self._start_build()
        return initialize_answer(request, journaled=self.journaled)

    async def sessions(self) -> Sessions:
        """The built layer: waits for the build under way (or starts one), `LAYER_WAIT` at most."""
        if self._sessions is not None:
            return self._sessions
        done = self._start_build()
        with anyio.move_on_after(LAYER_WAIT):
            await done.wait()
        if self._sessions is None:
            raise RpcError.internal_error(
                "Internal error: the session layer could not be loaded (see the log)"
            )
        return self._sessions

    async def aclose(self) -> None:
        """Stop the sessions' services and close their journals (nothing to do if never built)."""
        if self._sessions is not None:
            await self._sessions.manager.aclose()

    def cancel_turns(self) -> None:
        """Cancel every running turn (there is none before the layer is built)."""
        if self._sessions is not None:
            self._sessions.manager.cancel_all()

    def _warm_up(self) -> None:
        if self._steps is None or self._imported is not None:
            return
        imported = self._imported = anyio.Event()
        token = anyio.lowlevel.current_token()

        async def built() -> None:
            imported.set()
            if self._done is not None:  # the build runs on the loop: leave it the GIL meanwhile
                with anyio.move_on_after(LAYER_WAIT):
                    await self._done.wait()

        def layer_imported() -> None:
            """Warm-up step: tell the loop, and go on with the turn machinery once it is built."""
            with suppress(RuntimeError, CancelledError):  # the loop ended (EOF after initialize)
                anyio.from_thread.run(built, token=token)

        steps: list[WarmUpStep] = [session_layer, layer_imported, turn_machinery, *self._steps]
        warm_up([*steps, collector.resume, parsers, dataclass_code.keep])

    def _start_build(self) -> anyio.Event:
        if self._done is None:
            if self._group is None:
                raise RpcError.internal_error("Internal error: the agent is not serving")
            self._done = anyio.Event()
            self._group.start_soon(self._build_layer, self._done)
        return self._done

    async def _build_layer(self, done: anyio.Event) -> None:
        try:
            if self._imported is not None:  # the warm-up imports it: wait, never a second import
                with anyio.move_on_after(LAYER_WAIT):
                    await self._imported.wait()
            layer = await session_layer()  # at once once imported; a failed import raises again
            sessions = self._build(layer)
            if self._hello is not None:
                sessions.handler.accept(self._hello)
            assert self._group is not None
            await self._group.start(_serve_sessions, sessions.manager)
            self._sessions = sessions
        except Exception:
            log.exception("session.layer_failed")
            self._done = None  # the next request tries again
        finally:
            if self._imported is not None:  # start-up goes on in the warm-up, which resumes it
                collector.freeze()
            else:
                collector.resume()  # start-up is over: collect again (paused by `__main__`)
            done.set()


async def _serve_sessions(
    manager: SessionManager, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
) -> None:
    """The manager's `running()` block, for as long as the front serves."""
    async with manager.running():
        task_status.started()
        await anyio.sleep_forever()
