"""A session's turn machinery (tools, runner, strategy), built on its first prompt.

`manager.py` keeps what a session is and answers the handshake with it; this module is how its
turns run, and it is imported only after the handshake (`acp_agent.lazy`): in the background once
`initialize` is answered, or by the first prompt, so `session/new` never waits for the loop, the
tools or the model client to load (docs/decisions.md D4).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from acp_agent.config import Config
from acp_agent.model.base import ModelClient
from acp_agent.model.pricing import Price
from acp_agent.model.server_tools import WebTools
from acp_agent.session.command_turn import CommandTurn, command_settings, find_invocation
from acp_agent.session.commands.conventions import Conventions
from acp_agent.session.commands.instructions import Instructions, load_instructions
from acp_agent.session.commands.memory_files import ImportTrust, may_import_outside
from acp_agent.session.editor.client_io import EditorFileSystem, EditorTerminals
from acp_agent.session.editor.elicitation import editor_elicitation
from acp_agent.session.editor.relay import Relay
from acp_agent.session.requester import Requester
from acp_agent.session.sandboxing import hidden_paths, sandbox_policy
from acp_agent.session.subagents.tool import task_tool
from acp_agent.session.system_prompt import build_system_prompt
from acp_agent.tools.ask_user import AskUser
from acp_agent.tools.base import ToolContext
from acp_agent.tools.files.localfs import LocalFileSystem
from acp_agent.tools.hidden import NOTHING_HIDDEN, HiddenPaths
from acp_agent.tools.registry import ToolRegistry, default_registry
from acp_agent.tools.sandbox.command_sandbox import CommandSandbox, SandboxPolicy
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
from acp_agent.user_dirs import user_config_dir, user_home

if TYPE_CHECKING:
    from acp_agent.session.options.catalog import ModelCatalog
    from acp_agent.session.state import Session

__all__ = ["Engine"]

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

    async def runner(self, session: Session) -> TurnRunner:
        """The session's runner, built on first use with the tools it has by then (MCP included);
        its instruction files are read in a worker thread first."""
        if session.runner is None:
            instructions = await session_instructions(session.cwd, hidden=self.hidden)
            conventions = await session.conventions.current()
            if session.runner is None:  # nobody built it while the files were read
                session.runner = self._build(session, instructions, conventions)
        return session.runner

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
        )
        if task is not None:  # subagents (D27), with the session's other tools as they are now
            registry.add(task)
        session.instructions = instructions
        settings = replace(
            session.settings,
            system=build_system_prompt(
                cwd=session.cwd,
                limits=session.limits,
                tools=[(t["name"], t.get("description", "")) for t in registry.api_tools()],
                instructions=instructions.prompt_section(),
                appended=session.client.system_append,
                skills=skills_section if "skill" in registry else "",
                extra_roots=session.extra_roots,
            ),
        )
        fs = session.capabilities.fs
        relay = Relay(
            session.id, self.requester, journal=session.history.note, capabilities=session.capabilities
        )
        ctx = ToolContext(
            cwd=session.cwd,
            extra_roots=session.extra_roots,
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
            hidden=self.hidden,
            sandbox=(
                CommandSandbox(
                    self.sandbox, tell=lambda text: relay.emit(Notice.warning(text, str(uuid.uuid4())))
                )
                if self.sandbox is not None
                else None
            ),
        )
        runner = TurnRunner(
            self.model,
            registry,
            relay,
            ctx,
            settings,
            permissions=session.permissions,
            attachments=instructions.on_read,
            steering=session.steering,
        )
        if task is not None:
            task.bind(runner)
        return runner

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
        if invocation is not None:  # a command, skill or MCP prompt: its prompt is built in the turn
            note = None
            if self.catalog is not None:
                settings, note = command_settings(invocation, session, self.catalog, runner.settings.system)
            strategy, blocks = CommandTurn(strategy, invocation, [note] if note else []), []
        session_settings = runner.settings
        if settings is not None:  # the command's own model, for this turn only
            runner.settings, price = settings, self.prices.get(settings.model)
        try:
            return await drive_turn(
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
        finally:
            if settings is not None and runner.settings is settings:
                runner.settings = session_settings

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
        self, name: str, session: Session, price: Price | None = None, *, answer: str | None = None
    ) -> TurnRecord:
        """Run a slash command in `session`; its answer goes to the editor as an agent message.
        `answer`: the answer of a command run elsewhere (`/fork`, which the manager runs)."""
        runner = await self.runner(session)
        meter = TurnMeter(session.limits, price=price)
        if answer is not None:
            text = answer
        elif name == "compact":
            replaced = await runner._maybe_compact(session.history, meter, force=True)
            text = (
                f"Compacted: summarised {replaced} earlier messages."
                if replaced
                else "Nothing to compact yet (or no request allowance left for it)."
            )
        else:
            sandbox = runner.ctx.sandbox
            text = _status(
                session,
                runner,
                await sandbox.status_line() if sandbox else "none configured",
                await session.conventions.current(),
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


def _new_id() -> str:
    return str(uuid.uuid4())


def new_turn_id() -> str:
    return f"t_{uuid.uuid4().hex[:16]}"


def _status(session: Session, runner: TurnRunner, sandbox: str, conventions: Conventions) -> str:
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
        f"Web tools: {_web(settings.web)}\n"
        f"Instructions:{_instructions(session)}\n"
        f"{conventions.status()}"
    )


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
