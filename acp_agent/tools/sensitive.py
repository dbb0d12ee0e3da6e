"""Paths whose contents make tools run code: an edit there is as strong as a command.

`core.fsmonitor` in `.git/config` runs at the user's next `git status`; a hook runs at the next
commit; `.envrc` runs when direnv enters the directory; an editor's task or settings file runs
when the editor opens the folder. So a write to one of them is asked for in every mode but
bypassPermissions, whatever acceptEdits or an "always allow" answer says (issue 19).
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from acp_agent.errors import ToolError
from acp_agent.tools.paths import Roots, display_path, resolve_inside

__all__ = ["SENSITIVE_DIRS", "SENSITIVE_FILES", "sensitive_reason"]

SENSITIVE_DIRS = {
    ".git": "git runs what its config and hooks name",
    ".husky": "git hooks run from here",
    ".devcontainer": "a dev container runs the commands it names",
    ".idea": "JetBrains IDEs run the run configurations kept here",
}
"""Any file below a directory of this name (at any depth: a submodule has its own `.git`)."""

SENSITIVE_FILES = {
    ".envrc": "direnv runs it when the shell enters the directory",
    ".pre-commit-config.yaml": "pre-commit runs the hooks it names at each commit",
    ".vscode/tasks.json": "VS Code runs its tasks (some on folder open)",
    ".vscode/settings.json": "VS Code settings can name programs to run",
    ".vscode/launch.json": "VS Code runs its launch configurations",
    ".zed/tasks.json": "Zed runs its tasks",
    ".zed/settings.json": "Zed settings can name programs to run",
}
"""A file of this name (or these last components) anywhere in the tree."""


def _reason(relative: str) -> str | None:
    parts = [p.casefold() for p in PurePosixPath(relative).parts]  # case-insensitive disks too
    for part in parts[:-1]:
        if part in SENSITIVE_DIRS:
            return SENSITIVE_DIRS[part]
    if parts and parts[-1] in SENSITIVE_DIRS:  # the directory itself (write_file ".git" fails)
        return SENSITIVE_DIRS[parts[-1]]
    tail = "/".join(parts[-2:])
    return SENSITIVE_FILES.get(tail) or SENSITIVE_FILES.get(parts[-1] if parts else "")


def sensitive_reason(roots: Roots, path: str) -> str | None:
    """Why writing `path` can make code run, or None; checks the path as written and where it
    resolves (a symlink into `.git/` counts)."""
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
    shown = display_path(roots, Path(resolved))
    return _reason(shown) if shown != "." else None
