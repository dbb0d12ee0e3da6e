"""A session's turn machinery (tools, runner, strategy), built on its first prompt.

`manager.py` keeps what a session is and answers the handshake with it; this module is how its
turns run, and it is imported only after the handshake (`acp_agent.lazy`): in the background once
`initialize` is answered, or by the first prompt, so `session/new` never waits for the loop, the
tools or the model client to load (docs/decisions.md D4).
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import structlog

from acp_agent.config import Config
from acp_agent.errors import JournalFailed
from acp_agent.model.base import ModelClient
from acp_agent.model.pricing import Price
from acp_agent.model.server_tools import WebTools
from acp_agent.session.claude.hook_config import HookSet, read_hooks
from acp_agent.session.claude.hooks import SessionHooks
from acp_agent.session.claude.trust import Widening
from acp_agent.session.command_turn import CommandTurn, command_settings, find_invocation
from acp_agent.session.commands.conventions import Conventions
from acp_agent.session.commands.instructions import Instructions, load_instructions
from acp_agent.session.commands.memory_files import ImportTrust, may_import_outside
from acp_agent.session.editor.announce import announce_commands
from acp_agent.session.editor.client_io import EditorFileSystem, EditorTerminals
from acp_agent.session.editor.elicitation import editor_elicitation
from acp_agent.session.editor.relay import Relay
from acp_agent.session.editor.trust_question import ask_trust
from acp_agent.session.journal.checkpoints import Checkpoints
from acp_agent.session.journal.store import SessionStore
from acp_agent.session.mcp_servers import MCP_START_SECONDS, SessionServers
from acp_agent.session.options.config_options import DEFAULT_MODE
from acp_agent.session.requester import Requester
from acp_agent.session.rewinding import Rewinds
from acp_agent.session.roots import settings_roots
from acp_agent.session.sandboxing import hidden_paths, sandbox_policy
from acp_agent.session.subagents.listing import agents_notice
from acp_agent.session.subagents.tool import ModelChoice, task_tool
from acp_agent.session.system_prompt import PromptParts
from acp_agent.session.usage import context_report
from acp_agent.tools.ask_user import AskUser
from acp_agent.tools.base import NO_CHECKPOINT, ToolContext
from acp_agent.tools.files.localfs import LocalFileSystem
from acp_agent.tools.hidden import NOTHING_HIDDEN, HiddenPaths
from acp_agent.tools.registry import ToolRegistry, default_registry
from acp_agent.tools.sandbox.command_sandbox import CommandSandbox, SandboxPolicy
from acp_agent.tools.shell.spool import SpoolFolder
from acp_agent.tools.shell.tasks import BackgroundTasks
from acp_agent.tools.skill import SkillTool
from acp_agent.turn.context import clearing
from acp_agent.turn.context.attachments import attached
from acp_agent.turn.driver import TurnResult, drive_turn
from acp_agent.turn.events import Notice
from acp_agent.turn.journal.entries import TurnEntry
from acp_agent.turn.meter import TurnMeter
from acp_agent.turn.record import TurnRecord
from acp_agent.turn.runner import TurnRunner
from acp_agent.turn.stop import TurnStop
from acp_agent.turn.strategies import Strategy, build_strategy
from acp_agent.turn.subagents.task import TaskTool
from acp_agent.user_dirs import user_config_dir, user_home

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from acp_agent.session.options.catalog import ModelCatalog
    from acp_agent.session.state import Session

__all__ = ["Engine"]

log = structlog.get_logger(__name__)

NO_TASKS = "Background commands cannot run in this session (the agent serves no task group)."
_QUIET_STOPS = {"end_turn": TurnStop.END_TURN, "cancelled": TurnStop.CANCELLED}
"""The ACP stop reasons of a prompt answered without a model request, as the loop's stops."""


class Engine:
    """Builds each session's runner and strategy when a turn first needs them, and runs turns."""

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

    async def runner(self, session: Session) -> TurnRunner:
        """The session's runner, built on first use with the tools it has by then (MCP included);
        the project's trust is settled first (what it widens may add roots, a mode, tools), and
        its instruction files are read in a worker thread."""
        if session.runner is None:
            instructions = await self.instructions(session)
            if await self.settle_trust(session) and instructions.untrusted_imports:
                instructions = await self.instructions(session)  # trusted now: the imports join
            await self.start_trusted_servers(session)
            conventions = await session.conventions.current()
            await anyio.to_thread.run_sync(self.rewinds.checkpoints, session)  # reads a loaded journal
            if session.runner is None:  # nobody built it while the files were read
                session.runner = self._build(session, instructions, conventions)
        return session.runner

    async def instructions(self, session: Session) -> Instructions:
        """The session's memory files, read with the settings' `claudeMdExcludes`; an import
        outside the workspace is read once the project's trust covers it, and otherwise becomes
        one of the things the trust question lists (`claude/trust.py`)."""
        setup = session.claude
        trust = setup.trust if setup is not None else None
        excludes = [e for e, _ in setup.listed("claudeMdExcludes")] if setup is not None else []

        def may_import(folder: Path, target: Path) -> bool:
            return trust is not None and trust.allows(_import_item(target))

        found = await session_instructions(
            session.cwd, hidden=self.hidden, excludes=excludes, trust=may_import
        )
        if trust is not None:
            for _, imported in found.untrusted_imports:
                trust.expect(_import_item(imported))
        return found

    async def settle_trust(self, session: Session) -> bool:
        """Before the session's first request: ask the project's trust if no answer covers what it
        widens now, and once granted now, apply what it enables (its `defaultMode`, if the session
        is still in the default one, its `additionalDirectories`, and the commands, skills and
        agents of the plugins it enables). True when it was granted now."""
        setup = session.claude
        trust = setup.trust if setup is not None else None
        if setup is None or trust is None or trust.recall():
            return False
        await ask_trust(session.id, self.requester, trust)
        if not trust.trusted:
            log.info("claude.untrusted", session_id=session.id, left_off=[i.line() for i in trust.left_off()])
            return False
        found = setup.default_mode
        if found is not None and session.mode == DEFAULT_MODE and found[0] in session.permissions.modes:
            await session.permissions.switch_mode(found[0])
        session.settings_roots = settings_roots(setup, session.cwd, self.hidden)
        if any(p.widening is not None for p in setup.plugins):  # now in force: offer what they hold
            session.conventions.forget()
            await announce_commands(session.id, session.conventions, self.requester, first=False)
        return True

    async def start_trusted_servers(self, session: Session) -> None:
        """The project's MCP servers that waited for its trust, started once it is settled (before
        the first request: their tools join the tool list the whole session keeps)."""
        servers, setup = session.servers, session.claude
        if servers is None or session.mcp is None:
            return
        rows = servers.trusted(setup.trust if setup is not None else None)
        tools = await servers.start(rows, session.mcp, cwd=session.cwd, timeout=MCP_START_SECONDS)
        if rows:
            session.extra_tools.extend(tools)
            session.conventions.set_prompts(session.mcp.prompts)
            await announce_commands(session.id, session.conventions, self.requester, first=False)
            log.info("session.project_mcp_started", session_id=session.id, tools=len(tools))

    def _build(self, session: Session, instructions: Instructions, conventions: Conventions) -> TurnRunner:
        """The runner itself: its tools, system prompt (with `instructions` and the skills of
        `conventions`, as they are now: the prompt is a cached prefix), context and relay."""
        registry = self._tools()
        elicitation = editor_elicitation(session.id, self.requester, session.capabilities)
        # The session's own tools, for the whole session (the tool list is a cached prefix):
        if elicitation is not None and "form" in elicitation.modes:
            registry.add(AskUser())
        if skills := conventions.model_skills():
            registry.add(SkillTool(skills))  # Agent Skills, levels 2 and 3
        for tool in session.extra_tools:
            registry.add(tool)
        rules = session.permissions.engine
        if removed := rules.removed(registry.names):  # a tool a deny rule names whole (a cached prefix)
            registry = ToolRegistry(t for n in registry.names if n not in removed and (t := registry.get(n)))
        if session.client.allowed_tools is not None:  # the client's tool set (acpx --allowed-tools)
            offered = [registry.get(name) for name in registry.names if session.client.offers(name)]
            registry = ToolRegistry(t for t in offered if t is not None)
            web = session.settings.web  # its web tools too (kept through model switches)
            session.settings = replace(
                session.settings, web=replace(web, names=frozenset(filter(session.client.offers, web.names)))
            )
        skills_section = conventions.skills_section()[0]
        task = task_tool(
            session,
            registry,
            self.requester,
            instructions=instructions.prompt_section(),
            skills=skills_section,
            agents=conventions.agents,
            models=self.model_choice(),
        )
        if task is not None:  # subagents (D27), with the session's other tools as they are now
            registry.add(task)
        session.instructions = instructions
        session.prompt_parts = parts = PromptParts(
            cwd=session.cwd,
            limits=session.limits,
            today=dt.date.today(),
            tools=tuple((t["name"], t.get("description", "")) for t in registry.api_tools()),
            instructions=instructions.prompt_section(),
            appended=session.client.system_append,
            skills=skills_section if "skill" in registry else "",
            extra_roots=session.work_roots,
        )
        settings = replace(session.settings, system=session.system_prompt(parts))  # in its output style
        if session.tasks is None and self._tasks_group is not None:
            spools = SpoolFolder(self._spool_root, session.id) if self._spool_root is not None else None
            session.tasks = BackgroundTasks(self._tasks_group, spools)
        fs = session.capabilities.fs
        relay = Relay(
            session.id, self.requester, journal=session.history.note, capabilities=session.capabilities
        )
        ctx = ToolContext(
            cwd=session.cwd,
            extra_roots=session.work_roots,
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
            background=session.tasks,
            checkpoint=session.checkpoints or NO_CHECKPOINT,
            sandbox=(
                CommandSandbox(
                    self.sandbox, tell=lambda text: relay.emit(Notice.warning(text, str(uuid.uuid4())))
                )
                if self.sandbox is not None
                else None
            ),
        )
        session.hooks = self._hooks(session, relay, ctx.sandbox)
        session.permissions.notify = session.hooks.notify
        runner = TurnRunner(
            self.model,
            registry,
            relay,
            ctx,
            settings,
            permissions=session.permissions,
            attachments=instructions.on_read,
            hooks=session.hooks,
            steering=session.steering,
        )
        if task is not None:
            task.bind(runner)
        return runner

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
        hooks = read_hooks(setup, user_home()) if setup is not None else HookSet()
        return SessionHooks(
            hooks,
            session.id,
            session.cwd,
            mode=lambda: session.mode,
            sink=relay,
            engine=session.permissions.engine,
            roots=lambda: (session.cwd, *session.work_roots),
            journal=session.history.note,
            sandbox=sandbox,
            env=setup.env() if setup is not None else {},
            source="resume" if session.history.messages else "startup",
        )

    def strategy(self, session: Session) -> Strategy:
        """The session's strategy, rebuilt after its loop changed."""
        if session.strategy is None:
            session.strategy = build_strategy(session.loop)
        return session.strategy

    async def run_turn(
        self,
        session: Session,
        blocks: list[dict[str, Any]],
        *,
        scope: anyio.CancelScope,
        price: Price | None,
        shown: list[dict[str, Any]] | None,
    ) -> TurnResult:
        runner = await self.runner(session)
        strategy: Strategy = self.strategy(session)
        settings = None
        invocation = await find_invocation(session, blocks)
        if invocation is None and blocks and session.tasks is not None and (news := session.tasks.news()):
            blocks = [*blocks, {"type": "text", "text": news}]  # after the prompt: the cached prefix holds
        if invocation is not None:  # a command, skill or MCP prompt: its prompt is built in the turn
            note = None
            if self.catalog is not None:
                settings, note = command_settings(invocation, session, self.catalog, runner.settings.system)
            strategy, blocks = CommandTurn(strategy, invocation, [note] if note else []), []
        session_settings = runner.settings
        if settings is not None:  # the command's own model, for this turn only
            runner.settings, price = settings, self.prices.get(settings.model)
        checkpoints = session.checkpoints
        try:
            async with anyio.create_task_group() as beside:
                if checkpoints is not None:
                    await checkpoints.turn_started()
                    beside.start_soon(checkpoints.prepare)  # while the model reads the prompt
                result = await drive_turn(
                    strategy=strategy,
                    runner=runner,
                    history=session.history,
                    meter=TurnMeter(session.limits, price=price),
                    prompt=blocks,
                    sink=runner.sink,
                    scope=scope,
                    turn_id=new_turn_id(),
                    streaming=runner.model.streaming,
                    shown=shown,
                )
                beside.cancel_scope.cancel()  # a turn that changed nothing needs no snapshot
            return result
        finally:
            if settings is not None and runner.settings is settings:
                runner.settings = session_settings
            if checkpoints is not None:  # what the turn changed, even when it was cancelled
                with anyio.CancelScope(shield=True), anyio.move_on_after(TURN_END_SECONDS):
                    await _ended(checkpoints)

    def quiet_turn(self, session: Session, stop_reason: str, *, journal: bool) -> TurnRecord:
        """The record of a prompt answered without a model request: an empty prompt (journaled,
        like any turn) or one cancelled while it was queued (it never ran)."""
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
        `answer`: the answer of a command run elsewhere (`/fork`, which the manager runs)."""
        runner = await self.runner(session)
        meter = TurnMeter(session.limits, price=price)
        if answer is not None:
            text = answer
        elif name == "permissions":
            text = session.permissions.engine.describe(session.mode)
        elif name == "rewind":
            text = await self.rewinds.command(session, arguments)
        elif name == "hooks":
            text = _hooks_listing(session)
        elif name == "mcp":
            text = (session.servers or SessionServers()).listing()
        elif name == "cost":
            text = session.spend.report()
        elif name == "context":
            text = context_report(runner, session.history, session.instructions, session.style)
        elif name == "compact":
            replaced = await runner._maybe_compact(session.history, meter, force=True)
            text = (
                f"Compacted: summarised {replaced} earlier messages."
                if replaced
                else "Nothing to compact yet (or no request allowance left for it)."
            )
        elif name == "agents":
            task = runner.tools.get("task")
            text = agents_notice(
                await session.conventions.current(), task if isinstance(task, TaskTool) else None
            )
        elif name == "tasks":
            text = session.tasks.listing() if session.tasks is not None else NO_TASKS
        else:
            sandbox = runner.ctx.sandbox
            text = _status(
                session,
                runner,
                await sandbox.status_line() if sandbox else "none configured",
                await session.conventions.current(),
                self.rewinds.status(session),
            )
        await runner.sink.emit(Notice(text, str(uuid.uuid4())))  # an answer outside the history
        return TurnRecord.from_meter(
            meter, turn_id=new_turn_id(), stop=TurnStop.END_TURN, streaming=runner.model.streaming
        )

    async def tell_failure(self, session: Session, message: str) -> None:
        """Tell the editor that a turn nobody awaits (one a steering message started) failed:
        an error notice, journaled like any notice."""
        runner = await self.runner(session)
        text = f"\n\n[acp-agent] {message}\n"
        await runner.sink.emit(Notice(text, str(uuid.uuid4()), message, severity="error"))


async def session_instructions(
    cwd: Path,
    *,
    hidden: HiddenPaths = NOTHING_HIDDEN,
    excludes: Sequence[str] = (),
    trust: ImportTrust = may_import_outside,
) -> Instructions:
    """The memory (AGENTS.md, CLAUDE.md and Claude Code's other memory files) of a session at
    `cwd`, read once when its runner is built: never one of the agent's `hidden` paths, nor a file
    `excludes` (`claudeMdExcludes`) names; `trust` decides imports outside the workspace."""
    return await load_instructions(
        cwd,
        home=user_home(),
        config_dir=user_config_dir(),
        hidden=hidden,
        excludes=excludes,
        trust=trust,
    )


TURN_END_SECONDS = 60.0
"""Bound on journaling what a turn changed (a snapshot of the roots) once it ended."""


async def _ended(checkpoints: Checkpoints) -> None:
    try:
        await checkpoints.turn_ended()
    except JournalFailed as exc:  # the turn's own answer says what the disk did
        log.warning("checkpoint.changes_lost", problem=str(exc))


def _new_id() -> str:
    return str(uuid.uuid4())


def new_turn_id() -> str:
    return f"t_{uuid.uuid4().hex[:16]}"


def _status(
    session: Session, runner: TurnRunner, sandbox: str, conventions: Conventions, checkpoints: str
) -> str:
    settings = runner.settings
    limits = session.limits.model_dump(by_alias=True)
    used = runner.last_context_tokens
    window = settings.context_window
    shown = ", ".join(
        f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in limits.items() if v is not None
    )
    prompt, read = runner.session_prompt_tokens, runner.session_cache_read
    cache = f"{read / prompt:.0%} of {prompt:,} prompt tokens read from cache" if prompt else "no request yet"
    cost = (
        "unknown (no price for this model)"
        if runner.session_cost_usd is None
        else f"${runner.session_cost_usd:.4f}"
    )
    effort = session.effort or f"model default ({settings.profile.effort_default or 'none'})"
    return (
        f"Model: {settings.model} (effort {effort})\nMode: {session.mode}\n"
        f"Limits per prompt: {shown}\n"
        f"Context used: {used:,} of {window:,} tokens ({used / window:.0%})\n"
        f"Prompt cache: {cache}\nCost so far: {cost}\n"
        f"Messages in history: {len(session.history)}\n"
        f"Old tool results cleared from requests: {clearing.status(session.history, settings)}\n"
        f"Sandbox for commands: {sandbox}\n"
        f"Checkpoints (/rewind): {checkpoints}\n"
        f"Web tools: {_web(settings.web)}\n"
        f"Instructions:{_instructions(session)}\n"
        f"{conventions.status()}"
        + (f"\n{session.claude.describe_files()}" if session.claude is not None else "")
        + f"\n{session.styles.status(session.style)}"
        + (f"\n{session.servers.status()}" if session.servers is not None else "")
        + (f"\n{session.hooks.status()}" if session.hooks is not None else "")
    )


def _hooks_listing(session: Session) -> str:
    """`/hooks`: the hooks in force and those waiting for the project's trust (or declined)."""
    if session.hooks is None:
        return "Hooks: none"
    trust = session.claude.trust if session.claude is not None else None
    state = "declined" if trust is not None and trust.state == "declined" else "waiting for trust"
    return session.hooks.hooks.describe(state)


def _web(web: WebTools) -> str:
    """The web tools the session's requests carry, or why none."""
    offered = [t["type"] for t in web.definitions(max_uses=None)]
    if offered:
        return ", ".join(offered)
    return (
        "off"
        if not web.enabled
        else "none (the model has no web tools, or the client's tool set leaves them out)"
    )


def _instructions(session: Session) -> str:
    """The memory files in the system prompt, in order, and those loaded on read (/status)."""
    instructions = session.instructions or Instructions()
    return instructions.status(attached(session.history.messages))


def _import_item(target: Path) -> Widening:
    """A memory import outside the workspace, as the trust question lists it."""
    return Widening("import outside the workspace", "memory files", str(target))
