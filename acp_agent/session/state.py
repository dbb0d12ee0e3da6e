"""What a session is: its identity, history, options and runtime, and the turns it runs.

Every field is set when the session is built (`builder.py`), and changes only through the
session's own methods: a choice (`choose`: a new runtime from the old, `runtime.py`), a title
(`rename`, `name_from`), its journal (`keep_journal`). What it was opened with is its `basis`;
what its turns run with, once its trust is settled, its `runtime`'s current `SessionRuntime`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from acp_agent.claude_code.conventions.conventions import ConventionsSlot
from acp_agent.claude_code.conventions.output_styles import OutputStyle, OutputStyles
from acp_agent.journal.store import Journal
from acp_agent.limits import Limits
from acp_agent.protocol.lifecycle import ClientCapabilities
from acp_agent.session.client_options import ClientOptions
from acp_agent.session.editor.permissions import SessionPermissions
from acp_agent.session.queue import PromptLine, RunningTurn
from acp_agent.session.runtime import Choices, RuntimeSlot, SessionBasis, SessionServices
from acp_agent.session.usage import Spend
from acp_agent.turn.context.history import History
from acp_agent.turn.journal.entries import TitleEntry
from acp_agent.turn.session_usage import LoopMemory
from acp_agent.turn.settings import RunnerSettings
from acp_agent.turn.steering import Steering
from acp_agent.turn.strategies.loops import LoopChoice

if TYPE_CHECKING:
    from acp_agent.claude_code.hooks.hooks import SessionHooks
    from acp_agent.claude_code.memory.instructions import Instructions
    from acp_agent.claude_code.setup.setup import ClaudeSetup
    from acp_agent.journal.checkpoints import Checkpoints
    from acp_agent.session.mcp_servers import SessionServers
    from acp_agent.tools.mcp.connections import McpConnections
    from acp_agent.tools.shell.tasks import BackgroundTasks

__all__ = ["RunningTurn", "Session", "Title", "cancel_subagent"]


@dataclass(slots=True)
class Title:
    """A session's title (`journal/titles.py`), once its first prompt or a rename gave one;
    `settled`: later prompts do not change it."""

    text: str | None = None
    settled: bool = False


@dataclass(slots=True)
class Session:
    """What a session is. Built whole by `builder.py`; see the module's docstring."""

    id: str
    basis: SessionBasis
    history: History
    permissions: SessionPermissions
    """Its mode (the cell its gate reads), the rule engine, and its asker (the permission question)."""
    choices: Choices
    runtime: RuntimeSlot
    """Its services and, once its trust is settled, what its turns run with."""
    journal: Journal | None = None
    conventions: ConventionsSlot = field(default_factory=ConventionsSlot)
    """Its custom commands, skills and MCP prompts (`commands/conventions.py`), read once per session."""
    line: PromptLine = field(default_factory=PromptLine)
    """Its running and waiting prompts."""
    steering: Steering = field(default_factory=Steering)
    """The messages the user sends while a turn runs (`_session/steering`), for that turn."""
    memory: LoopMemory = field(default_factory=LoopMemory)
    """What the loop keeps between its turns (what its requests spent, the last context size)."""
    spend: Spend = field(default_factory=Spend)
    """The sums of its turn records (`/cost`): this process's turns, and those its journal kept."""
    title: Title = field(default_factory=Title)
    subagents: dict[str, Callable[[], None]] = field(default_factory=dict)
    """Its running subagents shown as child sessions (`subagents/sessions.py`), by child session
    id: how to cancel each one alone (a `session/cancel` naming it)."""

    # -- what it was opened with -----------------------------------------------------------------

    @property
    def cwd(self) -> Path:
        return self.basis.cwd

    @property
    def limits(self) -> Limits:
        return self.basis.limits

    @property
    def capabilities(self) -> ClientCapabilities:
        return self.basis.capabilities

    @property
    def client(self) -> ClientOptions:
        return self.basis.client

    @property
    def extra_roots(self) -> tuple[Path, ...]:
        return self.basis.extra_roots

    @property
    def subagent_tools(self) -> str:
        return self.basis.subagent_tools

    @property
    def claude(self) -> ClaudeSetup:
        return self.basis.claude

    @property
    def styles(self) -> OutputStyles:
        return self.basis.styles

    # -- its choices ------------------------------------------------------------------------------

    @property
    def settings(self) -> RunnerSettings:
        """What its requests carry, the system prompt aside (the runtime adds it)."""
        return self.choices.settings

    @property
    def effort(self) -> str | None:
        return self.choices.effort

    @property
    def loop(self) -> LoopChoice:
        return self.choices.loop

    @property
    def overrides(self) -> dict[str, object]:
        return self.choices.overrides

    @property
    def style(self) -> OutputStyle:
        return self.choices.style or self.styles.default

    @property
    def mode(self) -> str:
        return self.permissions.mode

    @property
    def model(self) -> str:
        return self.settings.model

    def choose(self, choices: Choices) -> None:
        """New choices (`config_options.py`): its runtime is rebuilt for them, and a running
        turn's next request carries them."""
        self.choices = choices
        self.runtime.rebuild(choices)

    def request_settings(self) -> RunnerSettings:
        """What its next request carries: its runtime's settings, or its choices' before it has one."""
        current = self.runtime.current
        return current.settings if current is not None else self.settings

    # -- its runtime and services ---------------------------------------------------------------

    @property
    def work_roots(self) -> tuple[Path, ...]:
        """Where the tools work besides the cwd: the client's roots, then the settings' ones."""
        return tuple(dict.fromkeys((*self.extra_roots, *self.runtime.roots)))

    @property
    def services(self) -> SessionServices:
        return self.runtime.services

    @property
    def hooks(self) -> SessionHooks | None:
        """Its Claude Code hooks, read with its runtime (after the trust question)."""
        current = self.runtime.current
        return current.hooks if current is not None else None

    @property
    def instructions(self) -> Instructions | None:
        """Its memory (AGENTS.md, CLAUDE.md...), read with its runtime (named in /status)."""
        current = self.runtime.current
        return current.instructions if current is not None else None

    @property
    def mcp(self) -> McpConnections | None:
        return self.services.mcp

    @property
    def servers(self) -> SessionServers | None:
        return self.services.servers

    @property
    def checkpoints(self) -> Checkpoints | None:
        return self.services.checkpoints

    @property
    def tasks(self) -> BackgroundTasks | None:
        return self.services.tasks

    # -- its turns ------------------------------------------------------------------------------

    @property
    def running(self) -> RunningTurn | None:
        return self.line.running

    @property
    def closing(self) -> bool:
        """session/close or session/delete began: no new prompt runs, a queued one ends `cancelled`."""
        return self.line.closing

    def cancel(self) -> bool:
        """Cancel the running turn, if any; True when there was one."""
        turn = self.running
        if turn is None:
            return False
        turn.cancelled = True
        turn.scope.cancel()
        return True

    # -- its journal and title ------------------------------------------------------------------

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
        self.title = Title(title, True)
        return True

    def name_from(self, title: str | None) -> bool:
        """The first prompt names the session (as session/list will); True when it gave a title
        now (later prompts never change it)."""
        if self.title.settled:
            return False
        self.title = Title(title, True)
        return bool(title)


def cancel_subagent(sessions: Iterable[Session], child_id: str) -> bool:
    """session/cancel naming a running subagent's child session: cancel that subagent alone.
    An ended subagent's id, or one nobody made, is ignored (False)."""
    cancel = next((s.subagents[child_id] for s in sessions if child_id in s.subagents), None)
    if cancel is None:
        return False
    cancel()
    return True
