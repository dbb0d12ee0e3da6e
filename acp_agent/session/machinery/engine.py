"""A session's turn machinery (tools, turn spec, strategy), built on its first prompt.

`manager.py` keeps what a session is and answers the handshake with it; this module is how its
turns run, and it is imported only after the handshake (`acp_agent.lazy`): in the background once
`initialize` is answered, or by the first prompt, so `session/new` never waits for the loop, the
tools or the model client to load (docs/decisions.md D4).

Before a session's spec is built, the project's trust is settled (`trust_settling.py`) and the
MCP servers that waited for it start (`mcp_startup.py`); a built-in command's answer is
`command_answers.py`'s.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import anyio
import structlog

from acp_agent.claude_code.conventions.conventions import Conventions
from acp_agent.claude_code.hooks.hook_config import HookSet, read_hooks
from acp_agent.claude_code.hooks.hooks import SessionHooks
from acp_agent.claude_code.memory.instructions import Instructions
from acp_agent.config import Config
from acp_agent.errors import JournalFailed
from acp_agent.journal.checkpoints import Checkpoints
from acp_agent.journal.store import SessionStore
from acp_agent.model.base import ModelClient
from acp_agent.model.pricing import Price
from acp_agent.model.provider import SaysWhenAnswered
from acp_agent.permissions.gate import PermissionGate
from acp_agent.phases import phase
from acp_agent.session.commands.command_answers import command_answer
from acp_agent.session.commands.command_turn import (
    CommandPrompt,
    command_settings,
    command_spec,
    find_invocation,
)
from acp_agent.session.commands.rewinding import Rewinds
from acp_agent.session.editor.client_io import EditorFileSystem, EditorTerminals
from acp_agent.session.editor.elicitation import editor_elicitation
from acp_agent.session.editor.relay import Relay
from acp_agent.session.machinery.mcp_startup import start_trusted_servers
from acp_agent.session.machinery.roots import settings_roots
from acp_agent.session.machinery.sandboxing import hidden_paths, sandbox_policy
from acp_agent.session.machinery.trust_settling import read_instructions, settle_trust
from acp_agent.session.requester import Requester
from acp_agent.session.runtime import SessionRuntime, system_prompt
from acp_agent.session.subagents.tool import ModelChoice, task_tool
from acp_agent.session.system_prompt import PromptParts
from acp_agent.tools.ask_user import AskUser
from acp_agent.tools.base import NO_CHECKPOINT, ToolContext
from acp_agent.tools.files.localfs import LocalFileSystem
from acp_agent.tools.registry import ToolRegistry, default_registry
from acp_agent.tools.sandbox.command_sandbox import CommandSandbox, SandboxPolicy
from acp_agent.tools.shell.spool import SpoolFolder
from acp_agent.tools.shell.tasks import BackgroundTasks
from acp_agent.tools.skill import SkillTool
from acp_agent.turn.driver import TurnResult, journal_record
from acp_agent.turn.events import Notice
from acp_agent.turn.journal.entries import TurnEntry
from acp_agent.turn.meter import TurnMeter
from acp_agent.turn.record import TurnRecord
from acp_agent.turn.runner import TurnRunner
from acp_agent.turn.spec import TurnSpec
from acp_agent.turn.stop import TurnStop
from acp_agent.turn.strategies.base import Strategy
from acp_agent.turn.strategies.loops import import_strategy
from acp_agent.turn.strategies.select import build_strategy
from acp_agent.user_dirs import user_home

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from acp_agent.session.options.catalog import ModelCatalog
    from acp_agent.session.state import RunningTurn, Session

__all__ = ["Engine", "TurnStart"]

log = structlog.get_logger(__name__)

_QUIET_STOPS = {"end_turn": TurnStop.END_TURN, "cancelled": TurnStop.CANCELLED}
"""The ACP stop reasons of a prompt answered without a model request, as the loop's stops."""


class TurnStart(NamedTuple):
    """What a prompt's turn runs with (`Engine.start`)."""

    strategy: Strategy
    runner: TurnRunner
    meter: TurnMeter
    prompt: list[dict[str, Any]] | CommandPrompt
    turn_id: str


class Engine:
    """Builds each session's turn spec and strategy when a turn first needs them, and runs turns
    (a runner per turn, over the session's loop memory)."""

    def __init__(
        self,
        requester: Requester,
        model: ModelClient,
        tools: Callable[[], ToolRegistry] | None = None,
        config: Config | None = None,
        *,
        catalog: ModelCatalog | None = None,
        prices: Mapping[str, Price] | None = None,
        tasks_group: TaskGroup | None = None,
        spool_root: Path | None = None,
        store: SessionStore | None = None,
    ) -> None:
        self.requester = requester
        self.model = model
        self._tools = tools or default_registry
        self.hidden = hidden_paths(config)
        """The agent's own paths: no file tool shows them, and the sandbox covers them."""
        self.sandbox: SandboxPolicy | None = (
            sandbox_policy(config, self.hidden) if config is not None else None
        )
        """The policy every session's commands run under (None: no sandbox, and nobody told)."""
        self.catalog = catalog
        """The models a command file's `model` may name (None: the frontmatter key is ignored)."""
        self.prices = prices or {}
        self._tasks_group = tasks_group
        """Where the sessions' background commands are watched (None: none run in the background)."""
        self._spool_root = spool_root
        """Where their output is spooled (`<state dir>/tasks`; None: in memory only)."""
        self.rewinds = Rewinds(store, self.hidden)
        """The sessions' checkpoints (what turns change, kept for a rewind) and their rewinds."""

    async def runtime(self, session: Session) -> SessionRuntime:
        """The session's runtime (`runtime.py`), built once, on first use, when the project's trust
        is settled (`trust_settling.py`: what it widens may add roots, a mode, tools), with the
        tools it has by then (MCP included); its instruction files are read in a worker thread."""
        slot = session.runtime
        if slot.current is None:
            # The memory is read for the model: under the settings' Read denies, as the tools read.
            reading = self.hidden.with_denials(session.permissions.engine.path_denials())
            with phase("memory files"):
                instructions = await read_instructions(session, reading)
            with phase("trust settling"):
                settled = await settle_trust(session, self.requester)
            if settled and instructions.untrusted_imports:
                instructions = await read_instructions(session, reading)  # trusted now: the imports join
            with phase("MCP servers"):
                await start_trusted_servers(session, self.requester)
            with phase("commands, skills, agents"):
                conventions = await session.conventions.current()
            with phase("checkpoint store"):
                await anyio.to_thread.run_sync(self.rewinds.checkpoints, session)  # reads a loaded journal
            await import_strategy(session.loop)
            if slot.current is None:  # nobody built it while the files were read
                with phase("runtime: tools, system prompt, hooks"):
                    return slot.built(self._build(session, instructions, conventions))
        assert slot.current is not None
        return slot.current

    async def spec(self, session: Session) -> TurnSpec:
        """The spec the session's turns start from (its runtime's, built on first use)."""
        return (await self.runtime(session)).spec

    async def ready(self, session: Session, turn: RunningTurn) -> TurnResult | None:
        """Build the session's spec within `turn`'s cancel scope, before the turn's first request:
        the project's trust question waits there, and session/cancel ends it (the editor is sent
        `$/cancel_request`, a late answer is dropped). None when the spec is built; else the
        result of a turn cancelled before any request (`modelRequests` 0)."""
        with turn.scope:
            await self.spec(session)
        if not turn.scope.cancel_called:
            turn.scope = anyio.CancelScope()  # a scope is entered once: a fresh one for the turn itself
            return None
        # The turn had begun (it held the slot), as one cancelled in its UserPromptSubmit hook has:
        # its record is journaled the same way, whatever the moment the cancel came.
        return TurnResult(TurnStop.CANCELLED, self.quiet_turn(session, "cancelled", journal=True))

    def _build(
        self, session: Session, instructions: Instructions, conventions: Conventions
    ) -> SessionRuntime:
        """The runtime itself: its tools, system prompt (with `instructions` and the skills of
        `conventions`, as they are now: the prompt is a cached prefix), the settings' roots in force,
        the tool context, relay, gate and hooks, and the strategy."""
        roots = settings_roots(session.claude, session.cwd, self.hidden)  # the trust is settled
        work_roots = tuple(dict.fromkeys((*session.extra_roots, *roots)))
        registry = self._tools()
        elicitation = editor_elicitation(session.id, self.requester, session.capabilities)
        # The session's own tools, for the whole session (the tool list is a cached prefix):
        if elicitation is not None and "form" in elicitation.modes:
            registry.add(AskUser())
        if skills := conventions.model_skills():
            registry.add(SkillTool(skills))  # Agent Skills, levels 2 and 3
        for tool in session.services.tools:
            registry.add(tool)
        rules = session.permissions.engine
        if removed := rules.removed(registry.names):  # a tool a deny rule names whole (a cached prefix)
            registry = ToolRegistry(t for n in registry.names if n not in removed and (t := registry.get(n)))
        if session.client.allowed_tools is not None:  # the client's tool set (acpx --allowed-tools)
            offered = [registry.get(name) for name in registry.names if session.client.offers(name)]
            registry = ToolRegistry(t for t in offered if t is not None)  # its web tools: `builder.py`
        skills_section = conventions.skills_section()[0]
        task = task_tool(
            session,
            registry,
            self.requester,
            instructions=instructions.prompt_section(),
            skills=skills_section,
            agents=conventions.agents,
            models=self.model_choice(),
            work_roots=work_roots,
        )
        if task is not None:  # subagents (D27), with the session's other tools as they are now
            registry.add(task)
        parts = PromptParts(
            cwd=session.cwd,
            limits=session.limits,
            today=dt.date.today(),
            tools=tuple((t["name"], t.get("description", "")) for t in registry.api_tools()),
            instructions=instructions.prompt_section(),
            appended=session.client.system_append,
            skills=skills_section if "skill" in registry else "",
            extra_roots=work_roots,
        )
        services = session.services
        if services.tasks is None and self._tasks_group is not None:
            spools = SpoolFolder(self._spool_root, session.id) if self._spool_root is not None else None
            services.tasks = BackgroundTasks(self._tasks_group, spools)
        fs = session.capabilities.fs
        relay = Relay(
            session.id, self.requester, journal=session.history.note, capabilities=session.capabilities
        )
        ctx = ToolContext(
            cwd=session.cwd,
            extra_roots=work_roots,
            # None means the local disk; tools stream large local files themselves.
            fs=(
                EditorFileSystem(
                    session.id,
                    self.requester,
                    can_read=fs.read_text_file,
                    can_write=fs.write_text_file,
                    local=LocalFileSystem(),
                )
                if fs.read_text_file or fs.write_text_file
                else None
            ),
            terminal=(EditorTerminals(session.id, self.requester) if session.capabilities.terminal else None),
            elicitation=elicitation,
            hidden=self.hidden.with_denials(rules.path_denials()),  # and the settings' Read denies
            background=services.tasks,
            checkpoint=services.checkpoints or NO_CHECKPOINT,
            sandbox=(
                CommandSandbox(
                    self.sandbox, tell=lambda text: relay.emit(Notice.warning(text, str(uuid.uuid4())))
                )
                if self.sandbox is not None
                else None
            ),
        )
        hooks = self._hooks(session, relay, ctx.sandbox)
        session.permissions.notify = hooks.notify
        spec = TurnSpec(
            self.model,
            registry,
            relay,
            ctx,
            replace(session.settings, system=system_prompt(parts, session.style)),
            PermissionGate(session.permissions.engine, session.permissions.cell, session.permissions),
            attachments=instructions.on_read,
            hooks=hooks,
            steering=session.steering,
            follow=session.runtime.settings,  # a choice made while a turn runs reaches its next request
        )
        return SessionRuntime(
            spec,
            hooks,
            instructions,
            parts,
            roots,
            build_strategy(session.loop),
            session.choices,
            session.styles,
            build_strategy,
        )

    def model_choice(self) -> ModelChoice | None:
        """The models a custom agent's `model` may name (None: without a catalog, agents run on
        the session's model)."""
        catalog = self.catalog
        if catalog is None:
            return None
        return ModelChoice(catalog.named_model, catalog.settings_near, self.prices)

    def _hooks(self, session: Session, relay: Relay, sandbox: CommandSandbox | None) -> SessionHooks:
        """The session's hooks, read from its settings once the trust question is settled (a
        project's run only once trusted), run in its sandbox, shown through its relay."""
        setup = session.claude
        with phase("hooks"):
            hooks = read_hooks(setup, user_home()) if setup is not None else HookSet()
        return SessionHooks(
            hooks,
            session.id,
            session.cwd,
            mode=lambda: session.mode,
            sink=relay,
            engine=session.permissions.engine,
            roots=lambda: (session.cwd, *session.work_roots),  # once built: the runtime's roots
            journal=session.history.note,
            sandbox=sandbox,
            env=setup.env() if setup is not None else {},
            source="resume" if session.history.messages else "startup",
        )

    async def strategy(self, session: Session) -> Strategy:
        """The session's strategy (its runtime's: a loop change builds a new one)."""
        return (await self.runtime(session)).strategy

    async def start(
        self,
        session: Session,
        blocks: list[dict[str, Any]],
        slash: tuple[str, str] | None,
        price: Price | None,
    ) -> TurnStart:
        """What a prompt's turn runs with (`prompting.py` drives it): the session's strategy, a
        runner of its spec (a command's own, when the prompt's `/name` runs a command, skill or MCP
        prompt, whose prompt is then built in the turn), a fresh meter (C2.1) and the prompt (with
        the news of the background commands after it: the cached prefix holds)."""
        runtime = await self.runtime(session)
        spec, strategy = runtime.spec, runtime.strategy
        prompt: list[dict[str, Any]] | CommandPrompt = blocks
        with phase("command lookup"):
            invocation = await find_invocation(session, slash, blocks)
        if invocation is None and blocks and session.tasks is not None and (news := session.tasks.news()):
            prompt = [*blocks, {"type": "text", "text": news}]
        if invocation is not None:
            settings = note = None
            if self.catalog is not None:
                system = spec.request_settings().system
                settings, note = command_settings(invocation, session, self.catalog, system)
            if settings is not None:  # the command's own model, for this turn
                price = self.prices.get(settings.model)
            spec = command_spec(spec, invocation, settings)
            prompt = CommandPrompt(invocation, (note,) if note else ())
        meter = TurnMeter(session.limits, price=price)
        return TurnStart(strategy, TurnRunner(spec, session.memory), meter, prompt, new_turn_id())

    @asynccontextmanager
    async def around_turn(self, session: Session) -> AsyncIterator[None]:
        """A turn's checkpoints: a turn begins, the roots' snapshot is taken beside its first
        request (a turn that changed nothing needs none), and what it changed is journaled when it
        ends, even cancelled (within `TURN_END_SECONDS`)."""
        checkpoints = session.checkpoints
        try:
            async with anyio.create_task_group() as beside:
                if checkpoints is not None:
                    with phase("checkpoint turn start"):
                        await checkpoints.turn_started()
                    beside.start_soon(self._prepare, checkpoints)  # while the model reads the prompt
                yield
                beside.cancel_scope.cancel()  # a turn that changed nothing needs no snapshot
        finally:
            if checkpoints is not None:
                with anyio.CancelScope(shield=True), anyio.move_on_after(TURN_END_SECONDS):
                    await _ended(checkpoints)

    async def _prepare(self, checkpoints: Checkpoints) -> None:
        """The snapshot a turn's first change would wait for, taken beside its first request once
        the API has begun to answer one: a large repository's first snapshot is seconds of git,
        which must not compete with the agent's first request for a 2-core box's CPU. (Cancelled
        with the turn: a change that comes first takes its snapshot itself.)"""
        if isinstance(self.model, SaysWhenAnswered):
            await self.model.answered_once()
        await checkpoints.prepare()

    def quiet_turn(self, session: Session, stop_reason: str, *, journal: bool) -> TurnRecord:
        """The record of a prompt answered without a model request: an empty prompt or one cancelled
        while its session was made ready (journaled, like any turn), or one cancelled while it was
        queued (it never ran: not journaled)."""
        record = TurnRecord.from_meter(
            TurnMeter(session.limits),
            turn_id=new_turn_id(),
            stop=_QUIET_STOPS[stop_reason],
            streaming=self.model.streaming,
        )
        if journal:
            session.history.note(TurnEntry(record.to_meta()))
        return record

    async def run_command(
        self,
        name: str,
        session: Session,
        price: Price | None = None,
        arguments: str = "",
        *,
        answer: str | None = None,
    ) -> TurnRecord:
        """Run a slash command in `session`; its answer goes to the editor as an agent message.
        `answer`: the answer of a command run elsewhere (`/fork`, which the manager runs).

        A command that asked the model (`/compact`) journals its record as a prompt turn does, so
        `/cost` sums it after session/load too; one that asked nothing journals none: `/cost`
        counts no such turn, and its answer is journaled already, as a notice."""
        runner = TurnRunner(await self.spec(session), session.memory)
        meter = TurnMeter(session.limits, price=price)
        if answer is None:
            platform = self.catalog.status() if self.catalog is not None else None
            answer = await command_answer(name, arguments, session, runner, meter, self.rewinds, platform)
        await runner.sink.emit(Notice(answer, str(uuid.uuid4())))  # an answer outside the history
        record = TurnRecord.from_meter(
            meter, turn_id=new_turn_id(), stop=TurnStop.END_TURN, streaming=runner.model.streaming
        )
        if record.model_requests:
            journal_record(session.history, record.to_meta())
        return record

    async def tell_failure(self, session: Session, message: str) -> None:
        """Tell the editor that a turn nobody awaits (one a steering message started) failed:
        an error notice, journaled like any notice. Through the runtime's relay when it is built;
        else through a relay of its own: telling a failure never builds a runtime (which could ask
        the trust question outside any turn, where session/cancel cannot end it)."""
        current = session.runtime.current
        sink = (
            current.spec.sink
            if current is not None
            else Relay(
                session.id, self.requester, journal=session.history.note, capabilities=session.capabilities
            )
        )
        text = f"\n\n[acp-agent] {message}\n"
        await sink.emit(Notice(text, str(uuid.uuid4()), message, severity="error"))


TURN_END_SECONDS = 60.0
"""Bound on journaling what a turn changed (a snapshot of the roots) once it ended."""


async def _ended(checkpoints: Checkpoints) -> None:
    try:
        await checkpoints.turn_ended()
    except JournalFailed as exc:  # the turn's own answer says what the disk did
        log.warning("checkpoint.changes_lost", problem=str(exc))


def new_turn_id() -> str:
    return f"t_{uuid.uuid4().hex[:16]}"
