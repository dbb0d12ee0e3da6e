"""A turn started by a custom command, a skill or an MCP prompt: the prompt is built inside the turn.

The turn runs the session's strategy on a spec of its own (`command_spec`: the command's `model`,
its grants). Within the turn's cancel scope, clock and meter, `CommandPrompt` builds the prompt
(the command's body with its arguments, or the skill's instructions, or the MCP prompt's messages)
and adds it to the history as the user's message; the strategy then runs as for any prompt.
Building it costs no model request; the turn that follows is an ordinary metered one.

In a command file or a skill:
- `` !`cmd` `` runs as a `run_command` tool call of the turn (`commands/shell_lines.py`): the editor is
  shown it, the user is asked as for any command (the mode decides first: plan mode refuses it,
  bypass runs it), it runs in the session's sandbox and counts against the tool-call budget; its
  output (or why it did not run) takes its place in the prompt; it is journaled, and session/load
  shows it again. Nothing runs unseen.
- `@path` adds the file's content, read by a `read_file` tool call of the turn, as a `!` line runs:
  shown to the editor, put to the rule engine (a `Read` rule, a hook, the roots' confinement),
  counted; a path it refuses gets a note with the engine's words; a name that is no file is left
  as written (`@someone`).

The frontmatter's `allowed-tools` (a command's, or a skill's run as a command) lets the calls it
names skip the permission question for this turn only (`commands/allowed_tools.py`): the turn's
spec carries the session's gate with the grants bound (the engine weighs them with the allow rules),
and so do its `!` lines and subagents.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import anyio

from acp_agent.claude_code.conventions.allowed_tools import read_allowed_tools
from acp_agent.claude_code.conventions.builtins import BUILT_IN_NAMES
from acp_agent.claude_code.conventions.conventions import CustomCommand
from acp_agent.claude_code.conventions.expansion import MAX_FILE_REFS, expand, file_refs, text_of
from acp_agent.claude_code.conventions.prompt_commands import PROMPT_COMMANDS
from acp_agent.claude_code.conventions.shell_lines import prompt_calls, run_shell_lines
from acp_agent.errors import ToolError
from acp_agent.tools.mcp.prompts import McpPrompt
from acp_agent.tools.skill import Skill, skill_text
from acp_agent.turn.context.history import History, JournalWriter
from acp_agent.turn.events import Notice
from acp_agent.turn.meter import TurnMeter
from acp_agent.turn.runner import TurnRunner
from acp_agent.turn.spec import TurnSpec

if TYPE_CHECKING:
    from acp_agent.session.options.catalog import ModelCatalog
    from acp_agent.session.state import Session
    from acp_agent.turn.settings import RunnerSettings

__all__ = ["CommandPrompt", "Invocation", "command_settings", "command_spec", "find_invocation"]


@dataclass(frozen=True, slots=True)
class Invocation:
    """`/name arguments`, and what it names; `extra` are the prompt's other blocks (images, links)."""

    name: str
    target: CustomCommand | Skill | McpPrompt
    arguments: str
    extra: tuple[dict[str, Any], ...] = ()


async def find_invocation(
    session: Session, invoked: tuple[str, str] | None, blocks: list[dict[str, Any]]
) -> Invocation | None:
    """The command, skill or MCP prompt a prompt runs (`invoked`: its `/name args`, read with the
    prompt, `prompts.py`; the session's own first, then the built-in `/init` and `/review`), or
    None for any other prompt (an unknown `/word` goes to the model as it is). Looked up once the
    session's runtime is built: a plugin the trust answer enables offers its commands then."""
    if invoked is None or invoked[0] in BUILT_IN_NAMES:
        return None
    target = (await session.conventions.current()).find(invoked[0]) or PROMPT_COMMANDS.get(invoked[0])
    return Invocation(invoked[0], target, invoked[1], tuple(blocks[1:])) if target is not None else None


def command_settings(
    invocation: Invocation, session: Session, catalog: ModelCatalog, system: str | None
) -> tuple[RunnerSettings | None, str | None]:
    """The settings for a command file's `model` (an id, as written, or `haiku`, `sonnet`, `opus`
    for the first the catalog offers of that family), or None and the note that says it is ignored."""
    target = invocation.target
    wanted = target.model if isinstance(target, CustomCommand) else None
    if not wanted or wanted in ("inherit", session.model):
        return None, None
    model_id = catalog.named_model(wanted)
    if model_id is None:
        return None, (
            f"/{invocation.name} asks for the model {wanted!r}, which is not offered here "
            f"({', '.join(catalog.available_models())}): it runs on {session.model}."
        )
    settings = catalog.settings_near(model_id, session.effort, session.settings)
    return replace(settings, system=system), None


def command_spec(spec: TurnSpec, invocation: Invocation, settings: RunnerSettings | None) -> TurnSpec:
    """The spec of the turn `invocation` starts, from the session's `spec`: the command's own
    `settings` (its `model`) for the whole turn, and the session's gate with the command's
    `allowed-tools` bound on it (its `!` lines and subagents included)."""
    if settings is not None:
        spec = spec.fixed(settings)
    target = invocation.target
    grants = read_allowed_tools(target.allowed_tools if isinstance(target, CustomCommand | Skill) else "")
    if grants:
        spec = replace(spec, gate=spec.gate.bound(grants=grants))
    return spec


@dataclass(frozen=True, slots=True)
class CommandPrompt:
    """The prompt of the turn a command, skill or MCP prompt starts (`turn/driver.py:PromptSource`),
    built inside the turn."""

    invocation: Invocation
    notes: tuple[str, ...] = field(default=())
    """Said to the user first (a `model` the catalog refused)."""

    async def build(self, runner: TurnRunner, history: History, meter: TurnMeter) -> bool:
        for note in self.notes:
            await runner.sink.emit(Notice.warning(note, str(uuid.uuid4())))
        try:
            text = await self._prompt_text(runner, meter, history.journal)
        except ToolError as exc:  # the prompt could not be built: say why, ask nothing
            await runner.sink.emit(Notice(f"/{self.invocation.name}: {exc}", str(uuid.uuid4())))
            return False
        blocks = [{"type": "text", "text": text}, *self.invocation.extra]
        history.add_user(blocks)  # journaled: a loaded session holds what the model was sent
        return True

    async def _prompt_text(self, runner: TurnRunner, meter: TurnMeter, journal: JournalWriter | None) -> str:
        target, arguments = self.invocation.target, self.invocation.arguments
        if isinstance(target, McpPrompt):
            text = await target.fetch(target.bind(arguments))
            if not text.strip():
                raise ToolError(f"the MCP prompt {target.name!r} returned no text")
            return text
        pieces = expand(target.body, arguments)  # the `!` lines are the file's own, never typed text
        if isinstance(target, CustomCommand) and not any(not isinstance(p, str) or p.strip() for p in pieces):
            raise ToolError("the command's file holds no text (and no arguments were given)")
        refs = file_refs(text_of(pieces))[:MAX_FILE_REFS]  # before the commands run: not their output
        text = await run_shell_lines(pieces, runner, meter, journal)
        if isinstance(target, Skill):
            text = await skill_text(replace(target, body=text))
            text = f"The user ran the skill /{target.name}. Follow its instructions:\n\n{text}"
        return await _add_files(text, refs, runner, meter, journal)


async def _add_files(
    text: str, refs: list[str], runner: TurnRunner, meter: TurnMeter, journal: JournalWriter | None
) -> str:
    """The content of each `@path` that names a file, appended: read by read_file tool calls of
    the turn (`commands/shell_lines.py:prompt_calls`), so the engine decides each as any read."""
    files = [ref for ref in refs if await _names_a_file(ref, runner)]
    if not files:
        return text
    if "read_file" not in runner.tools:
        notes = [f"[@{ref} was not read: read_file is not offered in this session]" for ref in files]
        return "\n\n".join([text.rstrip(), *notes])
    read = await prompt_calls("read_file", [{"path": ref} for ref in files], runner, meter, journal)
    parts = [text.rstrip()]
    for ref, (output, failed) in zip(files, read, strict=True):
        parts.append(
            f"[@{ref} was not read: {output}]" if failed else f'<file path="{ref}">\n{output}\n</file>'
        )
    return "\n\n".join(parts)


async def _names_a_file(ref: str, runner: TurnRunner) -> bool:
    """Whether `@ref` is a file reference: a file inside the roots, or a path they do not reach
    (the engine refuses that read, with the tool's own words); a name that is no file is not."""
    try:
        path = runner.ctx.resolve(ref)
    except ToolError:
        return True
    return await anyio.Path(path).is_file()
