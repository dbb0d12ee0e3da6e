"""Paths whose contents make tools run code: an edit there is as strong as a command.

`core.fsmonitor` in `.git/config` runs at the user's next `git status`; a hook runs at the next
commit; `.envrc` runs when direnv enters the directory; an editor's task or settings file runs
when the editor opens the folder. So a write to one of them is asked for in every mode but
bypassPermissions, whatever acceptEdits or an "always allow" answer says (issue 19).

Names are not enough (issue 29): git runs what its real git dir holds, wherever a `.git` file
points (`gitdir:`), and the hooks wherever `core.hooksPath` puts them (`tools/files/gitdir.py`); and a
hard link to `.git/config` under another name, written in place by the editor, changes the config.
So the file's repository is asked where git looks, and an existing file with more than one name
(a hard link: compared by device and inode, not by name) counts too.

Commands, skills, agents, hooks and settings are grants (issue 35): a command file's
`allowed-tools` and `!` lines run at its next `/name`, unasked. So all of `.claude/` (but the
checkouts in `.claude/worktrees/`, as Claude Code has it) and `.agents/skills/` count by name, and
by identity where their links lead (`tools/files/grant_dirs.py`).

Some of them decide what the agent itself may do (issue 41): `.claude/settings.json` and
`settings.local.json` (rules, mode, hooks, env, MCP approvals), `.claude/hooks/` (what the hooks
run), `.mcp.json` (the servers started), and a memory file (`CLAUDE.md`, `CLAUDE.local.md`,
`.claude/rules/*.md`) given an `@import`. A write there (`governance_reason`) is asked in every
mode, bypassPermissions included, and the question says what the file would enable
(`claude_code/setup/write_guard.py`); the sandbox keeps the existing ones read-only for commands
(`tools/sandbox/command_sandbox.py`).
"""

from __future__ import annotations

import itertools
import os
import re
import stat
from pathlib import Path, PurePosixPath

import anyio.to_thread

from acp_agent.errors import ToolError
from acp_agent.tools.files.edit import text_after
from acp_agent.tools.files.gitdir import Repository, find_repository, looks_like_git_dir
from acp_agent.tools.files.grant_dirs import UNGUARDED, grant_places
from acp_agent.tools.paths import Roots, resolve_inside

__all__ = [
    "GOVERNANCE_FILES",
    "SENSITIVE_DIRS",
    "SENSITIVE_FILES",
    "SENSITIVE_SUFFIXES",
    "governance_reason",
    "guarded_write",
    "sensitive_reason",
    "sensitive_write",
]

SENSITIVE_DIRS = {
    ".git": "git runs what its config and hooks name",
    ".husky": "git hooks run from here",
    ".devcontainer": "a dev container runs the commands it names",
    ".idea": "JetBrains IDEs run the run configurations kept here",
    ".claude": (
        "Claude Code and this agent run what is kept here: commands and skills (their allowed-tools "
        "and ! lines), agents, hooks, settings"
    ),
    ".agents/skills": "this agent runs the skills kept here (their allowed-tools and ! lines)",
}
"""Any file below a directory of this name, or these two names (at any depth: a submodule has its
own `.git`, a sub-directory its own `.claude`)."""

_VSCODE = "VS Code runs its tasks and the programs its settings name (some on folder open)"
SENSITIVE_FILES = {
    ".envrc": "direnv runs it when the shell enters the directory",
    ".envrc.local": "direnv setups source it from .envrc",
    ".pre-commit-config.yaml": "pre-commit runs the hooks it names at each commit",
    "lefthook.yml": "lefthook runs the hooks it names at each commit",
    "lefthook.yaml": "lefthook runs the hooks it names at each commit",
    ".lefthook.yml": "lefthook runs the hooks it names at each commit",
    "lefthook-local.yml": "lefthook runs the hooks it names at each commit",
    ".vscode/tasks.json": _VSCODE,
    ".vscode/settings.json": _VSCODE,
    ".vscode/launch.json": "VS Code runs its launch configurations",
    ".vscode/mcp.json": "VS Code starts the MCP servers it names",
    ".devcontainer.json": "a dev container runs the commands it names",
    ".zed/tasks.json": "Zed runs its tasks",
    ".zed/settings.json": "Zed settings can name programs to run",
    ".helix/languages.toml": "Helix starts the language servers it names",
    ".nvim.lua": "Neovim runs it on start (with 'exrc')",
    ".nvimrc": "Neovim runs it on start (with 'exrc')",
    ".exrc": "Vim runs it on start (with 'exrc')",
    ".mcp.json": "MCP clients start the servers it names",
    ".cursor/mcp.json": "Cursor starts the MCP servers it names",
    "mise.toml": "mise runs the tasks and hooks it names on entering the directory",
    ".mise.toml": "mise runs the tasks and hooks it names on entering the directory",
    "mise.local.toml": "mise runs the tasks and hooks it names on entering the directory",
    ".mise/config.toml": "mise runs the tasks and hooks it names on entering the directory",
    ".npmrc": "npm runs what it names (script-shell, git) at the next install",
    ".yarnrc": "yarn runs what it names at the next install",
    ".yarnrc.yml": "yarn runs the yarnPath and plugins it names",
    ".pnpmfile.cjs": "pnpm runs it at the next install",
}
"""A file of this name (or these last components) anywhere in the tree."""

SENSITIVE_SUFFIXES = {".code-workspace": "VS Code runs the tasks and settings of a workspace file"}
"""A file whose name ends so."""


_SETTINGS_REASON = "the agent reads its permission rules, mode, hooks, env and MCP approvals from it"
GOVERNANCE_FILES = {
    ".claude/settings.json": _SETTINGS_REASON,
    ".claude/settings.local.json": _SETTINGS_REASON,
    ".mcp.json": "the agent starts the MCP servers it names",
}
"""Files (these last components, at any depth) that decide what the agent itself may run."""
_HOOKS_REASON = "the agent's hooks run the scripts kept in .claude/hooks"
_MEMORY_NAMES = frozenset({"claude.md", "claude.local.md"})
_IMPORT = re.compile(r"(?:^|(?<=\s))@(?:\./|\.\./|~/|/|[A-Za-z0-9._-])")
"""A word that may be an `@path` import of a memory file (the reader's own test is stricter)."""
_IMPORT_WORD = re.compile(_IMPORT.pattern + r"\S*")
"""The same word, whole."""


def _governance(relative: str, new_text: str | None) -> str | None:
    parts = [p.casefold() for p in PurePosixPath(relative).parts]
    name = parts[-1] if parts else ""
    if reason := GOVERNANCE_FILES.get("/".join(parts[-2:])) or GOVERNANCE_FILES.get(name):
        return reason
    if any(a == ".claude" and b == "hooks" for a, b in itertools.pairwise(parts[:-1])):
        return _HOOKS_REASON
    memory = name in _MEMORY_NAMES or (name.endswith(".md") and ".claude/rules" in "/".join(parts[:-1]))
    if memory and new_text is not None and _IMPORT.search(new_text):
        return "the agent reads it into the system prompt with the files its @imports name"
    return None


def governance_reason(roots: Roots, path: str, new_text: str | None = None) -> str | None:
    """Why writing `path` (with `new_text` in it, where known) changes what the agent itself may
    run or read, or None: the path as written, where it resolves, and where the session's own
    `.claude` and `.mcp.json` lead (a link to one counts). Blocking: `guarded_write` runs it in a
    thread."""
    if not isinstance(path, str) or not path:
        return None
    if reason := _governance(os.path.normpath(path.replace("\\", "/")), new_text):
        return reason
    try:
        resolved = Path(resolve_inside(roots, path))
    except ToolError:
        return None
    shown = _in_its_root(roots, resolved)
    if shown != "." and (reason := _governance(shown, new_text)):
        return reason
    for base in _bases(roots):
        for name, reason in (*GOVERNANCE_FILES.items(), (".claude/hooks", _HOOKS_REASON)):
            place = Path(os.path.realpath(base / name))
            if resolved == place or (name.endswith("hooks") and _inside(resolved, place)):
                return reason
    return None


MAX_MEMORY_READ = 1 << 20
"""Bytes of a memory file read to weigh an edit of it (the reader's own cap is far lower)."""


def _memory_after_edit(roots: Roots, path: str, old_s: str, new_s: str) -> str | None:
    """The `@import` words a memory file (CLAUDE.md, a `.claude/rules` file) will hold after an edit
    that it does not hold now ("" for none), or None when that cannot be told (not a memory file,
    not readable inside the roots, or an edit that would be refused)."""
    name = PurePosixPath(path.replace("\\", "/")).name.casefold()
    if name not in _MEMORY_NAMES and not name.endswith(".md"):
        return None
    try:
        resolved = resolve_inside(roots, path)
        with open(resolved, "rb") as f:
            raw = f.read(MAX_MEMORY_READ + 1)
    except (ToolError, OSError):
        return None
    if len(raw) > MAX_MEMORY_READ:
        return None
    before = raw.decode("utf-8", errors="replace")
    after = text_after(before, old_s, new_s)
    if after is None:
        return None
    had = set(_import_words(before))
    return " ".join(w for w in _import_words(after) if w not in had)


def _import_words(text: str) -> list[str]:
    """Each word of `text` that may be an import, whole (`@~/.ssh/id_rsa`)."""
    return _IMPORT_WORD.findall(text)


def _bases(roots: Roots) -> list[Path]:
    """Each root and its parents up to its repository's top: where the settings are read."""
    found: dict[Path, None] = {}
    for root in (Path(os.path.realpath(r)) for r in _as_tuple(roots)):
        for directory in (root, *root.parents):
            found.setdefault(directory)
            if os.path.lexists(directory / ".git"):
                break
    return list(found)


async def guarded_write(
    roots: Roots, path: str, new_text: str | None = None, *, replacing: str | None = None
) -> str | None:
    """The guard on a write of `path`: "governance" (asked in every mode: `governance_reason`),
    "sensitive" (asked in every mode but bypassPermissions: `sensitive_reason`), or None.
    `replacing`: an edit's `old_string`, `new_text` its `new_string`: a memory file is weighed by
    the imports it will hold after the edit that it does not hold now (a lone `@` before an
    existing `~/…` makes one), not by the `new_string` alone."""

    def check() -> str | None:
        text = new_text
        if replacing is not None and new_text is not None:
            added = _memory_after_edit(roots, path, replacing, new_text)
            text = new_text if added is None else added
        if governance_reason(roots, path, text):
            return "governance"
        return "sensitive" if sensitive_reason(roots, path) else None

    return await anyio.to_thread.run_sync(check, abandon_on_cancel=True)


def _reason(relative: str) -> str | None:
    parts = [p.casefold() for p in PurePosixPath(relative).parts]  # case-insensitive disks too
    for index, part in enumerate(parts[:-1]):
        below = parts[index + 1]
        if part == ".claude" and below == UNGUARDED:
            continue
        if reason := SENSITIVE_DIRS.get(part) or SENSITIVE_DIRS.get(f"{part}/{below}"):
            return reason
    if parts and parts[-1] in SENSITIVE_DIRS:  # the directory itself (write_file ".git" fails)
        return SENSITIVE_DIRS[parts[-1]]
    tail = "/".join(parts[-2:])
    name = parts[-1] if parts else ""
    if reason := SENSITIVE_FILES.get(tail) or SENSITIVE_FILES.get(name):
        return reason
    return next((why for suffix, why in SENSITIVE_SUFFIXES.items() if name.endswith(suffix)), None)


def _in_its_root(roots: Roots, path: Path) -> str:
    """`path` relative to the root that holds it (the cwd, or an additional root), as `_reason`
    reads it: the guards of every root are the same."""
    for root in (Path(os.path.realpath(r)) for r in _as_tuple(roots)):
        if _inside(path, root):
            return path.relative_to(root).as_posix()
    return str(path)


def _inside(path: Path, directory: Path) -> bool:
    return path == directory or path.is_relative_to(directory)


def _repositories(roots: Roots, resolved: Path) -> list[Repository]:
    """The repository holding the file, and those of the session's roots (the user runs git
    there: their `.git` may be a file naming a git dir elsewhere in the tree)."""
    found: dict[Path, Repository] = {}
    for directory in (resolved.parent, *(Path(os.path.realpath(r)) for r in _as_tuple(roots))):
        repository = find_repository(directory)
        if repository is not None:
            found.setdefault(repository.git_dir, repository)
    return list(found.values())


def _as_tuple(roots: Roots) -> tuple[Path, ...]:
    return (roots,) if isinstance(roots, Path) else tuple(roots)


def _git_reason(repositories: list[Repository], resolved: Path) -> str | None:
    """Why git may run `resolved`'s contents, or None."""
    for repository in repositories:
        for directory in (repository.git_dir, repository.common_dir):
            if _inside(resolved, directory):
                return f"it is in the git dir {directory}, whose config and hooks git runs"
        for hooks in repository.hooks_paths:
            if _inside(resolved, hooks):
                return f"git runs the hooks in {hooks} (core.hooksPath)"
    for directory in resolved.parents:
        if looks_like_git_dir(directory):
            return f"it is in {directory}, a git dir, whose config and hooks git runs"
    return None


def _link_reason(repositories: list[Repository], resolved: Path) -> str | None:
    """Why an existing file with several names (hard links) is sensitive, or None."""
    try:
        info = os.stat(resolved)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_nlink < 2:
        return None
    for repository in repositories:
        for known in (repository.common_dir / "config", repository.git_dir / "config"):
            if _same_file(known, info):
                return f"it is a hard link to {known}: writing it in place changes git's config"
        for hooks in repository.hook_dirs:
            for hook in _entries(hooks):
                if _same_file(hook, info):
                    return f"it is a hard link to the git hook {hook}"
    return (
        f"it has {info.st_nlink} names (hard links): an in-place write changes every one, and "
        f"another may be a file that runs code"
    )


def _same_file(path: Path, info: os.stat_result) -> bool:
    try:
        other = os.stat(path)
    except OSError:
        return False
    return (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino)


def _entries(directory: Path) -> list[Path]:
    try:
        with os.scandir(directory) as found:
            return [Path(entry.path) for entry in found][:1000]
    except OSError:
        return []


def sensitive_reason(roots: Roots, path: str) -> str | None:
    """Why writing `path` can make code run, or None; checks the path as written, where it
    resolves (a symlink into `.git/` counts), where git looks for that file's repository, and
    whether the file has other names. Blocking (small reads): `sensitive_write` runs it in a thread."""
    if not isinstance(path, str) or not path:
        return None
    lexical = os.path.normpath(path.replace("\\", "/"))
    reason = _reason(lexical)
    if reason is not None:
        return reason
    try:
        resolved = resolve_inside(roots, path)
    except ToolError:
        return None  # the tool refuses it anyway
    shown = _in_its_root(roots, Path(resolved))
    if shown != "." and (reason := _reason(shown)):
        return reason
    repositories = _repositories(roots, resolved)
    return (
        _git_reason(repositories, resolved)
        or _grant_reason(roots, resolved)
        or _link_reason(repositories, resolved)
    )


def _grant_reason(roots: Roots, resolved: Path) -> str | None:
    """Why `resolved` is a grant by identity (a link's target), or None."""
    places = grant_places(tuple(Path(os.path.realpath(r)) for r in _as_tuple(roots)))
    if places.holds(resolved):
        return (
            "a command, skill, agent, hook or Claude settings file is read from there (through a "
            "link): its allowed-tools and ! lines run code"
        )
    return None


async def sensitive_write(roots: Roots, path: str) -> str | None:
    """`sensitive_reason` in a worker thread: it reads git's files, never on the event loop."""
    return await anyio.to_thread.run_sync(sensitive_reason, roots, path, abandon_on_cancel=True)
