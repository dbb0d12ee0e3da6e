"""The settings files, found and read as Claude Code finds and reads them.

From the highest precedence (for a single value such as `defaultMode`: the first that sets it wins;
lists such as the permission rules are pooled from all of them):

0. the managed policy, read once at start-up (`managed.py`: its files merged into one, which
   nothing below overrides; its managed-only locks say what of the others still applies);
1. `.claude/settings.local.json` at the repository root (the main checkout's for a worktree; the
   starting directory outside a repository), and a copy an older Claude Code left in the starting
   directory: the user's where the user's own hand made it (`local_owner.py`), the rest of it
   read as the project's;
2. `.claude/settings.json` in the starting directory (the project's, committed);
3. acp-agent's own `settings.json` in its config dir (the same format; a file the tools never
   show, so the model cannot write rules there);
4. the user's `~/.claude/settings.json` (or `$CLAUDE_CONFIG_DIR/settings.json`).

Each file is read once per session (session/new, load, resume: Claude Code reads them per
session too), strict JSON, at most 1 MiB, a regular file opened without waiting on a FIFO. A file
that is not valid JSON, or not an object, is skipped; a key of the wrong type is skipped; each with
a warning (the log and `/status`), and the session goes on.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp_agent.claude_code.settings.local_owner import LocalOwners, split_owned
from acp_agent.claude_code.settings.managed import ManagedPolicy
from acp_agent.claude_code.settings.settings_json import (
    MAX_SETTINGS_BYTES,
    claude_config_dir,
    parse_json_object,
    read_json_object,
)
from acp_agent.claude_code.settings.settings_keys import classified
from acp_agent.tools.files.gitdir import find_repository, index_tracks

__all__ = [
    "MAX_SETTINGS_BYTES",
    "SettingsFile",
    "checked_settings",
    "claude_config_dir",
    "find_settings",
    "parse_json_object",
    "read_json_object",
    "repository_root",
    "shown_path",
]

_RULE_LISTS = ("allow", "ask", "deny")
_STRING_LISTS = (
    ("permissions", "additionalDirectories"),
    ("enabledMcpjsonServers",),
    ("disabledMcpjsonServers",),
    ("claudeMdExcludes",),
)
_STRINGS = (
    ("permissions", "defaultMode"),
    ("permissions", "disableBypassPermissionsMode"),
    ("outputStyle",),
    ("model",),
)
_OBJECTS = (("hooks",), ("env",), ("enabledPlugins",))
_BOOLS = (("enableAllProjectMcpServers",),)
_LISTS = (("allowedMcpServers",), ("deniedMcpServers",))


@dataclass(frozen=True, slots=True)
class SettingsFile:
    """One settings file, read and checked.

    `scope` is managed, local, project, acp-agent or user; `shown` names it as `/permissions` and a
    refusal do; `anchor` is what a rule's leading `/` means there (`permissions/path_rules.py`); `project`:
    the repository wrote it (the project file, or a local file git tracks or a linked `.claude`),
    so what it widens waits for trust."""

    scope: str
    path: Path
    shown: str
    anchor: Path
    data: dict[str, Any] = field(default_factory=dict)
    project: bool = False

    def get(self, *keys: str) -> Any:
        """The value at `keys` (`("permissions", "allow")`), None where absent; only a key
        `settings_keys.py` classifies (whether a project's value waits for trust) is read."""
        classified(keys)
        value: Any = self.data
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        return value


def repository_root(cwd: Path) -> Path:
    """Where the local settings file lives: the repository's top (a worktree's main checkout),
    else `cwd`; `cwd` too when that top is the home directory (as Claude Code has it)."""
    repository = find_repository(cwd)
    if repository is None:
        return cwd
    top = repository.top
    if repository.common_dir != repository.git_dir and repository.common_dir.name == ".git":
        top = repository.common_dir.parent  # a worktree: the main checkout's
    home = _home()
    return cwd if home is not None and top == home else top


def find_settings(
    cwd: Path,
    root: Path,
    *,
    home: Path | None,
    config_dir: Path | None,
    warn: Callable[[str], None],
    tracked: Callable[[Path, Path], bool] | None = None,
    owners: LocalOwners | None = None,
    policy: ManagedPolicy | None = None,
) -> tuple[SettingsFile, ...]:
    """The settings files for a session at `cwd` (absolute, resolved) in the repository whose local
    settings live at `root` (`repository_root`), highest precedence first: `policy`'s first.

    `tracked(root, path)` says whether git tracks a file (default: its index says, `_git_tracks`);
    `owners` whose hand made the local files (`local_owner.py`; None: an untracked one is the
    user's, as Claude Code has it)."""
    found: list[SettingsFile] = []
    if policy is not None and (policy.data or policy.broken):
        where = policy.files[0] if len(policy.files) == 1 else policy.directory / "managed-settings.json"
        checked = _checked(policy.data, policy.shown, warn)
        found.append(SettingsFile("managed", where, policy.shown, policy.directory, checked))

    found += _local_files(cwd, root, home, warn, tracked or _git_tracks, owners)
    shared = cwd / ".claude" / "settings.json"
    data = _read(shared, shown_path(shared, root, home), warn)
    if data is not None:
        found.append(SettingsFile("project", shared, shown_path(shared, root, home), cwd, data, True))
    if config_dir is not None:
        own = config_dir / "settings.json"
        data = _read(own, shown_path(own, root, home), warn)
        if data is not None:
            found.append(SettingsFile("acp-agent", own, shown_path(own, root, home), config_dir, data))
    user_dir = claude_config_dir(home)
    if user_dir is not None:
        user = user_dir / "settings.json"
        data = _read(user, shown_path(user, root, home), warn)
        if data is not None:
            found.append(SettingsFile("user", user, shown_path(user, root, home), user_dir, data))
    return tuple(found)


def _local_files(
    cwd: Path,
    root: Path,
    home: Path | None,
    warn: Callable[[str], None],
    is_tracked: Callable[[Path, Path], bool],
    owners: LocalOwners | None,
) -> list[SettingsFile]:
    """The local files (the root's, and an older copy in `cwd`), each split into the user's part
    and the project's: a file git tracks, or in a linked `.claude`, is the project's whole; else
    what `owners` records as the user's hand is theirs, and the rest the project's."""
    read: list[tuple[Path, dict[str, Any] | None, bool]] = []
    for place in [root] if root == cwd else [root, cwd]:
        path = place / ".claude" / "settings.local.json"
        data = _read(path, shown_path(path, root, home), warn)
        project = data is not None and ((place / ".claude").is_symlink() or is_tracked(root, path))
        read.append((path, data, project))
    owned = None
    if owners is not None:
        untracked = [(path, data) for path, data, project in read if not project]
        owned = owners.owned(root, untracked, adoptable=_git_used(root))
    found: list[SettingsFile] = []
    for path, data, project in read:
        if data is None:
            continue
        shown = shown_path(path, root, home)
        if project or owned is None:
            found.append(SettingsFile("local", path, shown, cwd, data, project))
            continue
        mine, rest = split_owned(data, owned.get(path, {}))
        if mine:
            found.append(SettingsFile("local", path, shown, cwd, mine))
        if rest:
            found.append(SettingsFile("local", path, shown, cwd, rest, True))
            warn(
                f'{shown}: {", ".join(sorted(rest))} not written by you or by this agent\'s "always" '
                "answers (it came with the folder, or after the agent first ran here): read as the "
                "project's, what it widens waits for the trust question"
            )
    return found


def _git_used(root: Path) -> bool:
    """Whether `root` is a repository git has used (it has an index): only then can a local file
    be told apart from the project's history (an archive or a folder without `.git` ships one)."""
    repository = find_repository(root)
    return repository is not None and os.path.isfile(repository.git_dir / "index")


def shown_path(path: Path, root: Path, home: Path | None) -> str:
    """`path` as the user recognises it: relative to the repository root, else `~/…`, else whole."""
    if path.is_relative_to(root) and root != Path("/"):
        return path.relative_to(root).as_posix()
    if home is not None and path.is_relative_to(home):
        return "~/" + path.relative_to(home).as_posix()
    return str(path)


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except (RuntimeError, OSError):
        return None


def _read(path: Path, shown: str, warn: Callable[[str], None]) -> dict[str, Any] | None:
    """The checked content of one settings file; None when it is absent or skipped."""
    data = read_json_object(path, shown, warn)
    return None if data is None else _checked(data, shown, warn)


def checked_settings(raw: bytes, shown: str, warn: Callable[[str], None]) -> dict[str, Any] | None:
    """`raw` as a settings file is read (a JSON object, a key of the wrong type skipped), or None."""
    data = parse_json_object(raw, shown, warn)
    return None if data is None else _checked(data, shown, warn)


def _checked(data: dict[str, Any], shown: str, warn: Callable[[str], None]) -> dict[str, Any]:
    """`data` without the values this agent reads that have the wrong type (each warned). The
    rules of a list are checked one by one later (a bad one is skipped on its own)."""
    kept = dict(data)
    if "permissions" in kept and not isinstance(kept["permissions"], dict):
        warn(f"{shown}: permissions skipped (must be an object)")
        del kept["permissions"]
    if isinstance(kept.get("permissions"), dict):
        kept["permissions"] = dict(kept["permissions"])
        for key in _RULE_LISTS:
            _keep_if(kept, ("permissions", key), lambda v: isinstance(v, list), "a list", shown, warn)
    checks: list[tuple[tuple[str, ...], Callable[[Any], bool], str]] = [
        *((keys, _strings, "a list of strings") for keys in _STRING_LISTS),
        *((keys, lambda v: isinstance(v, str), "a string") for keys in _STRINGS),
        *((keys, lambda v: isinstance(v, dict), "an object") for keys in _OBJECTS),
        *((keys, lambda v: isinstance(v, bool), "true or false") for keys in _BOOLS),
        *((keys, lambda v: isinstance(v, list), "a list") for keys in _LISTS),
    ]
    for keys, good, wanted in checks:
        _keep_if(kept, keys, good, wanted, shown, warn)
    return kept


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _keep_if(
    data: dict[str, Any],
    keys: tuple[str, ...],
    good: Callable[[Any], bool],
    wanted: str,
    shown: str,
    warn: Callable[[str], None],
) -> None:
    parent = data if len(keys) == 1 else data.get(keys[0])
    if isinstance(parent, dict) and keys[-1] in parent and not good(parent[keys[-1]]):
        del parent[keys[-1]]
        warn(f"{shown}: {'.'.join(keys)} skipped (must be {wanted})")


def _git_tracks(root: Path, path: Path) -> bool:
    """Whether git tracks `path` in the repository at `root`, read from its index (no git is
    run: it would read the repository's config before the user trusts it)."""
    repository = find_repository(root)
    return repository is not None and index_tracks(repository, path.relative_to(repository.top).as_posix())
