""" "Always allow" / "Always reject" written back as rules, where Claude Code writes them.

The rule goes into `permissions.allow` (or `deny`) of `.claude/settings.local.json` at the
repository root (the cwd outside a repository), the file's other keys kept as they are, each rule
once, the file replaced whole by a rename (never half-written). A file that is not a JSON object
is never overwritten: the answer then holds for the session only, and the log says why.

A command's answer is kept per command of its line (Claude Code's way), as the narrowest rule
that covers it: its leading words then ` *` (`Bash(pytest *)`), or the exact command wherever a
prefix would let other code run (`RUNS_CODE`: a program whose arguments say what runs, `python
x.py`, `sed`'s `e` command, `awk`'s `system()`, `find -delete`/`-exec`; a wrapper, `timeout 60 x`;
a program named by its path; git with global options, `git -c` runs what a config says, or a git
subcommand that runs code, `RUNS_CODE_IN_GIT`); an answer on a line the strict reader does not
vouch for holds for the session only, since no rule could name it. The option's label shows the
rules it saves (`editor/permissions.py`).

The file is the user's, not the project's, so it is kept out of git: its name is added to the
repository's own `.git/info/exclude` (the common dir's, for a worktree). Claude Code adds it to the
user's global excludes file instead; this agent does not change the user's git configuration,
and the repository's exclude file is read by git alone, never committed.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio.to_thread
import structlog

from acp_agent.errors import ToolError
from acp_agent.session.claude import json_text
from acp_agent.session.claude.local_owner import LocalOwners
from acp_agent.session.claude.rules import Behavior, rule_text
from acp_agent.tools.files.gitdir import find_repository
from acp_agent.tools.files.localfs import LocalFileSystem
from acp_agent.tools.shell.command_patterns import CommandPattern, read_pattern

__all__ = [
    "EXCLUDE_LINE",
    "LOCAL_SETTINGS",
    "RUNS_CODE",
    "RUNS_CODE_IN_GIT",
    "command_rule",
    "names_command",
    "prefix_is_safe",
    "save_rules",
]

log = structlog.get_logger(__name__)

LOCAL_SETTINGS = ".claude/settings.local.json"
EXCLUDE_LINE = "/.claude/settings.local.json"
_ALREADY = {EXCLUDE_LINE, LOCAL_SETTINGS, "**/" + LOCAL_SETTINGS, "settings.local.json"}
RUNS_CODE = frozenset(
    {"bash", "sh", "zsh", "fish", "dash", "ksh", "env", "sudo", "doas", "su", "eval", "exec", "source"}
    | {".", "xargs", "npx", "uvx", "bunx", "pnpx", "python", "python3", "node", "deno", "bun", "ruby"}
    | {"perl", "php", "lua", "pwsh", "powershell", "tclsh", "osascript", "Rscript", "julia", "ssh"}
    | {"docker", "podman", "kubectl", "sed", "gsed", "awk", "gawk", "mawk", "nawk", "find", "rg"}
    | {"tar", "rsync", "zip", "less", "more", "man", "vi", "vim", "nvim", "emacs", "ed", "ex", "gdb"}
    | {"expect", "parallel", "watch", "make", "cmake", "dd", "git-shell", "busybox", "command"}
    | {"timeout", "nice", "nohup", "stdbuf", "time", "builtin", "setsid", "flock", "chroot"}
    | {"strace", "ltrace", "nsenter", "unshare", "systemd-run", "ionice", "taskset", "chrt"}
)
"""Programs whose arguments can make other code run (an expression, a script, a program to
start: `sed 'e …'`, `awk 'BEGIN{system(…)}'`, `find -exec`/`-delete`, `rg --pre`, `tar
--to-command`, `make X=…`): an "always" answer names their exact command, never a prefix."""
RUNS_CODE_IN_GIT = frozenset(
    {"config", "submodule", "bisect", "rebase", "filter-branch", "filter-repo", "difftool"}
    | {"mergetool", "daemon", "send-email", "archive", "web--browse", "instaweb", "p4", "svn", "cvsimport"}
)
"""git subcommands whose arguments can run a program (`git rebase -x`, `git config core.pager`)."""


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


def command_rule(argv: tuple[str, ...], *, prefix: bool) -> str:
    """`Bash(…)` for one command, the narrowest that covers it: its leading words then ` *` (up to
    two words that are no option, path or value), else the exact command (always for a program
    that can run other code, `RUNS_CODE`)."""
    words: list[str] = []
    for word in argv[:2]:
        if word.startswith("-") or any(c in word for c in "/.=:@$") or word[:1].isdigit():
            break
        words.append(word)
    if prefix and words and len(words) < len(argv) and prefix_is_safe(argv):
        return rule_text("Bash", " ".join(words) + " *")
    return rule_text("Bash", shlex.join(argv))


def prefix_is_safe(argv: tuple[str, ...]) -> bool:
    """A prefix rule on this command would let nothing but more of the same program run."""
    program = argv[0]
    if program in RUNS_CODE or "/" in program or program.startswith(("python", "pip")):
        return False
    if program == "git":  # global options (`-c`, `-C`, `--exec-path`) or a subcommand that runs code
        return len(argv) > 1 and not argv[1].startswith("-") and argv[1] not in RUNS_CODE_IN_GIT
    return True


def names_command(text: str, argv: tuple[str, ...]) -> bool:
    """The saved rule reads back as a pattern that matches the command it was made for."""
    read = read_pattern(text[len("Bash(") : -1].replace("\\(", "(").replace("\\)", ")"))
    return isinstance(read, CommandPattern) and read.matches(argv)
