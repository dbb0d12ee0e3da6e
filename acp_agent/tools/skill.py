"""The `skill` tool: Agent Skills' progressive disclosure, levels 2 and 3.

Level 1, each skill's name and description, is in the system prompt (the session builds it). When
a task matches one, the model calls `skill` with its name and gets the instructions (the SKILL.md
body) and the list of the files bundled with it; with `file`, it reads one of those files
(`references/…`, `scripts/…`). A skill may live outside the workspace (`~/.claude/skills`), so its
files are readable here, read-only and confined to the skill's own directory, under the rules of
every file a repository provides (`files/provided.py`: no link out, no special file, no file another user
planted, bounded). That directory is pinned when the skill is found (its resolved path, device and
inode): its files are listed and read beneath a directory fd reached without following links, so a
folder swapped for a link since (to `/`, to the agent's config dir) is refused, and the agent's
hidden paths are never read (`hidden.py`). The skills are injected when the session builds its
runner: the tool never looks for them itself.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_agent.errors import ToolError
from acp_agent.tools.base import ToolContext, ToolResult
from acp_agent.tools.files.confined import DirPin, pin_dir, pinned_dir
from acp_agent.tools.files.provided import ProvidedText, read_pinned_file, read_provided_files
from acp_agent.tools.hidden import NOTHING_HIDDEN, HiddenPaths

__all__ = ["MAX_FILE_BYTES", "MAX_LISTED_FILES", "Skill", "SkillTool", "bundled_files"]

MAX_FILE_BYTES = 256 * 1024
"""The most of one bundled file the tool returns."""
MAX_LISTED_FILES = 100
"""The most bundled files listed with a skill's instructions."""
_MAX_DEPTH = 4


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill: its `SKILL.md` at `path`, in `directory`, and what its frontmatter said.

    `model_invocable` False (`disable-model-invocation: true`) keeps it from the model: only the
    user runs it, as a slash command; `user_invocable` False keeps it off the slash commands.
    """

    name: str
    description: str
    path: Path
    body: str
    source: str = "project"
    argument_hint: str | None = None
    model_invocable: bool = True
    user_invocable: bool = True
    allowed_tools: str = ""
    """Its frontmatter's `allowed-tools`, as written: granted when the user runs it as a command."""
    pin: DirPin | None = None
    """Its directory as it was found (None: pinned when the tool is first used)."""
    written_name: str = ""
    """Its frontmatter's `name` where it differs from `name` (its folder's, as Claude Code names
    it): shown in /status, never a name it answers to."""

    @property
    def directory(self) -> Path:
        return self.path.parent

    def pinned(self) -> DirPin:
        """Its directory's pin (blocking when it was not pinned at load).

        Raises:
            ToolError: its directory is gone.
        """
        pin = self.pin or pin_dir(self.directory)
        if pin is None:
            raise ToolError(f"the skill {self.name}'s directory {str(self.directory)!r} is gone")
        return pin


def bundled_files(
    pin: DirPin, limit: int = MAX_LISTED_FILES, hidden: HiddenPaths = NOTHING_HIDDEN
) -> tuple[list[str], bool]:
    """The files in a skill's pinned directory but SKILL.md (relative, sorted, links not followed),
    at most `limit`, and whether there were more. Blocking: run it in a worker thread.

    Raises:
        ToolError: the directory was replaced since it was pinned.
    """
    found: list[str] = []
    withheld = hidden.around(pin.path).under(pin.path)
    with pinned_dir(pin, str(pin.path)) as reached:
        fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=reached)
    try:
        for top, dirs, files, _ in os.fwalk(".", dir_fd=fd, follow_symlinks=False):
            parts = Path(top).parts
            dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if len(parts) < _MAX_DEPTH else []
            for name in sorted(files):
                relative = Path(*parts, name).as_posix()
                if relative != "SKILL.md" and not name.startswith(".") and not withheld.leaves_out(relative):
                    found.append(relative)
                    if len(found) > limit:
                        return found[:limit], True
    finally:
        os.close(fd)
    return found, False


class SkillTool:
    """Loads a skill's instructions, or reads one of its bundled files."""

    name = "skill"
    kind = "read"
    permission = None
    read_only = True
    description = (
        "Load a skill listed under Skills in the system prompt: returns its instructions and the "
        "files bundled with it. Load the skill whose description matches the task before you "
        "start it. With `file`, read one of its bundled files (a path relative to the skill's "
        "directory, e.g. references/guide.md), when its instructions point to it."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The skill's name, as listed."},
            "file": {
                "type": "string",
                "description": "A bundled file to read, relative to the skill's directory.",
            },
        },
        "required": ["name"],
        "additionalProperties": False,
    }

    def __init__(self, skills: Iterable[Skill]) -> None:
        self._skills = {s.name: s for s in skills if s.model_invocable}

    def title(self, args: dict[str, Any]) -> str:
        name, file = args.get("name", "?"), args.get("file")
        return f"Read {file} (skill {name})" if file else f"Load skill {name}"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        name = str(args.get("name", ""))
        skill = self._skills.get(name)
        if skill is None:
            known = ", ".join(sorted(self._skills)) or "none"
            raise ToolError(f"no skill named {name!r}; the skills are: {known}")
        file = args.get("file")
        if file:
            return await _read_bundled(skill, str(file), ctx.hidden)
        return ToolResult(await skill_text(skill, ctx.hidden), locations=((skill.path, None),))


async def skill_text(skill: Skill, hidden: HiddenPaths = NOTHING_HIDDEN) -> str:
    """A skill's instructions as the model gets them: where it lives, its body, its files."""
    try:
        listed = await read_provided_files(lambda: [bundled_files(skill.pinned(), hidden=hidden)])
    except ToolError as exc:
        listed, note = None, f"(its files are not listed: {exc})"
    else:
        note = ""
    files, more = listed[0] if listed else ([], False)
    lines = [f"Skill {skill.name} (base directory: {skill.directory})", "", skill.body.strip()]
    if files:
        lines += ["", f'Files bundled with this skill (read one with skill(name="{skill.name}", file=…)):']
        lines += [f"- {f}" for f in files]
        if more:
            lines.append(f"- … (only the first {MAX_LISTED_FILES} are listed)")
    if note:
        lines += ["", note]
    return "\n".join(lines)


async def _read_bundled(skill: Skill, file: str, hidden: HiddenPaths) -> ToolResult:
    """One bundled file, beneath the skill's pinned directory (links out, special files refused)."""
    got = await read_provided_files(
        lambda: [read_pinned_file(skill.pinned(), file, max_bytes=MAX_FILE_BYTES, hidden=hidden)]
    )
    if got is None:
        raise ToolError(f"reading {file} of the skill {skill.name} took too long")
    found = got[0]
    if found is None:
        raise ToolError(f"the skill {skill.name} has no file {file!r}")
    if not isinstance(found, ProvidedText):
        raise ToolError(f"{file} of the skill {skill.name} was not read: {found.reason}")
    if b"\0" in found.data[:8192]:
        return ToolResult(f"{file} is a binary file ({found.size:,} bytes): not shown", is_error=True)
    text = found.data.decode("utf-8", "replace")
    if found.size > len(found.data):
        text = text.rstrip("\ufffd") + (
            f"\n\n[cut: the first {len(found.data):,} of {found.size:,} bytes are shown]"
        )
    return ToolResult(text, locations=((found.path, None),))
