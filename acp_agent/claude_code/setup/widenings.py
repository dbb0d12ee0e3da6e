"""What a project's settings file would widen, item by item, as the trust question lists it.

Each item is shown whole (a hook's command, an env value: nothing is cut; the question folds long
lines, `trust_question.py`), and remembered by what would run: a hook's or a server's entry as
written, and the content of the files its command line names inside the project (`named_files`:
a changed script asks again, as a changed line does). Which keys widen is `settings_keys.py`'s.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from acp_agent.claude_code.settings.hook_events import EVENTS, TOOL_EVENTS
from acp_agent.claude_code.settings.project_env import never_from_project
from acp_agent.claude_code.settings.settings_files import SettingsFile
from acp_agent.claude_code.setup.trust import Widening
from acp_agent.permissions.rules import Rule

__all__ = ["WIDENING_MODES", "claude_place", "file_widenings", "mode_of", "named_files", "shown"]

WIDENING_MODES = frozenset({"acceptEdits", "bypassPermissions"})
"""Modes that ask less than `default`: a project's `defaultMode` of one waits for trust."""
PERMISSION_MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
MODE_ALIASES = {"manual": "default"}
MAX_WORDS = 64
"""Words of one command line looked at for the files it names."""
MAX_HASHED = 8 << 20
"""A named file larger than this is remembered by its size and change time instead (hashing runs
at session/new: a few ms for a script, bounded for a bundle)."""
_PROJECT_DIR = re.compile(r"\$\{CLAUDE_PROJECT_DIR\}|\$CLAUDE_PROJECT_DIR\b")
_BLANKS = re.compile(r"[ \t]{16,}")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def mode_of(value: Any) -> str | None:
    """A `defaultMode` as this agent names modes (None: not one)."""
    mode = MODE_ALIASES.get(value, value) if isinstance(value, str) else None
    return mode if mode in PERMISSION_MODES else None


def shown(text: str) -> str:
    """`text` as the question shows it, nothing left out: control characters (a carriage return
    or a bidi mark that would hide what follows) written as escapes, and a long run of blanks
    (padding that pushes a `| sh` out of sight) as its length."""
    text = _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)
    return _BLANKS.sub(lambda m: f"⟨{len(m.group(0))} blanks⟩", text)


def file_widenings(file: SettingsFile, rules: Iterable[Rule], cwd: Path, root: Path) -> Iterator[Widening]:
    """What `file` (a project's) would let run once trusted, one item per thing enabled, each tied
    to `file` (`Widening.file`: the file is read only once all of its items are allowed)."""
    for item in _file_items(file, rules, cwd, root):
        yield replace(item, file=file.path)


def _file_items(file: SettingsFile, rules: Iterable[Rule], cwd: Path, root: Path) -> Iterator[Widening]:
    where = file.shown
    for rule in rules:
        if rule.behavior == "allow" and rule.origin.file == file.path and rule.origin.project:
            yield Widening("allow rule", where, rule.text)
    mode = mode_of(file.get("permissions", "defaultMode"))
    if mode in WIDENING_MODES:
        yield Widening("defaultMode", where, str(mode))
    for directory in file.get("permissions", "additionalDirectories") or ():
        yield Widening("additional directory", where, shown(directory))
    env = file.get("env")
    for name, value in (env or {}).items():
        if isinstance(value, str) and not never_from_project(name):
            yield Widening("env", where, shown(f"{name}={value}"), f"{name}={value}")
    hooks = file.get("hooks")
    if isinstance(hooks, dict):
        yield from _hooks(where, hooks, cwd, root)
    if file.get("disableAllHooks") is True:
        yield Widening("disableAllHooks", where, "turns off every hook, your own included")
    if file.get("enableAllProjectMcpServers") is True:
        yield Widening("MCP servers", where, "every server of .mcp.json")
    for name in file.get("enabledMcpjsonServers") or ():
        yield Widening("MCP server", where, shown(name))
    for entry in file.get("allowedMcpServers") or ():
        yield Widening("MCP allowlist entry", where, shown(json.dumps(entry, ensure_ascii=False)))


def _hooks(where: str, hooks: dict[str, Any], cwd: Path, root: Path) -> Iterator[Widening]:
    """One item per command handler this agent would run (`hook_config.py` reads them the same way)."""
    for event, groups in hooks.items():
        if event not in EVENTS or not isinstance(groups, list):
            continue
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                for handler in group["hooks"]:
                    item = _hook(where, event, group.get("matcher", ""), handler, cwd, root)
                    if item is not None:
                        yield item


def _hook(where: str, event: str, matcher: Any, handler: Any, cwd: Path, root: Path) -> Widening | None:
    if not isinstance(handler, dict) or handler.get("type", "command") != "command":
        return None  # only command hooks run here
    command, args = handler.get("command"), handler.get("args")
    if not isinstance(command, str) or not command.strip() or ("if" in handler and event not in TOOL_EVENTS):
        return None  # it never runs
    words = [command, *(str(a) for a in args)] if isinstance(args, list) else None
    line = shlex.join(words) if words is not None else command
    head = event + (f" [{matcher}]" if isinstance(matcher, str) and matcher else "")
    condition = f" if {handler['if']}" if isinstance(handler.get("if"), str) else ""
    raw = {"event": event, "matcher": matcher, "handler": handler}
    entry = json.dumps(raw, sort_keys=True, ensure_ascii=False)
    files = named_files(words if words is not None else _words(command), cwd, root)
    return Widening("hook", where, shown(f"{head}{condition}: {line}"), "\n".join([entry, *files]))


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:  # unbalanced quotes: the shell would refuse it; still look at its words
        return command.split()


def named_files(words: Sequence[str], cwd: Path, root: Path) -> list[str]:
    """The files inside the project (`root`) that a command line's `words` name, each as one line
    "<path as named> <where it leads> <sha256 of its content>": what a hook or server would run
    or read, remembered by content (a script changed after trust asks again). A word is a path
    from `cwd` (where hooks and servers run), `$CLAUDE_PROJECT_DIR` expanded, or the value of an
    `--option=path`."""
    found: dict[str, str] = {}
    for word in words[:MAX_WORDS]:
        for part in dict.fromkeys((word, word.partition("=")[2])):
            text = _PROJECT_DIR.sub(str(root), part)
            if not text or text.startswith("-") or "\0" in text:
                continue
            path = Path(os.path.normpath(cwd / text))
            if path.is_relative_to(root) and str(path) not in found and (line := _content_line(path)):
                found[str(path)] = f"{path.relative_to(root).as_posix()} {line}"
    return list(found.values())


def _content_line(path: Path) -> str | None:
    """Where `path` leads and a digest of its content; None when it is no regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):  # a folder, a FIFO, a device: nothing to remember
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as f:
        target = os.path.realpath(path)
        if info.st_size > MAX_HASHED:
            return f"{target} size={info.st_size} mtime={info.st_mtime_ns}"
        digest = hashlib.sha256()
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return f"{target} sha256={digest.hexdigest()}"


def claude_place(cwd: Path, root: Path) -> str:
    """Where the project's `.claude` folders resolve: a link swapped in for one asks again."""
    places = dict.fromkeys((cwd / ".claude", root / ".claude"))
    return " ".join(f"{p}->{os.path.realpath(p)}" for p in places if os.path.lexists(p))
