"""What a session is made of beside its history: what it was opened with (`SessionBasis`), its
options' values (`Choices`), what it keeps running (`SessionServices`) and what its turns run with
(`SessionRuntime`, in its `RuntimeSlot`).

The runtime is built once, when the session's trust is settled: on the first turn, after the
project's trust question (`engine.py:Engine.runtime`), with the tools, the rule engine's gate,
the hooks, the memory and the system prompt as they are then (the tool list and the system prompt
are a cached prefix). A change of the options builds a new runtime from the old one
(`SessionRuntime.with_choices`: the settings and the system prompt, and the strategy when the loop
changed); nothing of a runtime is patched in place, and a turn that runs keeps the spec it started
with (its requests follow the slot's settings: `TurnSpec.follow`).

Loaded with `state.py` at session/new: the turn machinery's types are named for the type checker
only (D4).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp_agent.claude_code.conventions.output_styles import OutputStyle, OutputStyles
from acp_agent.limits import Limits
from acp_agent.protocol.lifecycle import ClientCapabilities
from acp_agent.session.client_options import ClientOptions
from acp_agent.turn.settings import RunnerSettings
from acp_agent.turn.strategies.loops import LoopChoice

if TYPE_CHECKING:
    from acp_agent.claude_code.hooks.hooks import SessionHooks
    from acp_agent.claude_code.memory.instructions import Instructions
    from acp_agent.claude_code.setup.setup import ClaudeSetup
    from acp_agent.journal.checkpoints import Checkpoints
    from acp_agent.session.mcp_servers import SessionServers
    from acp_agent.session.system_prompt import PromptParts
    from acp_agent.tools.base import Tool
    from acp_agent.tools.mcp.connections import McpConnections
    from acp_agent.tools.shell.tasks import BackgroundTasks
    from acp_agent.turn.spec import TurnSpec
    from acp_agent.turn.strategies.base import Strategy

__all__ = ["Choices", "RuntimeSlot", "SessionBasis", "SessionRuntime", "SessionServices"]


@dataclass(frozen=True, slots=True)
class SessionBasis:
    """What a session was opened with (session/new, load, resume, fork): it never changes."""

    cwd: Path
    limits: Limits
    capabilities: ClientCapabilities
    claude: ClaudeSetup
    """Its Claude Code settings and the project's trust (`claude/setup.py`), read once."""
    styles: OutputStyles
    """The output styles it may use (`commands/output_styles.py`), read once."""
    client: ClientOptions = field(default_factory=ClientOptions)
    """The client's appended system text and tool set (acpx's `_meta`)."""
    extra_roots: tuple[Path, ...] = ()
    """The client's additional roots (`roots.py`): the tools work there too, the prompt names them."""
    subagent_tools: str = "read"
    """What the task tool's subagents get: read (the read-only tools), all, or off (no task tool)."""


@dataclass(frozen=True, slots=True)
class Choices:
    """The values of a session's options: what its requests carry (the system prompt aside), its
    effort, loop and output style, and the `_meta` settings a loop change reads again."""

    settings: RunnerSettings
    loop: LoopChoice
    effort: str | None = None
    """None: the configured one (the option's "default")."""
    style: OutputStyle | None = None
    """None: Default."""
    overrides: dict[str, Any] = field(default_factory=dict)
    """The session/new `_meta["acp-agent"]` settings (a loop change updates `loop`)."""


@dataclass(slots=True)
class SessionServices:
    """What a session keeps running from its start to its close, across its runtimes: its MCP
    servers and connections (their tools join the first runtime's), its checkpoints and its
    background commands."""

    servers: SessionServers | None = None
    """Its MCP servers, the editor's and Claude Code's, with their state (`/mcp`)."""
    mcp: McpConnections | None = None
    """Its MCP connections, when it has servers."""
    tools: list[Tool] = field(default_factory=list)
    """Tools beyond the built-in ones (its MCP servers'), offered by its runtime."""
    checkpoints: Checkpoints | None = None
    """What its turns changed in the workspace, kept for a rewind (made on first use; None
    without a journal)."""
    tasks: BackgroundTasks | None = None
    """Its background commands (None where nothing runs in the background)."""


@dataclass(frozen=True, slots=True)
class SessionRuntime:
    """What a session's turns run with, built once its trust is settled: the base turn spec (the
    tools, the relay, the tool context, the gate, the hooks; a command's turn, a phase and a
    subagent derive theirs), its hooks, memory and system prompt's parts, the settings' roots in
    force, the strategy, and the choices it was built for."""

    spec: TurnSpec
    hooks: SessionHooks
    instructions: Instructions
    parts: PromptParts
    roots: tuple[Path, ...]
    """The settings' `additionalDirectories` in force once the trust was settled."""
    strategy: Strategy
    choices: Choices
    styles: OutputStyles
    strategies: Callable[[LoopChoice], Strategy]
    """How a loop becomes a strategy (`turn/strategies/select.py`), for a loop change."""

    @property
    def settings(self) -> RunnerSettings:
        """What its requests carry, the system prompt included."""
        return self.spec.settings

    def with_choices(self, choices: Choices) -> SessionRuntime:
        """The runtime for other choices: the settings and the system prompt (in the new output
        style) rebuilt, the strategy too when the loop changed; the tools, the gate, the hooks and
        the services stay (the tool list is a cached prefix)."""
        settings = replace(
            choices.settings, system=system_prompt(self.parts, choices.style or self.styles.default)
        )
        strategy = self.strategy if choices.loop == self.choices.loop else self.strategies(choices.loop)
        return replace(self, spec=replace(self.spec, settings=settings), strategy=strategy, choices=choices)


def system_prompt(parts: PromptParts, style: OutputStyle) -> str:
    """The system prompt from `parts` in `style`."""
    return parts.build(style=style.prompt_section(), coding_rules=style.keep_coding_instructions)


class RuntimeSlot:
    """A session's services and its runtime, once built: `built` takes the first, `rebuild`
    replaces it whole for new choices."""

    def __init__(self, roots: tuple[Path, ...] = ()) -> None:
        self.services = SessionServices()
        self.current: SessionRuntime | None = None
        self._roots = roots

    @property
    def roots(self) -> tuple[Path, ...]:
        """The settings' roots in force: the runtime's once built, else those read at the start."""
        return self.current.roots if self.current is not None else self._roots

    def settings(self) -> RunnerSettings:
        """What the next request carries (a running turn's requests follow it: `TurnSpec.follow`)."""
        assert self.current is not None, "no runtime yet"
        return self.current.settings

    def built(self, runtime: SessionRuntime) -> SessionRuntime:
        """The first runtime (a runtime built while another was taken is dropped)."""
        if self.current is None:
            self.current = runtime
        return self.current

    def rebuild(self, choices: Choices) -> None:
        """New choices: a new runtime from the current one (none yet: the first is built for them)."""
        if self.current is not None:
            self.current = self.current.with_choices(choices)
