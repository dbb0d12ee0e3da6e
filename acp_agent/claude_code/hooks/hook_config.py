"""The hooks of a session's settings files, read as Claude Code reads them.

`hooks` in each settings file maps an event to matcher groups, `{"matcher": …, "hooks": [handler,
…]}`; the files add up (never replace each other), and a handler written the same way in several
files runs once (the highest file's). A project file's hooks (or a local file git tracks) wait for
the folder's trust, as everything a repository widens does (`trust.py`); `disableAllHooks: true`
turns them all off, but the managed policy's (unless the policy's own says so), and under the
policy's `allowManagedHooksOnly` only its hooks run.


A matcher is `*`, empty or absent (everything), a name or a `|`/`,` list of names (exact), or else a
regular expression, unanchored as JavaScript's are: compiled with the `regex` package within the
bounds of a search pattern (`tools/search/regex_bounds.py`) and matched with a timeout, so a
catastrophic matcher never holds the agent. `if` is one permission rule (`rules.py`), read by the
rule grammar and asked of the rule engine on the tool events; a handler with `if` on any other
event never runs.

Only `command` handlers run; `http`, `prompt`, `agent` and `mcp_tool` ones, events this agent does
not fire, and anything malformed are skipped, each with a warning (the log, `/status`, `/hooks`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from acp_agent.claude_code.settings.hook_events import EVENTS, NO_MATCHER, TOOL_EVENTS
from acp_agent.claude_code.settings.settings_files import SettingsFile
from acp_agent.claude_code.setup.setup import ClaudeSetup
from acp_agent.errors import ToolError
from acp_agent.permissions.rules import Rule, RuleOrigin, read_rule
from acp_agent.tools.sandbox.named import command_words
from acp_agent.tools.search.regex_bounds import check_pattern, regex_module

__all__ = [
    "DEFAULT_TIMEOUT",
    "EVENTS",
    "TOOL_EVENTS",
    "HookHandler",
    "HookSet",
    "Matcher",
    "read_hooks",
]

log = structlog.get_logger(__name__)

DEFAULT_TIMEOUT = 600.0
PROMPT_TIMEOUT = 30.0
"""UserPromptSubmit's default: the user waits for it."""
MAX_TIMEOUT = 3600.0
MATCH_SECONDS = 0.05
"""CPU time one matcher may take on one name (a tool name is short: microseconds)."""
_NAMES = re.compile(r"[A-Za-z0-9_\- ,|]*")
_INTERPRETER = re.compile(r"(?:python|bash|sh|zsh|node|ruby|perl|bun|deno|uv)[0-9.]*\Z")


@dataclass(frozen=True, slots=True)
class Matcher:
    """What a group's `matcher` selects: everything, exact names, or an unanchored expression."""

    text: str
    names: frozenset[str] | None = None
    expression: Any = None
    """A compiled `regex` pattern (None with `names` None: everything)."""

    @classmethod
    def read(cls, text: str) -> Matcher:
        """Raises ToolError for an expression past the bounds or that does not compile."""
        if text in ("", "*"):
            return cls(text)
        if _NAMES.fullmatch(text):
            return cls(text, frozenset(n.strip() for n in re.split(r"[|,]", text) if n.strip()))
        try:
            check_pattern(text)
        except ToolError as exc:
            raise ToolError("a regular expression past the bounds of a search pattern") from exc
        regex = regex_module.now()
        try:
            return cls(text, expression=regex.compile(text))
        except (regex.error, ValueError, OverflowError) as exc:
            raise ToolError(f"not a regular expression ({exc})") from exc

    def matches(self, value: str | None) -> bool:
        if self.names is None and self.expression is None:
            return True
        if value is None:
            return False
        if self.names is not None:
            return value in self.names
        try:
            return self.expression.search(value, timeout=MATCH_SECONDS) is not None
        except TimeoutError:
            log.warning("hooks.matcher_timeout", matcher=self.text[:120], value=value[:80])
            return False


@dataclass(frozen=True, slots=True)
class HookHandler:
    """One command handler of one event, from one settings file."""

    event: str
    matcher: Matcher
    command: str
    args: tuple[str, ...] | None
    """Exec form (no shell) when given."""
    timeout: float
    source: SettingsFile
    if_rule: Rule | None = None
    status_message: str = ""

    @property
    def key(self) -> tuple[Any, ...]:
        """What makes two handlers the same one (it runs once)."""
        return (self.event, self.matcher.text, self.command, self.args, self.if_rule and self.if_rule.text)

    @property
    def name(self) -> str:
        """A short name for titles: the program's file name (`guard.sh`), or the script an
        interpreter runs (`python3 guard.py`)."""
        words = [Path(w).name or w for w in command_words(self.command[:4096])[:2]] or ["hook"]
        if len(words) == 2 and _INTERPRETER.match(words[0]) and not words[1].startswith("-"):
            return words[1]
        return words[0]


@dataclass(frozen=True, slots=True)
class HookSet:
    """The session's hooks: those in force, those waiting for trust, and what was skipped."""

    handlers: tuple[HookHandler, ...] = ()
    waiting: tuple[HookHandler, ...] = ()
    warnings: tuple[str, ...] = ()
    disabled: str | None = None
    """The file whose `disableAllHooks: true` turned them off."""

    def of(self, event: str) -> list[HookHandler]:
        return [h for h in self.handlers if h.event == event]

    def describe(self, trust_state: str) -> str:
        """`/hooks`: each hook with its event, matcher, command, file and state."""
        lines = ["Hooks (event, matcher, command, file):"]
        if self.disabled is not None:
            lines.append(f"All hooks are off: disableAllHooks in {self.disabled}.")
        shown = [(h, "in force") for h in self.handlers] + [(h, trust_state) for h in self.waiting]
        if not shown:
            lines.append("  none")
        for handler, state in shown:
            matcher = handler.matcher.text or "*"
            condition = f" if {handler.if_rule.text}" if handler.if_rule is not None else ""
            command = (
                handler.command if handler.args is None else json.dumps([handler.command, *handler.args])
            )
            lines.append(
                f"  - {handler.event} [{matcher}]{condition}: {command[:200]}  "
                f"({handler.source.shown}, {handler.source.scope}; {state})"
            )
        if self.warnings:
            lines.append("Skipped or kept with a warning:")
            lines += [f"  - {w}" for w in self.warnings]
        return "\n".join(lines)


def read_hooks(setup: ClaudeSetup, home: Path | None = None) -> HookSet:
    """The hooks of `setup`'s files (highest first), each identical handler once.

    The managed policy's hooks hold against the other files: a `disableAllHooks: true` of theirs
    turns off their own hooks only (the policy's turns off every one), and under the policy's
    `allowManagedHooksOnly` only its hooks are read at all."""
    warnings: list[str] = []
    managed_only = setup.locked("allowManagedHooksOnly")
    off_by_policy = next(
        (f for f in setup.files if f.scope == "managed" and f.get("disableAllHooks") is True), None
    )
    disabled = next(  # a project's would turn off the user's: it waits for trust
        (
            (v, f)
            for f in setup.files
            if f.scope != "managed" and (v := f.get("disableAllHooks")) is not None and setup.in_force(f)
        ),
        None,
    )
    if disabled is not None and not isinstance(disabled[0], bool):
        warnings.append(f"{disabled[1].shown}: disableAllHooks skipped (must be true or false)")
        disabled = None
    in_force: dict[tuple[Any, ...], HookHandler] = {}
    waiting: dict[tuple[Any, ...], HookHandler] = {}
    for file in setup.files:
        hooks = file.get("hooks")
        if not isinstance(hooks, dict):
            continue
        if file.scope != "managed" and (managed_only or (disabled is not None and disabled[0])):
            if managed_only:
                warnings.append(f"{file.shown}: hooks not run (allowManagedHooksOnly in the managed policy)")
            continue

        into = in_force if setup.in_force(file) else waiting
        for handler in _handlers(file, hooks, setup, home, warnings.append):
            if handler.key not in in_force and handler.key not in waiting:
                into[handler.key] = handler
    if disabled is not None and disabled[0] and off_by_policy is None and in_force:
        warnings.append(f"{disabled[1].shown}: disableAllHooks turns off every hook but the managed policy's")
    for warning in warnings:
        log.warning("hooks.config_warning", warning=warning)
    if off_by_policy is not None:
        return HookSet((), (), tuple(warnings), off_by_policy.shown)
    if disabled is not None and disabled[0] and not in_force and not waiting:
        return HookSet((), (), tuple(warnings), disabled[1].shown)
    return HookSet(tuple(in_force.values()), tuple(waiting.values()), tuple(warnings))


def _handlers(
    file: SettingsFile, hooks: dict[str, Any], setup: ClaudeSetup, home: Path | None, warn: Any
) -> list[HookHandler]:
    found: list[HookHandler] = []
    where = file.shown
    for event, groups in hooks.items():
        if event not in EVENTS:
            warn(f"{where}: hooks.{str(event)[:40]} skipped (an event this agent does not fire)")
            continue
        if not isinstance(groups, list):
            warn(f"{where}: hooks.{event} skipped (must be a list of matcher groups)")
            continue
        for number, group in enumerate(groups):
            at = f"{where}: hooks.{event}[{number}]"
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                warn(f"{at} skipped (must be an object with a list of hooks)")
                continue
            text = group.get("matcher", "")
            if not isinstance(text, str):
                warn(f"{at} skipped (its matcher must be a string)")
                continue
            try:
                matcher = Matcher.read("" if event in NO_MATCHER else text)
            except ToolError as exc:
                warn(f"{at} skipped (matcher {text[:60]!r}: {exc})")
                continue
            for index, raw in enumerate(group["hooks"]):
                handler = _handler(event, matcher, raw, file, setup, home, f"{at}.hooks[{index}]", warn)
                if handler is not None:
                    found.append(handler)
    return found


def _handler(
    event: str,
    matcher: Matcher,
    raw: Any,
    file: SettingsFile,
    setup: ClaudeSetup,
    home: Path | None,
    at: str,
    warn: Any,
) -> HookHandler | None:
    if not isinstance(raw, dict):
        warn(f"{at} skipped (must be an object)")
        return None
    kind = raw.get("type", "command")
    if kind != "command":
        warn(f"{at} skipped (a {str(kind)[:20]!r} hook: this agent runs only command hooks)")
        return None
    command, args = raw.get("command"), raw.get("args")
    if not isinstance(command, str) or not command.strip():
        warn(f"{at} skipped (no command)")
        return None
    if args is not None and not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        warn(f"{at} skipped (args must be a list of strings)")
        return None
    default = PROMPT_TIMEOUT if event == "UserPromptSubmit" else DEFAULT_TIMEOUT
    timeout = raw.get("timeout", default)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= MAX_TIMEOUT:
        warn(f"{at}: {_timeout_changed(timeout, default)}")
        timeout = default
    if_rule = None
    if "if" in raw:
        condition = raw["if"]
        if event not in TOOL_EVENTS:
            warn(f"{at} never runs (`if` applies only to PreToolUse and PostToolUse)")
            return None
        origin = RuleOrigin(file.shown, file.anchor, file.project)
        if_rule, why = read_rule(condition, "ask", origin, cwd=setup.cwd, home=home)
        if if_rule is None:
            warn(f"{at} skipped (its `if` {why})")
            return None
    message = raw.get("statusMessage")
    return HookHandler(
        event,
        matcher,
        command,
        None if args is None else tuple(args),
        float(timeout),
        file,
        if_rule,
        message if isinstance(message, str) else "",
    )


def _timeout_changed(timeout: Any, default: float) -> str:
    """The warning for a `timeout` that is not seconds up to `MAX_TIMEOUT`, saying what the hook
    gets instead. A value past the bound that would be seconds in milliseconds (5000) is named as
    such, but not read as milliseconds: Claude Code reads seconds, and a shorter limit
    than the one written could stop a slow guard, which then blocks nothing."""
    given = f"timeout {json.dumps(timeout)[:20]}"
    gets = f"this hook gets {default:g} s (the default)"
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > MAX_TIMEOUT:
        if timeout / 1000 <= MAX_TIMEOUT:
            return (
                f"{given} looks like milliseconds: hook timeouts are in seconds (as in Claude Code), "
                f"at most {MAX_TIMEOUT:g}; {gets}; write {timeout / 1000:g} for {timeout / 1000:g} s"
            )
        return f"{given} is more than {MAX_TIMEOUT:g} s (hook timeouts are in seconds); {gets}"
    return f"{given} is not a number of seconds above 0; {gets}"
