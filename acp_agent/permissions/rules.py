"""A permission rule as Claude Code writes it: `Tool`, `Tool()`, `Tool(*)` or `Tool(specifier)`.

- The specifier starts at the first `(` that no backslash escapes and ends at the last character,
  an unescaped `)`; `\\(` and `\\)` inside it are parentheses (Claude Code writes them so).
- `Bash(…)`: a command pattern (`tools/shell/command_patterns.py`, matched against the one
  analysis of a command line): `npm test` that command, `npm run *` any text where the `*` is, the
  legacy `git status:*` the same as `git status *`. An allow rule the strict reader cannot vouch
  for is skipped; a deny or ask rule never is (`Bash(rm -rf ~)`, `Bash(> /etc/passwd)` are read
  as the grammar reads a line, and met as written too).
- `Read(…)` / `Edit(…)`: a path pattern (`path_rules.py`).
- `WebFetch(domain:…)`: a host name, `*.example.com` its subdomains.
- `Agent(name)` and its old name `Task(name)`: a subagent type; `Skill(name)`, `Skill(name *)`,
  `Skill(prefix:*)`: a skill.
- `mcp__server` and `mcp__server__*` (every tool of the server), `mcp__server__tool`, and globs on
  the name (`mcp__github__get_*`); an allow rule's glob must follow a literal `mcp__<server>__`,
  while deny and ask rules take any (`mcp__*`, `*`).

A rule that cannot be read, or that this agent would never consult, is skipped with a warning (the
log and `/status`); a rule on a tool this agent does not know is kept (with a warning): an MCP
server may bring it later.

An "always" answer on a command is kept per command of its line (Claude Code's way), as the
narrowest rule that covers it (`command_rule`): its leading words then ` *` (`Bash(pytest *)`), or
the exact command wherever a prefix would let other code run (`RUNS_CODE`: a program whose
arguments say what runs, `python x.py`, `sed`'s `e` command, `awk`'s `system()`, `find
-delete`/`-exec`; a wrapper, `timeout 60 x`; a program named by its path; git with global options,
`git -c` runs what a config says, or a git subcommand that runs code, `RUNS_CODE_IN_GIT`); an
answer on a line the strict reader does not vouch for holds for the session only, since no rule
could name it.
"""

from __future__ import annotations

import functools
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from acp_agent.permissions.path_rules import PathPattern, read_path_pattern
from acp_agent.permissions.tool_names import (
    CLAUDE_TOOLS,
    OWN_TOOLS,
    RULE_FAMILY,
    SERVER_TOOLS,
    UNCONSULTED,
    canonical,
    tools_named,
)
from acp_agent.tools.shell.command_patterns import CommandPattern, StarGlob, read_pattern

__all__ = [
    "BEHAVIORS",
    "LOCAL_SETTINGS",
    "RUNS_CODE",
    "RUNS_CODE_IN_GIT",
    "Behavior",
    "Rule",
    "RuleOrigin",
    "command_rule",
    "names_command",
    "prefix_is_safe",
    "read_rule",
    "rule_text",
]

Behavior = Literal["allow", "ask", "deny"]
BEHAVIORS: tuple[Behavior, ...] = ("deny", "ask", "allow")
"""In the order they are evaluated."""
LOCAL_SETTINGS = ".claude/settings.local.json"
"""Where Claude Code keeps "always" answers (at the repository root), as a rule kept there is named."""
MAX_RULE_CHARS = 2000
_NAME = re.compile(r"[A-Za-z0-9_*.-]+")
_MCP_ANCHORED = re.compile(r"mcp__[A-Za-z0-9_.-]+__")
_SPECIFIED = frozenset({"Bash", "Read", "Edit", "WebFetch", "Agent", "Skill"})
"""The families whose calls a specifier narrows."""
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


@dataclass(frozen=True, slots=True)
class RuleOrigin:
    """Where a rule comes from, as `/permissions` and a refusal name it, and what its leading `/`
    means (`path_rules.py`). `project`: written by the repository (its `.claude/settings.json`,
    or a local file git tracks), so the rule widens only after trust (`trust.py`)."""

    shown: str
    anchor: Path
    project: bool = False
    file: Path | None = field(default=None, compare=False)
    """The settings file it was read from (None: a rule the agent or the session made): what ties
    a project's allow rule to its file's trust (`ClaudeSetup.rules_in_force`)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule, read. `tool` is the name as rules are matched (`Task` is `Agent`)."""

    text: str
    behavior: Behavior
    tool: str
    origin: RuleOrigin
    command: CommandPattern | None = None
    path: PathPattern | None = None
    pattern: str | None = None
    """A subagent type or skill name (`Agent(…)`, `Skill(…)`), a host (`WebFetch(domain:…)`), or
    the tool name itself for an MCP rule or a glob: globs (`*` any text) separated by NUL, matched
    without backtracking (`StarGlob`), compiled on first use."""

    @property
    def bare(self) -> bool:
        """The rule names every use of its tool(s)."""
        return self.command is None and self.path is None and (self.pattern is None or self.by_name)

    @property
    def by_name(self) -> bool:
        """The rule's pattern is on the tool's name (an MCP rule or a name glob)."""
        return self.tool.startswith("mcp__") or "*" in self.tool

    def names(self, tool: str) -> bool:
        """The rule is about calls of this agent's `tool` (whatever their input)."""
        if self.by_name:
            return self.pattern is not None and _name_matches(self.pattern, tool)
        if self.bare:
            return tool == self.tool or tool in tools_named(self.tool)
        return RULE_FAMILY.get(tool) == self.tool

    def matches_name(self, name: str) -> bool:
        """For `Agent`, `Skill` and `WebFetch` rules: the call's subagent type, skill or host."""
        return self.pattern is None or _name_matches(self.pattern, name)

    def __str__(self) -> str:
        return self.text


@functools.lru_cache(maxsize=1024)
def _name_globs(pattern: str) -> tuple[StarGlob, ...]:
    return tuple(StarGlob.of(glob) for glob in pattern.split("\0"))


def _name_matches(pattern: str, name: str) -> bool:
    return any(glob.fullmatch(name) for glob in _name_globs(pattern))


def rule_text(tool: str, specifier: str | None = None) -> str:
    """A rule as Claude Code writes it: parentheses and backslashes in the specifier escaped."""
    if not specifier:
        return tool
    escaped = specifier.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return f"{tool}({escaped})"


def read_rule(
    text: object, behavior: Behavior, origin: RuleOrigin, *, cwd: Path, home: Path | None
) -> tuple[Rule | None, str | None]:
    """The rule `text` reads as, and a warning (a rule kept with a caveat, or why it was skipped)."""
    if not isinstance(text, str):
        return None, f"{behavior} rule {str(text)[:60]!r} is not a string"
    written = text.strip()
    if not written or len(written) > MAX_RULE_CHARS:
        return None, f"{behavior} rule {written[:60]!r} is empty or too long"
    split = _split(written)
    if split is None:
        return None, f"{behavior} rule {written[:80]!r}: unbalanced parentheses"
    name, specifier = split
    if not _NAME.fullmatch(name):
        return None, f"{behavior} rule {written[:80]!r}: {name[:40]!r} is not a tool name"
    tool = canonical(name)
    if specifier is not None and specifier.strip() in ("", "*"):
        specifier = None
    if name.startswith("mcp__") or "*" in name:
        return _by_name(written, behavior, origin, name, specifier)
    if specifier is None:
        return Rule(written, behavior, tool, origin), _unknown(written, name)
    if name in UNCONSULTED or tool not in _SPECIFIED:
        why = (
            f"{name}'s path rules are never consulted (Read and Edit rules cover it)"
            if name in UNCONSULTED
            else f"{name} takes no specifier here"
            if name in CLAUDE_TOOLS or name in OWN_TOOLS or name in SERVER_TOOLS
            else f"{name} is no tool of this agent"
        )
        return None, f"{behavior} rule {written[:80]!r} skipped: {why}"
    found: CommandPattern | PathPattern | str
    if tool == "Bash":
        found = read_pattern(specifier, wide=behavior != "allow")  # only an allow rule is refused
        if isinstance(found, CommandPattern):
            return Rule(written, behavior, tool, origin, command=found), None
    elif tool in ("Read", "Edit"):
        found = read_path_pattern(
            specifier, anchor=origin.anchor, cwd=cwd, home=home, anywhere=behavior != "allow"
        )
        if isinstance(found, PathPattern):
            return Rule(written, behavior, tool, origin, path=found), None
    else:  # WebFetch, Agent, Skill
        source, found = _domain(specifier) if tool == "WebFetch" else (_name_glob(specifier), "")
        if source is not None:
            return Rule(written, behavior, tool, origin, pattern=source), None
    return None, f"{behavior} rule {written[:80]!r} skipped: {found}"


def _split(text: str) -> tuple[str, str | None] | None:
    """(tool, specifier or None), or None when the parentheses do not close at the end."""
    i, opened = 0, -1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "(":
            opened = i
            break
        i += 1
    if opened < 0:
        return (text, None) if ")" not in text else None
    if not text.endswith(")") or (len(text) >= 2 and text[-2] == "\\" and not text.endswith("\\\\)")):
        return None
    body = text[opened + 1 : -1]
    return text[:opened], re.sub(r"\\([\\()])", r"\1", body)


def _by_name(
    written: str, behavior: Behavior, origin: RuleOrigin, name: str, specifier: str | None
) -> tuple[Rule | None, str | None]:
    """An MCP rule, or a glob on tool names."""
    if behavior == "allow" and "*" in name:
        anchored = _MCP_ANCHORED.match(name)
        if anchored is None or "*" in anchored.group():
            return None, (
                f"allow rule {written[:80]!r} skipped: a glob in an allow rule must follow `mcp__<server>__`"
            )
    body = name.removesuffix("__*") if name.startswith("mcp__") and name.count("__") > 1 else name
    glob = body + "__*" if body.startswith("mcp__") and body.count("__") == 1 else body  # every tool
    warning = f"{behavior} rule {written[:80]!r}: the specifier is ignored" if specifier else None
    return Rule(written, behavior, name, origin, pattern=glob), warning


def _unknown(written: str, name: str) -> str | None:
    known = name in CLAUDE_TOOLS or name in OWN_TOOLS or name in SERVER_TOOLS
    known = known or canonical(name) in RULE_FAMILY.values()
    return None if known else f"rule {written[:80]!r}: no tool of this agent is named {name!r} (kept)"


def _domain(specifier: str) -> tuple[str | None, str]:
    """`domain:host` as a host glob (or why not): the host, any case, a trailing dot ignored;
    `*.host` its subdomains (not the host itself). The API runs web fetch, so the rule becomes
    its blocked domains (`web_rules.py`), and the glob is not matched here."""
    key, _, host = specifier.partition(":")
    host = host.strip().lower().rstrip(".")
    if key.strip() != "domain" or not host or "/" in host or "\0" in host:
        return None, "WebFetch takes `domain:<host>`"
    return host, ""


def _name_glob(specifier: str) -> str:
    """A subagent type or skill as globs: `name`, `name *` (the name, or the name then more
    words) and the legacy `prefix:*` (the prefix then anything); `*` is any text."""
    text = specifier.strip().replace("\0", "")
    blanks = [f"{text[:-2]}{blank}*" for blank in (" ", "\t", "\n")]
    if text.endswith(":*"):
        return "\0".join([text[:-2], text, *blanks])
    if text.endswith(" *"):
        return "\0".join([text[:-2], *blanks])
    return text


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
