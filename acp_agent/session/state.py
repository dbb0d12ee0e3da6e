"""What a session is: its history, limits, permissions and settings, and the turn it is running.

Plain state, shared by the manager (which answers the handshake with it) and the engine (which
builds the session's runner and strategy on its first prompt).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from acp_agent.limits import Limits
from acp_agent.protocol.lifecycle import ClientCapabilities
from acp_agent.session.client_options import ClientOptions
from acp_agent.session.commands.conventions import ConventionsSlot
from acp_agent.session.commands.instructions import Instructions
from acp_agent.session.commands.output_styles import OutputStyle, OutputStyles
from acp_agent.session.editor.permissions import SessionPermissions
from acp_agent.session.journal.store import Journal
from acp_agent.session.system_prompt import PromptParts
from acp_agent.session.usage import Spend
from acp_agent.turn.context.history import History
from acp_agent.turn.journal.entries import TitleEntry
from acp_agent.turn.loops import LoopChoice
from acp_agent.turn.session_usage import LoopMemory
from acp_agent.turn.settings import RunnerSettings
from acp_agent.turn.steering import Steering

if TYPE_CHECKING:
    from acp_agent.session.claude.hooks import SessionHooks
    from acp_agent.session.claude.setup import ClaudeSetup
    from acp_agent.session.journal.checkpoints import Checkpoints
    from acp_agent.session.mcp_servers import SessionServers
    from acp_agent.tools.base import Tool
    from acp_agent.tools.mcp.connections import McpConnections
    from acp_agent.tools.shell.tasks import BackgroundTasks
    from acp_agent.turn.spec import TurnSpec
    from acp_agent.turn.strategies import Strategy

__all__ = ["RunningTurn", "Session", "cancel_subagent"]


@dataclass(slots=True)
class RunningTurn:
    """The turn a session is running now."""

    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    done: anyio.Event = field(default_factory=anyio.Event)
    cancelled: bool = False


@dataclass(slots=True)
class Session:
    """What a session is. Its runner and strategy are built by `session/engine.py` on first use."""

    id: str
    cwd: Path
    limits: Limits
    history: History
    permissions: SessionPermissions
    settings: RunnerSettings
    """What its requests carry (the system prompt is added when the runner is built)."""
    loop: LoopChoice
    capabilities: ClientCapabilities
    spec: TurnSpec | None = None
    """What its turns run with (`turn/spec.py`), built by the engine on first use; a command's turn
    and a subagent derive theirs from it."""
    memory: LoopMemory = field(default_factory=LoopMemory)
    """What the loop keeps between its turns (what its requests spent, the last context size)."""
    strategy: Strategy | None = None
    """None until the first turn, and again after the loop changed."""
    running: RunningTurn | None = None
    journal: Journal | None = None
    replay: list[dict[str, Any]] = field(default_factory=list)
    overrides: dict[str, Any] = field(default_factory=dict)
    """The session/new `_meta["acp-agent"]` settings, kept for later strategy changes."""
    effort: str | None = None
    """The session's effort level (config option `effort`); None: the configured one."""
    mcp: McpConnections | None = None
    """The session's MCP connections, when it has servers."""
    servers: SessionServers | None = None
    """Its MCP servers, the editor's and Claude Code's, with their state (`/mcp`)."""
    extra_tools: list[Tool] = field(default_factory=list)
    """Tools beyond the built-in ones (its MCP servers'), added to the runner's registry."""
    instructions: Instructions | None = None
    """Its memory (AGENTS.md, CLAUDE.md...): the files in its system prompt and those that load
    when a file is read, read with its runner (named in /status)."""
    client: ClientOptions = field(default_factory=ClientOptions)
    """The client's appended system text and tool set (acpx's `_meta`), used when the runner is built."""
    conventions: ConventionsSlot = field(default_factory=ConventionsSlot)
    """Its custom commands, skills and MCP prompts (`commands/conventions.py`), read once per session."""
    subagent_tools: str = "read"
    """What the task tool's subagents get: read (the read-only tools), all, or off (no task tool)."""
    closing: bool = False
    """session/close or session/delete began: no new prompt runs, a queued one ends `cancelled`."""
    extra_roots: tuple[Path, ...] = ()
    """The client's additional roots (`roots.py`): the tools work there too, the prompt names them."""
    settings_roots: tuple[Path, ...] = ()
    """The settings' `additionalDirectories` in force (`roots.py:settings_roots`), never journaled:
    read again from the files at each session/new, load and resume."""
    claude: ClaudeSetup | None = None
    hooks: SessionHooks | None = None
    """Its Claude Code hooks, read when its runner is built (after the trust question)."""
    """Its Claude Code settings and the project's trust (`claude/setup.py`), read once per session."""
    styles: OutputStyles = field(default_factory=OutputStyles)
    """The output styles it may use (`commands/output_styles.py`), read once per session."""
    output_style: OutputStyle | None = None
    """Its output style (config option `output_style`); None: Default."""
    spend: Spend = field(default_factory=Spend)
    """The sums of its turn records (`/cost`): this process's turns, and those its journal kept."""
    prompt_parts: PromptParts | None = None
    """What its system prompt was built from (with its spec): a new style rebuilds it."""
    system: str | None = None
    """Its system prompt, in its output style (None until its spec is built)."""
    title: str | None = None
    """Its title (`journal/titles.py`), once its first prompt or a rename gave one."""
    titled: bool = False
    """Its first prompt or a rename settled the title: later prompts do not change it."""
    steering: Steering = field(default_factory=Steering)
    """The messages the user sends while a turn runs (`_session/steering`), for that turn."""
    checkpoints: Checkpoints | None = None
    """What its turns changed in the workspace, kept for a rewind (made by the engine on first use;
    None without a journal)."""
    interrupted_rewind: bool = False
    """Its journal ends in a rewind a crash stopped mid-restore: session/load finishes it."""
    subagents: dict[str, Callable[[], None]] = field(default_factory=dict)
    """Its running subagents shown as child sessions (`subagents/sessions.py`), by child session
    id: how to cancel each one alone (a `session/cancel` naming it)."""
    tasks: BackgroundTasks | None = None
    """Its background commands (`tools/shell/tasks.py`): None where nothing runs in the
    background (no task group to watch them in)."""

    @property
    def mode(self) -> str:
        return self.permissions.mode

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def work_roots(self) -> tuple[Path, ...]:
        """Where the tools work besides the cwd: the client's roots, then the settings' ones."""
        return tuple(dict.fromkeys((*self.extra_roots, *self.settings_roots)))

    def keep_journal(self, journal: Journal) -> None:
        """From now on every change to the history is also written to `journal` (after the session
        was found valid: a refused session/new leaves no journal behind)."""
        self.journal = journal
        self.history.journal = journal.append

    def rename(self, title: str) -> bool:
        """Journal a rename (`title` normalized already) through the open journal and take the
        title; False when the journal is not open here (`journal/titles.py:rename_stored` then)."""
        if self.journal is None or self.journal.closed:
            return False
        self.history.note(TitleEntry(title))
        self.title, self.titled = title, True
        return True

    def use_settings(self, settings: RunnerSettings) -> None:
        """New request settings (another model or effort): the next request carries them, a turn
        running now included (its spec follows `request_settings`)."""
        self.settings = settings

    def request_settings(self) -> RunnerSettings:
        """What the session's next request carries: its settings, with the system prompt in its
        output style once its turn machinery is built (`use_parts`)."""
        return self.settings if self.system is None else replace(self.settings, system=self.system)

    def use_parts(self, parts: PromptParts) -> None:
        """What its system prompt is built from (with its turn machinery, `engine.py`)."""
        self.prompt_parts = parts
        self.system = self.system_prompt(parts)

    @property
    def style(self) -> OutputStyle:
        return self.output_style or self.styles.default

    def system_prompt(self, parts: PromptParts) -> str:
        """The system prompt from `parts` in the session's output style."""
        style = self.style
        return parts.build(style=style.prompt_section(), coding_rules=style.keep_coding_instructions)

    def use_style(self, style: OutputStyle) -> None:
        """Another output style: the system prompt is rebuilt for the next request (the prompt
        cache starts over once)."""
        self.output_style = style
        if self.prompt_parts is not None:
            self.system = self.system_prompt(self.prompt_parts)

    def choose_loop(self, loop: LoopChoice) -> None:
        """A new loop for the next prompt; the strategy is rebuilt then."""
        self.loop = loop
        self.strategy = None

    def cancel(self) -> bool:
        """Cancel the running turn, if any; True when there was one."""
        turn = self.running
        if turn is None:
            return False
        turn.cancelled = True
        turn.scope.cancel()
        return True


def cancel_subagent(sessions: Iterable[Session], child_id: str) -> bool:
    """session/cancel naming a running subagent's child session: cancel that subagent alone.
    An ended subagent's id, or one nobody made, is ignored (False)."""
    cancel = next((s.subagents[child_id] for s in sessions if child_id in s.subagents), None)
    if cancel is None:
        return False
    cancel()
    return True
