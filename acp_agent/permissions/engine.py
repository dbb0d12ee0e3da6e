"""The one place that decides "may this run?": every tool call of a session, of its subagents, of a
command's turn and of a phase, the phased strategy's plan → act switch, the files a `/rewind`
restores, a command file's `@file` reads (read_file calls of its turn) and an embedder's turn, each
put to it through the gate (`gate.py`), which an asker only serves.

`RuleEngine.decide` weighs the settings' rules (`setup.py`), the "always" answers of the session,
a command's `allowed-tools` grant, the mode and the sensitive-path guard, in this order (Claude
Code's); the first step that speaks decides:

1. **deny rules** (and "always reject" answers), in every mode, bypassPermissions included: refused
   with "denied by <file>: <rule>", never asked; then a **PreToolUse hook's deny** (or its exit 2):
   refused with the hook's reason;
2. **the tool's confinement**: a file tool's path outside the session's roots, in the agent's own
   hidden paths, or denied by a `Read(…)` rule where it leads: refused with the tool's own words,
   never asked (the tool would refuse it anyway);
3. **plan mode** refuses any call that changes something, and so does a read-only phase (the
   phased strategy's plan); a **subagent** may change something only in acceptEdits and
   bypassPermissions;
4. **ask rules**, then a **PreToolUse hook's ask**, then a command line a **deny or ask rule may
   match** (part of it cannot be named: `eval "$x"`, `$cmd`, `curl … | sh`; or a word the rule
   hangs on is an expansion: `rm -rf $dir` under `Bash(rm -rf /)`): asked, in every mode,
   bypassPermissions included;
5. **sensitive paths** (an edit of a file that makes tools run code, `tools/files/sensitive.py`):
   asked in every mode but bypassPermissions, whatever an allow rule or an answer says; an edit of
   a file that decides what the agent itself may run (its settings, hooks, `.mcp.json`, a memory
   file's imports: "governance") is asked in bypassPermissions too;
6. **bypassPermissions** allows;
7. **a PreToolUse hook's allow, allow rules, "always allow" answers, the command's grant** allow
   (a command line only when every command of it is allowed, by one or another);
8. **the mode**: acceptEdits allows edits (inside the roots: step 2 refused the rest);
9. otherwise a call that changes nothing (a read, the plan, a subagent, a skill) is allowed, and
   any other is asked.

In dontAsk mode every "asked" above is refused instead. Why this order: what the user forbade
(1) and what the agent never touches (2) hold whatever else is said; the mode's refusal (3) comes
before any question, so plan mode never asks; a question the user asked for (4) or a guarded file
(5) is not skipped by an allow rule, a remembered answer or a grant (7), which only spare the
questions the mode would ask (8, 9). Rules from every file are pooled (a user's deny beats a
project's allow), and a project's allow rules count only once the folder is trusted.

Not put to it, by design: the verify strategy's check (`turn/strategies/verify.py`: the user's
own configured command, as a hook is), and what the session reads as configuration rather than
for the model's asking: the memory files and their imports, the path-scoped instructions, skill
and command files (each read under the agent's hidden paths, the `Read(…)` deny rules and the
project's trust; a skill's body reaches the model through the `skill` tool's call, decided here).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import structlog

from acp_agent.errors import PathOutsideCwd, ToolError
from acp_agent.model.server_tools import WebTools
from acp_agent.permissions.path_denials import REJECTED_ALWAYS, SESSION, ReadDenials, deny_message
from acp_agent.permissions.path_rules import escaped_path
from acp_agent.permissions.question import PermissionQuestion
from acp_agent.permissions.rules import (
    LOCAL_SETTINGS,
    Behavior,
    Rule,
    RuleOrigin,
    command_rule,
    names_command,
    read_rule,
    rule_text,
)
from acp_agent.permissions.tool_names import RULE_FAMILY, WITH_COMMANDS
from acp_agent.permissions.web_rules import ruled_web
from acp_agent.tools.hidden import NOTHING_HIDDEN, HiddenPaths
from acp_agent.tools.paths import resolve_inside
from acp_agent.tools.shell.command_analysis import analyse
from acp_agent.tools.shell.command_patterns import MAYBE, YES, CommandPattern, covers, covers_command

__all__ = [
    "CHANGES",
    "PLAN_REFUSED",
    "SUBAGENT_MODES",
    "Grants",
    "NoRules",
    "RuleEngine",
    "RuleSource",
    "Verdict",
]

log = structlog.get_logger(__name__)

CHANGES = frozenset({"edit", "execute", "sensitive", "governance", "switch_mode"})
"""The permissions of a call that changes something (every other one only looks, or is `none`)."""
SUBAGENT_MODES = frozenset({"acceptEdits", "bypassPermissions"})
"""The modes in which a subagent (with `--subagent-tools all`) may change something."""
PLAN_REFUSED = (
    "Refused: the session is in plan mode (read-only). Describe the change instead; "
    "the user can switch modes to let you make it."
)
SUBAGENT_REFUSED = (
    "Refused: a subagent may edit files or run commands only in the acceptEdits or "
    "bypassPermissions mode. Report what should change instead."
)
DONT_ASK = (
    "Refused: the session is in dontAsk mode, where what the rules and the mode do not allow is "
    "refused instead of asked ({why})."
)


class Grants(Protocol):
    """A command's `allowed-tools` (`commands/allowed_tools.py:ToolGrants`), as the engine reads it."""

    @property
    def commands(self) -> tuple[CommandPattern, ...]: ...

    def covers(self, tool_name: str, raw_input: dict[str, Any]) -> bool: ...


class RuleSource(Protocol):
    """Where a session's settings rules come from (`setup.py:ClaudeSetup`): the rules in force
    now, a key that changes when they do (the project's trust answered), and where an "always"
    answer is written back (the local settings file). The engine reads nothing else of a setup."""

    @property
    def cwd(self) -> Path:
        """The session's cwd: what a kept answer's rule is read against."""
        ...

    def rules_in_force(self) -> Iterable[Rule]: ...

    def rules_key(self) -> Hashable: ...

    @property
    def only_policy_rules(self) -> bool:
        """The managed policy's `allowManagedPermissionRulesOnly`: its rules are the only ones, so
        no "always" answer is offered or kept and a command's grants allow nothing unasked."""
        ...

    async def keep_rules(self, behavior: Behavior, texts: Sequence[str]) -> Path:
        """Write `texts` as `behavior` rules where Claude Code keeps answers; returns the file.

        Raises:
            ToolError: the file could not be read or written.
        """
        ...


@dataclass(frozen=True, slots=True)
class NoRules:
    """A `RuleSource` with no settings (an embedder's turn, a test): nothing is kept on disk."""

    cwd: Path

    def rules_in_force(self) -> Iterable[Rule]:
        return ()

    def rules_key(self) -> Hashable:
        return None

    @property
    def only_policy_rules(self) -> bool:
        return False

    async def keep_rules(self, behavior: Behavior, texts: Sequence[str]) -> Path:
        raise ToolError("no settings file to keep rules in")


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the engine decided: allow, deny (with what the model is told), or ask the user.

    `step` names the step that decided (the log, and `asked_by_rule`: an ask rule's question
    offers no lasting "allow", which the rule would outrank anyway)."""

    action: Literal["allow", "deny", "ask"]
    message: str = ""
    step: str = ""
    rule: Rule | None = None

    @property
    def asked_by_rule(self) -> bool:
        return self.action == "ask" and self.step in ("ask rule", "a rule may match")


@dataclass(frozen=True, slots=True)
class _Call:
    """What rules read of one call."""

    tool: str
    family: str | None
    path: str | None = None
    paths: tuple[str, ...] = ()
    """The file's path as written (made absolute) and where it leads."""
    line: str | None = None
    name: str | None = None
    """A subagent's type or a skill's name."""
    reached: dict[int, int] = field(default_factory=dict, compare=False)
    """How far each command rule (by id, alive while the call is decided) reaches the line."""


@dataclass(slots=True)
class RuleEngine:
    """One session's rules (its settings and its "always" answers) and the order they are weighed in.

    `roots()` are the session's roots now (the cwd first); `hidden` the agent's own paths."""

    setup: RuleSource
    """The settings' rules (`setup.py:ClaudeSetup`), read through `RuleSource` only."""
    roots: Callable[[], Sequence[Path]]
    hidden: HiddenPaths = NOTHING_HIDDEN
    home: Path | None = None
    session_rules: list[Rule] = field(default_factory=list)
    """"Always" answers kept for this session only (and those a file could not take)."""
    saved_rules: list[Rule] = field(default_factory=list)
    """"Always" answers written to the local settings file during this session."""
    lines: dict[str, bool] = field(default_factory=dict)
    """"Always" answers on a command line no rule can name (the parser is unsure of it)."""
    save: bool = True
    """Whether "always" answers may be written to the local settings file (else: this session)."""

    @classmethod
    def without_rules(
        cls, roots: Callable[[], Sequence[Path]], hidden: HiddenPaths = NOTHING_HIDDEN
    ) -> RuleEngine:
        """The engine of a turn with no settings (an embedder's, `turn/inprocess.py`): the same
        order, with no rule to weigh and no answer kept on disk."""
        return cls(NoRules(Path(roots()[0])), roots, hidden, save=False)

    def rules(self) -> list[Rule]:
        """Every rule in force: the settings' (a project's allow rules once trusted), then the
        answers of this session."""
        return [*self.setup.rules_in_force(), *self.saved_rules, *self.session_rules]

    def decide(
        self, q: PermissionQuestion, mode: str, granted: Grants | None = None, *, read_only: str | None = None
    ) -> Verdict:
        """The verdict on `q` in `mode` (see the module's docstring for the order); `read_only`:
        the turn is in a read-only phase (the phased strategy's plan), and this is what a call that
        changes something is told, at the plan mode's step."""
        if self.setup.only_policy_rules:
            granted = None  # a command file is not the policy's: its allowed-tools allow nothing
        call = self._call(q)
        rules = self.rules()
        if (rule := self._match(rules, "deny", call)) is not None:
            return Verdict("deny", deny_message(rule), "deny rule", rule)
        if call.line is not None and self.lines.get(call.line) is False:
            return Verdict("deny", REJECTED_ALWAYS, "deny rule")
        hook = q.hook.decision if q.hook is not None else None
        if hook == "deny":
            return Verdict("deny", q.hook.reason if q.hook is not None else "", "hook deny")
        if (refusal := self._confined(call)) is not None:
            return Verdict("deny", refusal, "confinement")
        if mode == "plan" and q.permission in CHANGES:
            return Verdict("deny", PLAN_REFUSED, "plan mode")
        if read_only is not None and q.permission in CHANGES:
            return Verdict("deny", read_only, "plan phase")
        if q.subagent and q.permission in CHANGES and mode not in SUBAGENT_MODES:
            return Verdict("deny", SUBAGENT_REFUSED, "subagent")
        if (rule := self._match(rules, "ask", call)) is not None:
            return _ask(mode, "ask rule", f"ask rule {rule.text} in {rule.origin.shown}", rule)
        if hook == "ask":
            return _ask(mode, "hook ask", "a PreToolUse hook asks before this")
        if (
            rule := self._match(rules, "deny", call, MAYBE) or self._match(rules, "ask", call, MAYBE)
        ) is not None:
            unsure = (
                f"{rule.behavior} rule {rule.text} in {rule.origin.shown} may match a command of this line"
            )
            return _ask(mode, "a rule may match", unsure, rule)
        if q.permission == "governance":  # what decides the agent's own rules: asked, bypass too
            return _ask(mode, "governance", "a write to a file that decides what the agent may run")
        if q.permission == "sensitive" and mode != "bypassPermissions":
            return _ask(mode, "sensitive", "an edit of a file that makes tools run code")
        if mode == "bypassPermissions":
            return Verdict("allow", step="bypass")
        if hook == "allow":
            return Verdict("allow", step="hook allow")
        if (why := self._allowed(rules, call, q, granted)) is not None:
            return Verdict("allow", step=why)
        if mode == "acceptEdits" and q.permission == "edit":
            return Verdict("allow", step="acceptEdits")
        if q.permission not in CHANGES:
            return Verdict("allow", step="looks only")
        return _ask(mode, "default", "the mode asks before this")

    def applies(self, rule: Rule, q: PermissionQuestion) -> bool:
        """Whether `rule` names the call `q` (a hook's `if` filter): a command line when any of its
        commands matches or may match, a path when it or where it leads does (read it as an ask rule)."""
        return self._match([rule], rule.behavior, self._call(q), MAYBE) is not None

    def removed(self, names: Iterable[str]) -> frozenset[str]:
        """The tools of `names` a deny rule names whole (`WebSearch`, `Bash`, `mcp__x`): off the
        model's list, decided once per session (the list is a cached prefix); the background commands'
        tools go with run_command."""
        denies = [r for r in self.setup.rules_in_force() if r.behavior == "deny" and r.bare]
        gone = {name for name in names if any(r.names(name) for r in denies)}
        if any(r.names("run_command") for r in denies):  # nothing to read or stop without it
            gone.update(WITH_COMMANDS.intersection(names))
        return frozenset(gone)

    def web(self, web: WebTools) -> WebTools:
        """The web tools as the deny and ask rules leave them (`web_rules.py`)."""
        return ruled_web(web, self.setup.rules_in_force(), self.removed(web.names))

    def lasting(
        self, q: PermissionQuestion, verdict: Verdict, allow: bool
    ) -> tuple[str, tuple[str, ...]] | None:
        """Where an "always" answer to `q` would be kept (the local settings file or "this
        session") and the rules it would keep (none: this exact command line, which no rule can
        name), or None when none can be (an "always allow" on a question an ask rule forced, or
        any under a policy whose rules are the only ones)."""
        if self.setup.only_policy_rules or (allow and verdict.asked_by_rule):
            return None
        texts, persist = self._lasting_rules(q, allow)
        where = LOCAL_SETTINGS if persist and texts and self.save else SESSION
        return where, tuple(texts) if q.raw_input.get("command") is not None or persist else ()

    async def remember(self, q: PermissionQuestion, allow: bool) -> str:
        """Keep an "always" answer: as rules in the local settings file where Claude Code keeps
        them (a command's, an MCP tool's, a refused read's), else for this session; returns where."""
        behavior: Behavior = "allow" if allow else "deny"
        texts, persist = self._lasting_rules(q, allow)
        if not texts:
            if q.raw_input.get("command") is not None:
                self.lines[str(q.raw_input["command"])] = allow
            return SESSION
        if persist and self.save:
            try:
                path = await self.setup.keep_rules(behavior, texts)
            except ToolError as exc:
                log.warning("claude.rule_not_saved", rules=texts, error=str(exc)[:300])
            else:
                self._add(self.saved_rules, texts, behavior, RuleOrigin(LOCAL_SETTINGS, self.setup.cwd))
                log.info("claude.answer_saved", path=str(path))
                return LOCAL_SETTINGS
        self._add(self.session_rules, texts, behavior, RuleOrigin(SESSION, self.setup.cwd))
        return SESSION

    def describe(self, mode: str) -> str:
        """`/permissions`: the mode and the rules in force with their files (what waits for the
        project's trust is the setup's to say, `setup.py:ClaudeSetup.permission_notes`)."""
        rules = self.rules()
        lines = [
            f"Mode: {mode}",
            "Rules in force (deny, then ask, then allow; the first that matches decides):",
        ]
        for behavior in ("deny", "ask", "allow"):
            found = [r for r in rules if r.behavior == behavior]
            lines.append(f"{behavior}:" + ("" if found else " none"))
            lines += [f"  - {r.text}  ({r.origin.shown})" for r in found]
        if self.lines:
            lines.append("Command lines answered always this session:")
            lines += [f"  - {'allow' if a else 'deny'}: {line[:120]}" for line, a in self.lines.items()]
        return "\n".join(lines)

    def path_denials(self) -> ReadDenials:
        """The `Read(…)` deny rules as the file tools apply them (`path_denials.py`)."""
        return ReadDenials(self)

    def rules_key(self) -> Hashable:
        """Changes when the rules in force do: an answer kept, the project's trust decided."""
        return len(self.saved_rules), len(self.session_rules), self.setup.rules_key()

    # -- the steps -------------------------------------------------------------------------------

    def _call(self, q: PermissionQuestion) -> _Call:
        tool, raw = q.tool_name, q.raw_input
        family = RULE_FAMILY.get(tool)
        if family in ("Read", "Edit"):
            given = raw.get("path")
            path = given if isinstance(given, str) and given else "."
            root = self.roots()[0]
            lexical = os.path.normpath(os.path.join(root, path))
            return _Call(tool, family, path, tuple(dict.fromkeys((lexical, os.path.realpath(lexical)))))
        if family == "Bash":
            line = raw.get("command")
            return _Call(tool, family, line=line if isinstance(line, str) else "")
        if family in ("Agent", "Skill"):
            name = raw.get("subagent_type" if family == "Agent" else "name")
            return _Call(tool, family, name=name if isinstance(name, str) and name else "general-purpose")
        return _Call(tool, family)

    def _match(self, rules: list[Rule], behavior: Behavior, call: _Call, reach: int = YES) -> Rule | None:
        """The first rule of `behavior` that matches the call; for allow rules on a command line,
        only a bare one (`_allowed` weighs the patterns, command by command). A deny or ask rule on
        a command line matches where it reaches it at least as far as `reach` (`command_patterns.py`:
        YES, or also MAYBE)."""
        for rule in rules:
            if rule.behavior != behavior or not rule.names(call.tool):
                continue
            if rule.bare:
                return rule
            if rule.command is not None and call.line is not None and behavior != "allow":
                level = call.reached.get(id(rule))
                if level is None:
                    level = call.reached[id(rule)] = rule.command.reach(analyse(call.line))
                if level >= reach:
                    return rule
            elif rule.path is not None and call.paths:
                hits = [rule.path.matches(p) for p in call.paths]
                if all(hits) if behavior == "allow" else any(hits):  # allow: the link and its target
                    return rule
            elif rule.pattern is not None and call.name is not None and rule.matches_name(call.name):
                return rule
        return None

    def _confined(self, call: _Call) -> str | None:
        """The file tool's own refusal of its path (outside the roots, hidden, denied), or None."""
        if call.path is None:
            return None
        try:
            resolve_inside(
                tuple(self.roots()), call.path, hidden=self.hidden.with_denials(self.path_denials())
            )
        except (PathOutsideCwd, ToolError) as exc:
            return str(exc)
        return None

    def _allowed(
        self, rules: list[Rule], call: _Call, q: PermissionQuestion, granted: Grants | None
    ) -> str | None:
        """Why step 7 allows the call (an allow rule, an answer, the grant), or None."""
        if (rule := self._match(rules, "allow", call)) is not None:
            return f"allow rule {rule.text} ({rule.origin.shown})"
        if granted is not None and granted.covers(q.tool_name, q.raw_input):
            return "the command's allowed-tools"
        if call.line is None:
            return None
        if self.lines.get(call.line) is True:
            return "allowed always this session"
        patterns = [r.command for r in rules if r.behavior == "allow" and r.command and r.names(call.tool)]
        patterns += granted.commands if granted is not None else ()
        if covers(patterns, analyse(call.line)):
            return "allow rules, command by command"
        return None

    # -- "always" answers ---------------------------------------------------------------------------

    def _lasting_rules(self, q: PermissionQuestion, allow: bool) -> tuple[list[str], bool]:
        """The rules an "always" answer to `q` is kept as, and whether in the local file."""
        call = self._call(q)
        if call.line is not None:
            exact = analyse(call.line).exact
            if exact is None or any("*" in w for argv in exact for w in argv):
                return [], False
            patterns = [r.command for r in self.rules() if r.behavior == "allow" and r.command]
            needed = [a for a in exact if not covers_command(patterns, a)] or list(exact)
            texts = [command_rule(argv, prefix=allow) for argv in needed]
            return list(dict.fromkeys(texts)), all(
                names_command(t, argv) for t, argv in zip(texts, needed, strict=True)
            )
        if call.tool.startswith("mcp__"):
            return [call.tool], True
        if call.family == "Read" and not allow and len(call.paths) > 0:
            return [rule_text("Read", escaped_path(Path(call.paths[-1])))], True
        if call.family in ("Agent", "Skill") and call.name is not None:
            return [rule_text(call.family, call.name)], True
        return [call.tool], False  # edits (Claude Code keeps them per session) and the rest

    def _add(self, into: list[Rule], texts: list[str], behavior: Behavior, origin: RuleOrigin) -> None:
        for text in texts:
            rule, _ = read_rule(text, behavior, origin, cwd=self.setup.cwd, home=self.home)
            if rule is not None and all(r.text != text or r.behavior != behavior for r in into):
                into.append(rule)


def _ask(mode: str, step: str, why: str, rule: Rule | None = None) -> Verdict:
    if mode == "dontAsk":
        return Verdict("deny", DONT_ASK.format(why=why), step, rule)
    return Verdict("ask", step=step, rule=rule)
