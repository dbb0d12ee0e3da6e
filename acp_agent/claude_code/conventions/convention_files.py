"""Finding and reading the command files, skills and custom agents a session offers (`conventions.py`
holds them).

Where, in order of precedence (the first of a name wins; the others are noted as shadowed):
- the project: `.claude/commands/**/*.md`, `.claude/skills/*/SKILL.md`, `.agents/skills/*/SKILL.md`
  and `.claude/agents/**/*.md` in the session's cwd and each directory above it up to the
  repository root (the walk AGENTS.md takes; the home directory's own `.claude` counts as the user's);
- the agent's config dir: `commands/**/*.md`, `skills/*/SKILL.md` and `agents/**/*.md`;
- the user's `~/.claude/commands/**/*.md`, `~/.claude/skills/*/SKILL.md` and `~/.claude/agents/**/*.md`;
- the enabled plugins' `commands/**/*.md`, `skills/*/SKILL.md` and `agents/**/*.md`
  (`claude_code/setup/plugins.py` finds them), each named `plugin:name` (an agent's subfolders join
  its name, `plugin:group:name`, as Claude Code has it), so they never clash with the others.

A skill is named by its folder, as Claude Code names it (`skills/code-review/SKILL.md` is
`/code-review` whatever its `name` says); its frontmatter is optional. An agent by its `name`.

Every file is read under the rules of the file tools (`tools/files/provided.py`): a project file must
resolve inside the repository, a config-dir file inside the config dir, a `~/.claude` file inside
the home directory, a plugin's inside the plugin's directory; a link out, a FIFO, a file another
user owns, a file the settings' `Read(…)` deny rules name (`denials`) is refused and named. Caps keep a
repository with hundreds of files cheap: at most MAX_COMMAND_FILES command files, MAX_SKILLS
skills and MAX_AGENT_FILES agent files are read, each at most FILE_BYTES. Blocking:
`load_conventions` runs it in a worker thread.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import structlog

from acp_agent.claude_code.conventions.agents import CustomAgent, read_agent
from acp_agent.claude_code.conventions.allowed_tools import read_allowed_tools
from acp_agent.claude_code.conventions.builtins import BUILT_IN_NAMES
from acp_agent.claude_code.conventions.conventions import Conventions, CustomCommand
from acp_agent.claude_code.memory.instructions import _directories
from acp_agent.claude_code.settings.frontmatter import split_frontmatter
from acp_agent.claude_code.setup.plugins import Plugin
from acp_agent.tools.files.confined import pin_dir
from acp_agent.tools.files.grant_dirs import DEPTHS
from acp_agent.tools.files.provided import (
    READ_SECONDS,
    ProvidedText,
    Refusal,
    read_provided_file,
    read_provided_files,
)
from acp_agent.tools.hidden import NOTHING_HIDDEN, PathDenials
from acp_agent.tools.skill import Skill
from acp_agent.user_dirs import user_config_dir, user_home

__all__ = [
    "FILE_BYTES",
    "MAX_AGENT_FILES",
    "MAX_COMMAND_FILES",
    "MAX_DESCRIPTION",
    "MAX_SKILLS",
    "load_conventions",
    "read_conventions",
    "session_conventions",
]

log = structlog.get_logger(__name__)

FILE_BYTES = 64 * 1024
"""The largest command file or SKILL.md read; a larger one is skipped, and named."""
MAX_COMMAND_FILES = 500
MAX_SKILLS = 200
MAX_AGENT_FILES = 100
MAX_DESCRIPTION = 1024
"""Characters of a skill's description kept (the Agent Skills format's limit): a longer one is cut."""


class _Found:
    """What the walk collects: the winners by name, the notes on everything left out."""

    def __init__(self, denials: PathDenials | None = None) -> None:
        self.denied = NOTHING_HIDDEN.with_denials(denials)
        """The settings' Read denies, as the file tools apply them (the files are read for the model)."""
        self.commands: dict[str, CustomCommand] = {}
        self.skills: dict[str, Skill] = {}
        self.agents: dict[str, CustomAgent] = {}
        self.skipped: list[str] = []
        self.agents_skipped: list[str] = []
        self.seen: set[tuple[int, int]] = set()
        """The files read, by device and inode."""
        self.files = 0
        self.agent_files = 0

    def skip(self, path: Path, note: str, *, agent: bool = False) -> None:
        log.warning("conventions.skipped", path=str(path), reason=note)
        (self.agents_skipped if agent else self.skipped).append(f"{path} ({note})")

    def read(self, path: Path, inside: Path, *, agent: bool = False) -> str | None:
        """The file's text, or None (missing, seen already, or refused: then noted)."""
        got = read_provided_file(path, inside=inside, max_bytes=FILE_BYTES + 1, hidden=self.denied)
        if got is None:
            return None
        if isinstance(got, Refusal):
            self.skip(path, f"refused: {got.reason}", agent=agent)
            return None
        try:
            info = os.stat(path)
        except OSError:
            return None
        if (info.st_dev, info.st_ino) in self.seen:  # one file reached twice (say, through a link)
            return None
        self.seen.add((info.st_dev, info.st_ino))
        assert isinstance(got, ProvidedText)
        if got.size > FILE_BYTES:
            self.skip(path, f"skipped: larger than the {FILE_BYTES // 1024} KiB cap", agent=agent)
            return None
        return got.data.decode("utf-8", "replace")


def _places(cwd: Path, home: Path | None, config_dir: Path | None) -> Iterator[tuple[Path, str, Path]]:
    """(a `.claude`-like directory, its source, the directory its files must resolve inside)."""
    directories, repository = _directories(cwd, home)
    for directory in directories:
        if directory != home:
            yield directory / ".claude", "project", repository or directory
            yield directory / ".agents", "project", repository or directory
    if config_dir is not None:
        yield config_dir, "user", config_dir
    if home is not None:
        yield home / ".claude", "user", home


def read_conventions(
    cwd: Path,
    *,
    home: Path | None,
    config_dir: Path | None,
    plugins: Sequence[Plugin] = (),
    denials: PathDenials | None = None,
) -> Conventions:
    """Every command, skill and agent for a session at `cwd` (and of `plugins`), with the notes on
    those left out (a file `denials` names among them)."""
    found = _Found(denials)
    for base, source, inside in _places(cwd, home, config_dir):
        if base.name != ".agents":  # `.agents` holds skills only
            _read_commands(found, base / "commands", source, inside)
            _read_agents(found, base / "agents", source, inside)
        _read_skills(found, base / "skills", source, inside)
    for plugin in plugins:  # after the user's: a plugin's names are `plugin:name`, never theirs
        prefix = f"{plugin.name}:"
        _read_commands(found, plugin.root / "commands", "plugin", plugin.root, prefix)
        _read_agents(found, plugin.root / "agents", "plugin", plugin.root, prefix)
        _read_skills(found, plugin.root / "skills", "plugin", plugin.root, prefix)
    commands = sorted(found.commands.values(), key=lambda c: c.name)
    for command in commands:
        if command.name in found.skills:
            found.skip(command.path, f"shadowed by the skill {found.skills[command.name].path}")
    return Conventions(
        tuple(c for c in commands if c.name not in found.skills),
        tuple(sorted(found.skills.values(), key=lambda s: s.name)),
        skipped=tuple(found.skipped),
        agents=tuple(sorted(found.agents.values(), key=lambda a: a.name)),
        agents_skipped=tuple(found.agents_skipped),
    )


def _markdown_files(root: Path) -> Iterator[tuple[Path, tuple[str, ...]]]:
    """(a `.md` file under `root`, the subdirectories it is in), sorted. As deep as the
    sensitive-write guard looks for links in that directory (`DEPTHS`: commands' namespaces, agents'
    groups), so no file read here can be a link the guard does not see."""
    if not root.is_dir():
        return
    depth = DEPTHS[root.name]
    for top, dirs, files in os.walk(root, followlinks=False):
        relative = Path(top).relative_to(root)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if len(relative.parts) < depth else []
        for name in sorted(f for f in files if f.endswith(".md") and not f.startswith(".")):
            yield Path(top) / name, relative.parts


def _read_commands(found: _Found, root: Path, source: str, inside: Path, prefix: str = "") -> None:
    for path, namespace in _markdown_files(root):
        if found.files >= MAX_COMMAND_FILES:
            found.skip(path, f"not read: the cap of {MAX_COMMAND_FILES} command files was reached")
            return
        found.files += 1
        _add_command(found, path, ":".join(namespace), source, inside, prefix)


def _read_agents(found: _Found, root: Path, source: str, inside: Path, prefix: str = "") -> None:
    """The agent files under `root`: the first of a name wins (the nearest project directory). A
    plugin's (`prefix`) are named `plugin:group:name`: its subfolders join the name."""
    for path, groups in _markdown_files(root):
        if found.agent_files >= MAX_AGENT_FILES:
            found.skip(path, f"not read: the cap of {MAX_AGENT_FILES} agent files was reached", agent=True)
            return
        found.agent_files += 1
        text = found.read(path, inside, agent=True)
        if text is None:
            continue
        agent = read_agent(path, text, source)
        if prefix and not isinstance(agent, str):
            agent = replace(agent, name=prefix + ":".join((*groups, agent.name)))
        if isinstance(agent, str):
            found.skip(path, f"skipped: {agent}", agent=True)
        elif agent.name in found.agents:
            found.skip(path, f"shadowed by {found.agents[agent.name].path}", agent=True)
        else:
            if agent.ignored:
                log.warning("conventions.agent_tools_ignored", path=str(path), ignored=list(agent.ignored))
            found.agents[agent.name] = agent


def _add_command(found: _Found, path: Path, namespace: str, source: str, inside: Path, prefix: str) -> None:
    bare = path.name.removesuffix(".md")
    name = prefix + bare
    text = found.read(path, inside)
    if text is None:
        return
    fields, body, problem = split_frontmatter(text)
    if problem:
        found.skip(path, f"skipped: {problem}")
    elif not bare or any(c.isspace() or not c.isprintable() for c in bare):
        found.skip(path, "skipped: a command's name (its file name) cannot hold spaces or control characters")
    elif name in BUILT_IN_NAMES:
        found.skip(path, f"shadowed by the built-in /{name}")
    elif name in found.commands:
        found.skip(path, f"shadowed by {found.commands[name].path}")
    else:
        first = next((line.strip().lstrip("#").strip() for line in body.splitlines() if line.strip()), "")
        found.commands[name] = CustomCommand(
            name,
            path,
            body,
            source,
            namespace,
            fields.get("description") or first[:100] or "Custom command",
            fields.get("argument-hint") or None,
            fields.get("model") or None,
            _allowed_tools(path, fields),
        )


def _read_skills(found: _Found, root: Path, source: str, inside: Path, prefix: str = "") -> None:
    try:
        entries = sorted(e for e in os.listdir(root) if not e.startswith("."))
    except OSError:
        return
    for entry in entries:
        path = root / entry / "SKILL.md"
        if len(found.skills) >= MAX_SKILLS:
            found.skip(root, f"not all read: the cap of {MAX_SKILLS} skills was reached")
            return
        text = found.read(path, inside)
        if text is not None:
            _add_skill(found, path, text, source, prefix)


def _add_skill(found: _Found, path: Path, text: str, source: str, prefix: str) -> None:
    """A skill is named by its folder, as Claude Code names it (`code-review/SKILL.md` is
    `/code-review`, whatever its `name` says); its frontmatter is optional, and without a
    `description` the body's first paragraph describes it."""
    fields, body, problem = split_frontmatter(text)
    bare = path.parent.name
    name = prefix + bare
    if problem:
        found.skip(path, f"skipped: {problem}")
    elif any(c.isspace() or not c.isprintable() for c in bare):
        found.skip(path, "skipped: a skill's name (its folder's) cannot hold spaces or control characters")
    elif name in BUILT_IN_NAMES:
        found.skip(path, f"shadowed by the built-in /{name}")
    elif name in found.skills:
        found.skip(path, f"shadowed by {found.skills[name].path}")
    else:
        written = " ".join(fields.get("name", "").split())
        found.skills[name] = Skill(
            name,
            _description(fields.get("description", ""), body, path),
            path,
            body,
            source,
            fields.get("argument-hint") or None,
            model_invocable=fields.get("disable-model-invocation", "").lower() != "true",
            user_invocable=fields.get("user-invocable", "").lower() != "false",
            allowed_tools=_allowed_tools(path, fields),
            pin=pin_dir(path.parent),  # the directory its files are read from, as it is now
            written_name=written if written and written != bare else "",
        )


def _description(written: str, body: str, path: Path) -> str:
    """The frontmatter's `description`, else the body's first paragraph (a heading's text when
    the body has only headings), one line, cut at MAX_DESCRIPTION characters."""
    text = " ".join(written.split())
    if not text:
        paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", body) if p.strip()]
        prose = [p for p in paragraphs if not p.startswith("#")]
        text = prose[0] if prose else paragraphs[0].lstrip("#").strip() if paragraphs else ""
    if len(text) > MAX_DESCRIPTION:
        log.warning("conventions.description_cut", path=str(path), length=len(text), kept=MAX_DESCRIPTION)
        text = text[: MAX_DESCRIPTION - 1] + "…"
    return text or "(no description)"


def _allowed_tools(path: Path, fields: dict[str, str]) -> str:
    """The `allowed-tools` value as written; what of it will be ignored is logged here, once."""
    value = fields.get("allowed-tools", "")
    ignored = read_allowed_tools(value).ignored if value.strip() else ()
    if ignored:
        log.warning("conventions.allowed_tools_ignored", path=str(path), ignored=list(ignored))
    return value


async def load_conventions(
    cwd: Path,
    *,
    home: Path | None,
    config_dir: Path | None,
    plugins: Sequence[Plugin] = (),
    denials: PathDenials | None = None,
) -> Conventions:
    """`read_conventions` in a worker thread; past READ_SECONDS, none (and that is noted)."""
    got = await read_provided_files(
        lambda: [read_conventions(cwd, home=home, config_dir=config_dir, plugins=plugins, denials=denials)]
    )
    if got is None:
        log.warning("conventions.timed_out", cwd=str(cwd), seconds=READ_SECONDS)
        return Conventions(skipped=(f"{cwd} (reading commands and skills took over {READ_SECONDS:g} s)",))
    return got[0]


async def session_conventions(
    cwd: Path, plugins: Sequence[Plugin] = (), denials: PathDenials | None = None
) -> Conventions:
    """The commands, skills and agents of a session at `cwd`, with the user's home and config dir,
    and of the enabled `plugins` in force; none of the files the settings' Read `denials` name."""
    return await load_conventions(
        cwd, home=user_home(), config_dir=user_config_dir(), plugins=plugins, denials=denials
    )
