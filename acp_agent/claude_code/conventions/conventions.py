"""A session's conventions: the custom slash commands, Agent Skills, MCP prompts and custom agents
it offers.

The one place that holds them (`ConventionsSlot`, on the session): read from disk once per
session (session/new, session/load, session/resume: each builds a new session) in a worker thread,
by the task that announces them once the session's answer is on its way (so reading a large
`.claude` never delays that answer), or by the first prompt if it comes first; the MCP servers'
prompts are added when they connect, and replaced when a server says its list changed (then the
menu is announced again if it differs). The announcement (`available_commands_update`), the turn
machinery (the skills in the system prompt, the `skill` tool, the custom agents of the `task`
tool), a slash command's expansion, /status and /agents all read this one snapshot, so what the
editor lists is what runs.

Which name wins: the built-ins (`/status`, `/compact`), then skills, then commands; among files of
one kind, the project's (nearest directory first) over the user's (`convention_files.py`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import structlog

from acp_agent.claude_code.conventions.agents import CustomAgent
from acp_agent.claude_code.conventions.allowed_tools import read_allowed_tools
from acp_agent.claude_code.conventions.builtins import COMMANDS
from acp_agent.tools.printable import one_line, printable
from acp_agent.tools.skill import Skill

if TYPE_CHECKING:
    from acp_agent.tools.mcp.prompts import McpPrompt

__all__ = ["SKILLS_PROMPT_CAP", "Conventions", "ConventionsSlot", "CustomCommand"]

log = structlog.get_logger(__name__)

SKILLS_PROMPT_CAP = 12_000
"""Characters of skill names and descriptions in the system prompt (level 1), all skills together."""


@dataclass(frozen=True, slots=True)
class CustomCommand:
    """A command file: `/name` runs its body as the prompt, its arguments substituted."""

    name: str
    path: Path
    body: str
    source: str = "project"
    namespace: str = ""
    description: str = ""
    argument_hint: str | None = None
    model: str | None = None
    allowed_tools: str = ""
    """Its frontmatter's `allowed-tools`, as written (`allowed_tools.py` reads it)."""

    @property
    def label(self) -> str:
        """Where it comes from, as Claude Code shows it: "(project)", "(user:backend)"."""
        return f"({self.source}{':' + self.namespace if self.namespace else ''})"

    @property
    def takes_arguments(self) -> bool:
        return self.argument_hint is not None or "$ARGUMENTS" in self.body or "$1" in self.body


Invocable = CustomCommand | Skill


@dataclass(frozen=True, slots=True)
class Conventions:
    """What a session offers beyond the built-ins, and what was found but not used (with why)."""

    commands: tuple[CustomCommand, ...] = ()
    skills: tuple[Skill, ...] = ()
    prompts: tuple[McpPrompt, ...] = ()
    skipped: tuple[str, ...] = ()
    """One line per file left out: "path (refused: …)", "(skipped: …)" or "(shadowed by …)"."""
    agents: tuple[CustomAgent, ...] = ()
    """The custom agents (`.claude/agents/`), sorted by name."""
    agents_skipped: tuple[str, ...] = ()
    """The agent files left out, as `skipped` says them."""

    def find(self, name: str) -> Invocable | McpPrompt | None:
        """The command `/name` runs: a skill, a command file, or an MCP prompt."""
        for skill in self.skills:
            if skill.name == name and skill.user_invocable:
                return skill
        for command in self.commands:
            if command.name == name:
                return command
        return next((p for p in self.prompts if p.command == name), None)

    def available_commands(self) -> list[dict[str, Any]]:
        """The `availableCommands` entries (after the built-ins), sorted by name."""
        listed: dict[str, dict[str, Any]] = {}
        for prompt in self.prompts:
            listed[prompt.command] = _entry(
                prompt.command, f"{prompt.description} (MCP: {prompt.server})", prompt.hint
            )
        for command in self.commands:
            hint = command.argument_hint or ("arguments" if command.takes_arguments else None)
            listed[command.name] = _entry(command.name, f"{command.description} {command.label}", hint)
        for skill in self.skills:
            if skill.user_invocable:
                listed[skill.name] = _entry(
                    skill.name, f"{skill.description} ({skill.source} skill)", skill.argument_hint
                )
        return [listed[name] for name in sorted(listed)]

    def model_skills(self) -> list[Skill]:
        """The skills the model may load, sorted by name (a stable order: a cached prefix)."""
        return sorted((s for s in self.skills if s.model_invocable), key=lambda s: s.name)

    def skills_section(self, cap: int = SKILLS_PROMPT_CAP) -> tuple[str, list[str]]:
        """The system prompt's skills (level 1), within `cap` characters, and the names left out."""
        skills = self.model_skills()
        if not skills:
            return "", []
        lines = [
            "Skills: folders of instructions (and files) for particular tasks. When a task matches "
            "a skill's description, load the skill with the skill tool before you start, and "
            "follow its instructions.",
        ]
        room, left_out = cap, []
        for skill in skills:
            line = f"- {skill.name}: {' '.join(skill.description.split())}"
            if len(line) + 1 > room:
                left_out.append(skill.name)
                continue
            room -= len(line) + 1
            lines.append(line)
        return "\n".join(lines), left_out

    def status(self) -> str:
        """The /status lines: what was loaded from where, and what was not and why."""
        parts = [f"Custom commands: {_count(self.commands)}"]
        parts += [f"- /{c.name} {c.label}: {c.path}{_grants(c.allowed_tools)}" for c in self.commands]
        parts.append(f"Skills: {_count(self.skills)}")
        _, left_out = self.skills_section()
        parts += [
            f"- {s.name} ({s.source}): {s.path}"
            + (f" (its `name` says {s.written_name!r}: named by its folder)" if s.written_name else "")
            + (" (left out of the system prompt: the skill list's cap)" if s.name in left_out else "")
            + ("" if s.model_invocable else " (for the user only)")
            + _grants(s.allowed_tools)
            for s in self.skills
        ]
        if self.prompts:
            parts.append(f"MCP prompts: {len(self.prompts)}")
            parts += [f"- /{p.command} ({p.server})" for p in self.prompts]
        parts.append(f"Custom agents: {_count(self.agents)}{' (/agents lists them)' if self.agents else ''}")
        if self.skipped or self.agents_skipped:
            parts.append("Not loaded:")
            parts += [f"- {line}" for line in (*self.skipped, *self.agents_skipped)]
        return printable("\n".join(parts))  # file and directory names the repository chose


def _entry(name: str, description: str, hint: str | None) -> dict[str, Any]:
    """A menu entry; each field as a repository or a server wrote it, made one printable line."""
    entry: dict[str, Any] = {"name": one_line(name), "description": one_line(description)}
    if hint and (hint := one_line(hint)):
        entry["input"] = {"hint": hint}
    return entry


def _grants(allowed_tools: str) -> str:
    """What a command's `allowed-tools` grants when it runs, and what it names that is ignored."""
    if not allowed_tools.strip():
        return ""
    return f" ({read_allowed_tools(allowed_tools).describe()})"


def _count(items: Sequence[object]) -> str:
    return str(len(items)) if items else "none"


async def _nothing() -> Conventions:
    return Conventions()


@dataclass(slots=True)
class ConventionsSlot:
    """A session's conventions, read once by `read` when first asked (from the background task
    that session/new starts, or by whoever needs them first), with its MCP servers' prompts."""

    read: Callable[[], Awaitable[Conventions]] = _nothing
    _value: Conventions | None = None
    _prompts: tuple[McpPrompt, ...] = ()
    _lock: anyio.Lock | None = None
    """Held while the files are read; made then, and dropped once they are (a session keeps none)."""
    _announced: list[dict[str, Any]] | None = None
    """The commands last sent in `available_commands_update` (None: none sent yet)."""
    _announcing: anyio.Lock | None = None
    _generation: int = 0
    """Counts `forget`s: a read that one overtook is not kept."""

    async def current(self) -> Conventions:
        while self._value is None:
            if self._lock is None:
                self._lock = anyio.Lock()
            async with self._lock:  # several callers at once: one reads, the others wait for it
                if self._value is None:
                    generation = self._generation
                    try:
                        value = await self.read()
                    except Exception as exc:  # a bug here must cost the commands, not the session
                        log.exception("conventions.failed")
                        value = Conventions(skipped=(f"commands and skills were not read: {exc!r}",))
                    if generation == self._generation:  # not forgotten while it was read
                        self._value = value
                self._lock = None  # a waiter still holds its own reference
        return replace(self._value, prompts=self._prompts)

    def forget(self) -> None:
        """Read the files again when next asked: what the session may offer changed (the project
        was trusted, and a plugin its settings enable is now in force)."""
        self._value = None
        self._generation += 1

    def set_prompts(self, prompts: Sequence[McpPrompt]) -> None:
        """The MCP servers' prompts, from now on offered as commands (after their servers connect,
        and again whenever a server's list changes)."""
        self._prompts = tuple(sorted(prompts, key=lambda p: p.command))

    async def announce(self, send: Callable[[list[dict[str, Any]]], Awaitable[None]], *, first: bool) -> None:
        """Send the `/` menu's commands (the built-ins, then these) through `send`: the `first` time
        always, after that only when they differ from the last sent (and never before the first:
        it lists what is current when it goes). One at a time, so the last sent is the newest."""
        if self._announcing is None:
            self._announcing = anyio.Lock()
        async with self._announcing:
            if not first and self._announced is None:
                return
            custom = (await self.current()).available_commands()
            replaced = {c["name"] for c in custom}  # a custom /agents or /mcp replaces Claude Code's
            commands = [*(c for c in COMMANDS if c["name"] not in replaced), *custom]
            if not first and commands == self._announced:
                return
            self._announced = commands
            await send(commands)
