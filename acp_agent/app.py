"""Composition root: wires stdin/stdout, the JSON-RPC endpoint and the front handler (which builds the
session layer after `initialize`, D4), and owns shutdown.

stdin EOF, SIGTERM and SIGINT all end the same way: running turns are cancelled (and answered
`cancelled` while stdout is writable), output is flushed, and the process exits 0. A SIGINT that
finds prompts in progress (acpx's Ctrl-C, which reaches the agent just before its `session/cancel`)
waits for each to be answered at the client's pace, serving it meanwhile (its `terminal/kill` may
come late), before the bounded shutdown; stdin's EOF or a SIGTERM cuts that wait short. A signal
during the shutdown is noted, not obeyed; the third, or a second SIGINT, ends it at once
(`Termination`).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, NoReturn

import anyio
import structlog

from acp_agent.config import Config
from acp_agent.demo.workspace import DEMO_MODEL, cassette_path
from acp_agent.journal.state_dir import StateDirError, prepare_state_dir
from acp_agent.model.cloud.platforms import Platform, select_platform
from acp_agent.model.provider import ModelProvider, model_factory
from acp_agent.model.sdk import anthropic_sdk, key_in_env, take_env_keys
from acp_agent.model.spec import replay_path
from acp_agent.process.lifetime import mark_process
from acp_agent.rpc.endpoint import Endpoint, current_request_id
from acp_agent.rpc.framing import LineReader, LineWriter
from acp_agent.rpc.outgoing import Outgoing
from acp_agent.session.acp.front import FrontHandler, SessionLayer, Sessions
from acp_agent.session.auth.keys import AgentKeys, erase_initial_environ, load_key
from acp_agent.startup import dataclass_code

if TYPE_CHECKING:
    from acp_agent.claude_code.settings.agent_settings import AgentSettings
    from acp_agent.model.cloud.credential_helpers import Helpers

__all__ = ["run", "serve"]

log = structlog.get_logger(__name__)

WARM_UP = (model_factory, anthropic_sdk)
"""Imported in the background once `initialize` is answered, after the session layer and the turn
machinery (`session/acp/front.py`) and once the client's TLS context has begun to be built beside
them (`ModelProvider.start_tls`), in the order a first prompt needs; then the model client is built
(`ModelProvider.warm`), and what remains waits for the API to answer a first request
(`ModelProvider.after_first_answer`)."""

SHUTDOWN_GRACE = 1.5
"""Seconds that cancelled turns get to answer before the process exits (the client waits 2 s)."""

THREAD_GRACE = 0.25
"""Seconds, in all, that worker threads get to end once the event loop is closed (`leave`)."""


async def serve(
    config: Config, stdin_fd: int = 0, stdout_fd: int = 1, agent_settings: AgentSettings | None = None
) -> int:
    """Serve ACP until stdin closes or a termination signal arrives; returns the exit code.

    `agent_settings`: the managed policy and what the configuration took from the user's and the
    managed settings at start-up (`cli.py` reads them first; read here when not given)."""
    writer = LineWriter(stdout_fd)
    reader = LineReader(stdin_fd, max_line_bytes=config.max_line_bytes)
    to_client = Outgoing(writer)  # the session layer's Requester; the endpoint delivers the answers
    if agent_settings is None:
        from acp_agent.claude_code.settings.agent_settings import read_start_settings

        agent_settings = read_start_settings()
    _log_settings(agent_settings)
    spec = config.model
    if spec == DEMO_MODEL:
        spec = f"replay:{cassette_path()}"
    replaying = replay_path(spec) is not None
    # The platform, from the environment with the user's and the managed settings' `env` over it
    # (`model/cloud/platforms.py`, `claude_code/settings/agent_settings.py`); a replay is the Anthropic API's.
    agent_settings = agent_settings.with_pins_checked(os.environ)  # a pin outside availableModels
    environment = agent_settings.environment(os.environ)
    platform = Platform("anthropic", "Anthropic API") if replaying else select_platform(environment)
    _lay_settings_secrets(agent_settings.env, platform.secrets)
    taken = take_env_keys(platform.secrets)  # before any tool runs: no command can read a credential
    if taken:
        erase_initial_environ(taken)
    mark_process()  # what the agent starts dies with it, kill -9 included (`process/lifetime.py`)
    if platform.problem:
        log.warning("agent.platform_problem", platform=platform.name, problem=platform.problem)
    spec = platform.models.session_model(spec)
    helpers = functools.cache(functools.partial(_settings_helpers, agent_settings))
    stored_key = None
    if not replaying and platform.first_party and not key_in_env():
        stored_key = load_key()
        if stored_key is None:
            log.warning(
                "agent.no_api_key",
                hint="set ANTHROPIC_API_KEY, run `acp-agent login`, "
                "or start with --model demo for the offline demo",
            )
    model = ModelProvider(
        spec,
        streaming=config.streaming,
        record=config.record,
        replay_strict=config.replay_strict,
        base_url=config.base_url,
        max_retries=config.max_retries,
        stall_seconds=config.stall_seconds,
        request_timeout=config.request_timeout,
        prompt_cache=config.prompt_cache,
        cache_ttl=config.cache_ttl,
        platform=platform,
        helpers=None if replaying else helpers,
        **({"api_key": stored_key} if stored_key else {}),
    )
    if model.model_id != config.model:
        config = config.model_copy(update={"model": model.model_id})
    state_dir = _state_dir(config)
    keys = AgentKeys(  # a replay needs no key (the cassette answers), a cloud platform signs in
        model,
        replaying=replaying,
        elsewhere=lambda: not platform.first_party or bool(helpers().api_key_helper),
    )

    def build(layer: SessionLayer) -> Sessions:
        """The session layer, built once the front has it imported (after `initialize`, D4)."""
        store = (
            None if state_dir is None else layer.store.checked(state_dir, keep_days=config.keep_days or None)
        )
        manager = layer.manager(
            config,
            to_client,
            model=model,
            store=store,
            ask_models_api=not replaying and config.record is None and platform.features.models_api,
            platform=platform,
            agent_settings=agent_settings,
        )
        return Sessions(manager, layer.handler(manager, keys=keys, request_id=current_request_id))

    front = FrontHandler(
        build,
        journaled=state_dir is not None,
        warm_up_steps=(model.start_tls, *WARM_UP, model.warm, model.after_first_answer),
    )
    endpoint = Endpoint(front, to_client)

    termination = Termination()

    async def cancel_turns() -> None:
        termination.begin()  # a signal from now on finds the shutdown under way
        front.cancel_turns()

    serving = anyio.CancelScope()
    log.info("agent.started", model=config.model, streaming=config.streaming)
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async with anyio.create_task_group() as watching:  # through the whole shutdown below
            watching.start_soon(_watch_signals, signals, termination, front, serving, to_client.close)
            try:
                with serving:
                    async with anyio.create_task_group() as tg, front.running():
                        tg.start_soon(writer.run)
                        await endpoint.serve(reader, on_eof=cancel_turns, grace=SHUTDOWN_GRACE)
                        await writer.flush(timeout=0.5)
                        tg.cancel_scope.cancel()
            finally:
                termination.begin()
                with anyio.CancelScope(shield=True):
                    await front.aclose()
                    await writer.aclose()
                    await reader.aclose()
                    await model.aclose()
            watching.cancel_scope.cancel()
    termination.hold()  # the event loop's handlers are gone: the same rule until the exit (`leave`)
    log.info("agent.stopped")
    return 0


def _settings_helpers(agent_settings: AgentSettings) -> Helpers:
    """`apiKeyHelper`, `awsAuthRefresh` and `awsCredentialExport`, each from the highest of the
    managed policy, acp-agent's settings file and the user's that names it (read at start-up;
    imported when the model client is first built). A project's are never run
    (`claude_code/settings/agent_settings.py` says why)."""
    from acp_agent.model.cloud.credential_helpers import helpers_from_settings

    return helpers_from_settings(*agent_settings.helper_settings())


def _lay_settings_secrets(env: Mapping[str, str], secrets: Sequence[str]) -> None:
    """Put the credentials a settings file's `env` gives the platform into the environment, so
    `take_env_keys` takes them with the others (the model client then has them, and no process
    ever sees them); an empty value unsets the variable, as Claude Code has it."""
    for name in secrets:
        if name in env:
            if env[name]:
                os.environ[name] = env[name]
            else:
                os.environ.pop(name, None)


def _log_settings(agent_settings: AgentSettings) -> None:
    """Say at start-up which policy holds and what the settings files gave the configuration."""
    policy = agent_settings.policy
    if policy.present:
        log.info(
            "agent.managed_policy",
            directory=str(policy.directory),
            files=[str(f) for f in policy.files],
            broken=list(policy.broken),
        )
    for warning in (*policy.warnings, *agent_settings.warnings):
        log.warning("agent.settings_warning", warning=warning)
    if agent_settings.env:
        log.info("agent.settings_env", variables=sorted(agent_settings.env))  # names only: values may be keys


class Termination:
    """SIGTERM and SIGINT over the agent's whole life, its bounded shutdown included.

    The first signal (or stdin's EOF) begins the shutdown. A signal while it runs is noted, not
    obeyed, so SessionEnd hooks finish and journals close: acpx ends stdin and sends SIGTERM
    240 ms later, some editors signal twice, and the shutdown is bounded anyway (`SHUTDOWN_GRACE`
    for turns, as much for SessionEnd, then `THREAD_GRACE`). The third signal, or a second SIGINT
    (Ctrl-C twice), ends the process at once by that signal: what it started dies with it
    (`process/lifetime.py`) and every journal entry is on disk already.
    """

    def __init__(self) -> None:
        self.begun = False
        self._received: list[signal.Signals] = []

    def begin(self) -> None:
        """The shutdown is under way (stdin's EOF, or the serving ended): a signal is a repeat."""
        self.begun = True

    def received(self, signum: int, *, quiet: bool = False) -> bool:
        """Note a signal: True when it begins the shutdown; a repeat that ends the process never
        returns. `quiet`: from a signal handler, where writing a log line could re-enter a write."""
        sig = signal.Signals(signum)
        self._received.append(sig)
        if not self.begun:
            self.begun = True
            if not quiet:
                log.info("agent.signal", signal=sig.name)
            return True
        at_once = len(self._received) >= 3 or self._received.count(signal.SIGINT) >= 2
        if not quiet:
            action = "leaving at once" if at_once else "finishing the shutdown first (it is bounded)"
            log.warning("agent.signal_repeated", signal=sig.name, action=action)
        if at_once:
            _die_by(sig)
        return False

    def hold(self) -> None:
        """Apply the same rule, quietly, once the event loop's handlers are removed."""
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self.received(signum, quiet=True)


def _die_by(sig: signal.Signals) -> NoReturn:
    """End the process by `sig` itself (the status a parent expects of an unhandled signal)."""
    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
    os._exit(128 + sig)  # not reached: the default action of SIGTERM and SIGINT ends the process


async def _watch_signals(
    signals: AsyncIterator[int],
    termination: Termination,
    front: FrontHandler,
    serving: anyio.CancelScope,
    stop_calling: Callable[[], None],
) -> None:
    """Every SIGTERM/SIGINT until the shutdown is done; the first one stops serving, a SIGINT once
    the prompts in progress are answered; a repeat (a SIGTERM) cuts that wait short."""
    hurry = anyio.Event()
    async with anyio.create_task_group() as tg:
        async for signum in signals:
            if termination.received(signum):
                manager = front.manager  # None before the session layer is built: no turn runs
                patient = (
                    signum == signal.SIGINT and manager is not None and bool(manager.turns_in_progress())
                )
                tg.start_soon(_stop_serving, front, serving, stop_calling, hurry if patient else None)
            else:
                hurry.set()


async def _stop_serving(
    front: FrontHandler,
    serving: anyio.CancelScope,
    stop_calling: Callable[[], None],
    patience: anyio.Event | None,
) -> None:
    """Cancel running turns, give them a moment to answer, then stop calling the client (a call
    still waiting for its answer, a `terminal/kill` say, fails then, as at EOF) and stop serving.
    With `patience` (a SIGINT found prompts in progress), first wait until each is answered,
    however long the client takes to answer what the cancel asks of it, or until `patience` is
    set (a SIGTERM)."""
    front.cancel_turns()
    manager = front.manager
    if manager is None:
        serving.cancel()
        return
    if patience is not None:
        waiting = manager.turns_in_progress()
        log.info("agent.interrupted", prompts=len(waiting), until="each is answered (or EOF, SIGTERM)")
        async with anyio.create_task_group() as race:

            async def hurried() -> None:
                await patience.wait()
                race.cancel_scope.cancel()

            race.start_soon(hurried)
            for turn in waiting:
                await turn.done.wait()
            race.cancel_scope.cancel()
        front.cancel_turns()  # a prompt sent meanwhile
    with anyio.move_on_after(SHUTDOWN_GRACE):
        for turn in [s.running for s in manager.sessions.values() if s.running]:
            await turn.done.wait()
    stop_calling()
    serving.cancel()


def _state_dir(config: Config) -> Path | None:
    """Where sessions are journaled, checked now so `initialize` can say whether they are (the
    journal machinery is imported later); None when they are not."""
    if not config.journal:
        return None
    directory = config.state_dir
    if directory is None:
        from acp_agent.user_dirs import user_data_dir

        directory = user_data_dir() / "sessions"
    try:
        prepare_state_dir(directory)
    except StateDirError as exc:  # the agent still serves, without session/load (issue 19)
        log.error(
            "agent.state_dir_unusable",
            problem=str(exc),
            hint="fix or change --state-dir / ACP_AGENT_STATE_DIR; sessions are not kept",
        )
        return None
    return directory


def _threads_left(grace: float) -> list[threading.Thread]:
    """The non-daemon threads still alive after `grace` seconds in all. AnyIO stops its idle
    worker threads as the event loop closes, a moment after `anyio.run` returns: they end within
    the grace, and only a thread really blocked (in the kernel, in a tool) is left."""
    deadline = time.monotonic() + grace
    others = [t for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon]
    for thread in others:
        thread.join(max(0.0, deadline - time.monotonic()))
    return [t for t in others if t.is_alive()]


def run(config: Config, agent_settings: AgentSettings | None = None) -> NoReturn:
    """Run the server on the asyncio backend, then leave at once (`leave`)."""
    leave(anyio.run(functools.partial(serve, config, agent_settings=agent_settings)))


def leave(code: int) -> NoReturn:
    """Exit without the interpreter's teardown, once everything that matters is out.

    By now the protocol stream is flushed and closed, the journals are closed (each entry was
    fsynced when it was reported), MCP servers and commands are stopped, and the cassette is
    written. What normal exit would still do is free the module graph of the SDK, pydantic and
    httpx (~0.6-0.9 s of garbage collection here) and join worker threads: nothing an editor
    waits for (acpx sends SIGTERM 240 ms after EOF), and a tool's thread blocked in the kernel (a
    FIFO, a hung mount) could not be interrupted anyway: it is named in the log and left behind.
    """
    stuck = [t.name for t in _threads_left(grace=THREAD_GRACE)]
    if stuck:
        log.warning("agent.stuck_threads", threads=stuck, action="exiting without waiting for them")
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    logging.shutdown()
    with contextlib.suppress(Exception):  # never in the way of the quick exit
        dataclass_code.save()  # what was compiled since the warm-up kept the table (mostly nothing)
    os._exit(code)
