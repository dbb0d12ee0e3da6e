""" "Always allow" / "Always reject" written back as rules, where Claude Code writes them.

The rule goes into `permissions.allow` (or `deny`) of `.claude/settings.local.json` at the
repository root (the cwd outside a repository), the file's other keys kept as they are, each rule
once, the file replaced whole by a rename (never half-written). A file that is not a JSON object
is never overwritten: the answer then holds for the session only, and the log says why.

Which rules an answer is kept as is the rule engine's (`rules.py:command_rule`: a command's
answer per command of its line, the narrowest rule that covers it); the option's label shows the
rules it saves (`editor/permissions.py`).

The file is the user's, not the project's, so it is kept out of git: its name is added to the
repository's own `.git/info/exclude` (the common dir's, for a worktree). Claude Code adds it to the
user's global excludes file instead; this agent does not change the user's git configuration,
and the repository's exclude file is read by git alone, never committed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio.to_thread
import structlog

from acp_agent.claude_code.settings import json_text
from acp_agent.claude_code.settings.local_owner import LocalOwners
from acp_agent.errors import ToolError
from acp_agent.permissions.rules import LOCAL_SETTINGS, Behavior
from acp_agent.tools.files.gitdir import find_repository
from acp_agent.tools.files.localfs import LocalFileSystem

__all__ = ["EXCLUDE_LINE", "save_rules"]

log = structlog.get_logger(__name__)

EXCLUDE_LINE = "/.claude/settings.local.json"
_ALREADY = {EXCLUDE_LINE, LOCAL_SETTINGS, "**/" + LOCAL_SETTINGS, "settings.local.json"}


async def save_rules(
    root: Path, behavior: Behavior, texts: Sequence[str], owners: LocalOwners | None = None
) -> Path:
    """Add `texts` to `permissions.<behavior>` of the root's local settings file; returns its path.
    `owners` records them as the user's own (`local_owner.py`): the only writes to that file the
    agent takes as the user's hand.

    Raises:
        ToolError: the file could not be read as a JSON object, or not written.
    """
    path = root / LOCAL_SETTINGS
    disk = LocalFileSystem(max_bytes=1 << 20)
    data: dict[str, Any] = {}
    if path.exists() or path.is_symlink():
        try:
            loaded = json_text.loads(await disk.read_text(path))
        except ValueError as exc:
            raise ToolError(f"{LOCAL_SETTINGS} is not valid JSON ({str(exc)[:100]}); left as it is") from exc
        if not isinstance(loaded, dict):
            raise ToolError(f"{LOCAL_SETTINGS} is not a JSON object; left as it is")
        data = loaded
    permissions = data.setdefault("permissions", {})
    rules = permissions.setdefault(behavior, []) if isinstance(permissions, dict) else None
    if not isinstance(rules, list):
        raise ToolError(f"{LOCAL_SETTINGS}: permissions.{behavior} is not a list; left as it is")
    rules.extend(t for t in dict.fromkeys(texts) if t not in rules)
    await disk.write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    if owners is not None:
        await anyio.to_thread.run_sync(owners.add_rules, root, path, behavior, list(texts))
    await _exclude_from_git(root, disk)
    log.info("claude.rule_saved", path=str(path), behavior=behavior, rules=list(texts))
    return path


async def _exclude_from_git(root: Path, disk: LocalFileSystem) -> None:
    """`EXCLUDE_LINE` in the repository's `info/exclude`, once; a failure is only logged."""
    repository = find_repository(root)
    if repository is None:
        return
    exclude = repository.common_dir / "info" / "exclude"
    try:
        text = await disk.read_text(exclude) if exclude.exists() else ""
        if any(line.strip() in _ALREADY for line in text.splitlines()):
            return
        separator = "" if not text or text.endswith("\n") else "\n"
        await disk.write_text(exclude, f"{text}{separator}{EXCLUDE_LINE}\n")
    except (OSError, ToolError) as exc:
        log.warning("claude.exclude_not_written", path=str(exclude), error=str(exc)[:200])
