"""A plain shell command line read as bash reads it, into the argv of each simple command, or refused.

This is the strict reader: what an allow rule, an "always allow" answer or a command's grant may
cover (`command_analysis.py` gives its reading as `LineAnalysis.exact`). These name commands by
their words: `Bash(git status:*)` is argv `git status …`. Matching the line as text lets bash
run what the text hides: `git status ${x:=$(cmd)}`, `$[y]`, `git status; rm`. So the grant
matches the argv bash would build, and a line is split only where the parser is sure: at `;`,
`&&`, `||`, `|` and newlines outside quotes, each part one simple command of plain words
(quote removal and backslash escapes done as bash does them).

Anything else bash would expand or treat specially makes the parser unsure, and an unsure
line is never granted (it is asked as usual). `UNSURE` lists each with why; in short:
- any `$` (parameter, arithmetic, command expansion, `$'…'`), any backquote, any `!` (history
  expansion, negation): refused even inside quotes, where they are not always inert;
- redirections and here-docs (`<`, `>`: they write and read files the words do not name),
  process substitution, subshells and groups (`(`, `)`, `{`, `}`), background jobs (`&`, `|&`),
  `case` terminators (`;;`);
- unquoted globs (`*`, `?`, `[`): a file name would become an argument, and an option
  (`--pre=sh` to rg runs a program);
- a tilde that bash expands, a `#` that starts a comment, a line continuation, a control
  character (bash takes `\\r` as part of a word), an unclosed quote, an empty command, a backslash
  after a non-ASCII character (a multibyte locale may take it as part of that character);
- a variable assignment before the command (`PAGER=… git log`, `LD_PRELOAD=…` run other code)
  and a reserved word (`if`, `for`, `while`, `function`, `time`...) in a command's place.

A rule that refuses or asks (the settings' `deny` and `ask`) must hold on every line: those read
the analysis of `command_analysis.py` (tree-sitter's grammar), which falls back on
`rough_commands` (any line read into the commands it may run, best effort, past leading
assignments) where the grammar finds an error. Allow rules look past the wrapper commands Claude
Code looks through (`unwrapped`: `timeout 60 npm test` is matched as `npm test`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["UNSURE", "WRAPPERS", "ParsedLine", "parse_line", "rough_commands", "unwrapped"]

UNSURE = {
    "$": "a `$` expands parameters, arithmetic and commands",
    "`": "a backquote runs a command",
    "!": "a `!` expands history or negates",
    "<": "a redirection, here-doc or process substitution reads or writes what the words do not say",
    ">": "a redirection or process substitution writes what the words do not say",
    "(": "a subshell, process substitution or function runs other code",
    ")": "a subshell, process substitution or function runs other code",
    "{": "a brace expansion or command group",
    "}": "a brace expansion or command group",
    "*": "an unquoted glob: file names would become arguments",
    "?": "an unquoted glob: file names would become arguments",
    "[": "an unquoted glob: file names would become arguments",
    "&": "a background job",
    "|&": "a pipe of stderr",
    ";;": "a `case` terminator",
    "~": "a tilde expansion",
    "#": "a comment",
    "\\\n": "a line continuation",
    "\\": "a backslash that ends the line, or follows a non-ASCII character",
    "control": "a control character",
    "quote": "an unclosed quote",
    "empty": "an empty command",
    "assignment": "a variable assignment before the command (it can make the command run other code)",
    "reserved": "a reserved word (a compound command)",
}
"""Why the parser is unsure of a line, by what it found."""

_ANYWHERE = re.compile(r"[$`!\x00-\x08\x0b-\x1f\x7f]|\\\n|(?<=[^\x00-\x7f])\\")
"""Refused wherever they are, quoted or not. A backslash right after a non-ASCII character too: in
a Big5, GBK or Shift JIS locale bash reads that byte as the character's second one, so the escape
(or a closing quote it protects) is not what it looks like here."""
_TOKEN = re.compile(
    r"""(?P<blank>[ \t]+)
    |(?P<op>;;&?|;&|\|&|&&|\|\||[;|&\n])
    |(?P<word>(?:[^ \t\n'"\\|&;<>(){}*?\[]|'[^']*'|"(?:[^"\\]|\\.)*"|\\.)+)""",
    re.VERBOSE | re.DOTALL,
)
_PIECE = re.compile(r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)|([^'"\\]+)""", re.DOTALL)
_IN_DOUBLE_QUOTES = re.compile(r'\\(["\\])')
"""The escapes bash removes inside double quotes (`$`, backquote and newline are refused before)."""
_SEPARATORS = {";", "&&", "||", "|", "\n"}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_TILDE = re.compile(r"^~|[=:]~")
RESERVED = frozenset(
    {"if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do", "done"}
    | {"in", "function", "time", "coproc", "[[", "]]"}
)
"""Words that begin or end a compound command where a command's name stands."""


@dataclass(frozen=True, slots=True)
class ParsedLine:
    """What a command line runs: each simple command's argv, or why the parser cannot say."""

    commands: tuple[tuple[str, ...], ...] = ()
    unsure: str | None = None
    """Set when the line uses anything the parser does not vouch for (then `commands` is empty)."""


def _unsure(key: str, at: str | None = None) -> ParsedLine:
    return ParsedLine(unsure=f"{UNSURE[key]} ({at!r})" if at else UNSURE[key])


def parse_line(line: str) -> ParsedLine:
    """The simple commands of `line`, split at `;`, `&&`, `||`, `|` and newlines, or unsure."""
    if found := _ANYWHERE.search(line):
        char = found.group()
        return _unsure(char if char in UNSURE else "control", char)
    commands: list[tuple[str, ...]] = []
    words: list[str] = []
    position, separator = 0, "\n"
    while position < len(line):
        token = _TOKEN.match(line, position)
        if token is None:
            char = line[position]
            return _unsure("quote" if char in "'\"" else char if char in UNSURE else "control", char)
        position = token.end()
        if (op := token.group("op")) is not None:
            if op not in _SEPARATORS:
                return _unsure(op if op in UNSURE else ";;", op)  # `&`, `|&`; `;;`, `;&`, `;;&`
            if words:
                commands.append(tuple(words))
            elif op != "\n":  # `; a`, `a; ; b`, `a && || b`: bash refuses them too
                return _unsure("empty", op)
            elif separator in ("&&", "||", "|"):  # `a &&` then a newline: bash reads on
                continue
            words, separator = [], op
        elif (raw := token.group("word")) is not None:
            if problem := _word_problem(raw, first=not words):
                return problem
            words.append(_unquoted(raw))
    if words:
        commands.append(tuple(words))
    elif separator in ("&&", "||", "|"):
        return _unsure("empty", separator)
    return ParsedLine(tuple(commands)) if commands else _unsure("empty")


def _word_problem(raw: str, *, first: bool) -> ParsedLine | None:
    """Why bash would not take this word (as written, quotes included) literally, or None."""
    if raw.startswith("#"):
        return _unsure("#", raw)
    if _TILDE.search(raw):
        return _unsure("~", raw)
    if first and _ASSIGNMENT.match(raw):
        return _unsure("assignment", raw)
    if first and raw in RESERVED:
        return _unsure("reserved", raw)
    return None


def _unquoted(raw: str) -> str:
    """A word after quote removal."""
    if "'" not in raw and '"' not in raw and "\\" not in raw:
        return raw
    parts = []
    for piece in _PIECE.finditer(raw):
        single, double, escaped, plain = piece.groups()
        if double is not None:
            parts.append(_IN_DOUBLE_QUOTES.sub(r"\1", double))
        else:
            parts.append(single if single is not None else escaped if escaped is not None else plain)
    return "".join(parts)


WRAPPERS = frozenset({"timeout", "nice", "nohup", "stdbuf", "command", "builtin", "noglob", "xargs"})
"""Commands that run the command after them, looked through before a rule is matched (as Claude
Code does): `command -v` and an `xargs` with options are not wrappers."""
_TAKES_VALUE = {"timeout": {"-s", "--signal", "-k", "--kill-after"}, "nice": {"-n", "--adjustment"}}
_STDBUF_VALUE = {"-i", "-o", "-e"}


def unwrapped(argv: tuple[str, ...]) -> tuple[str, ...]:
    """`argv` past its wrapper commands (`WRAPPERS`, with their options: `timeout -k 5 60`,
    `nice -n 5`, `stdbuf -oL`); `argv` itself when nothing would be left."""
    rest = argv
    while rest and rest[0] in WRAPPERS:
        head, after = rest[0], list(rest[1:])
        if head == "command" and after[:1] and after[0] in ("-v", "-V"):
            break
        if head == "xargs" and after[:1] and after[0].startswith("-"):
            break
        if head in ("timeout", "nice", "stdbuf", "command"):
            takes = _TAKES_VALUE.get(head, _STDBUF_VALUE if head == "stdbuf" else set())
            while after and after[0].startswith("-") and after[0] != "--":
                option = after.pop(0)
                if option in takes and after:
                    after.pop(0)
            if after[:1] == ["--"]:
                after.pop(0)
            if head == "timeout" and after:
                after.pop(0)  # the duration
        rest = tuple(after)
    return rest or argv


_ROUGH_SPLIT = re.compile(r"\|&&|\|\||[;&|\n`()]|\$\(")
_LEADING_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")
_ROUGH_WORD = re.compile(r"""((?:'[^']*'|"(?:[^"\\]|\\.)*"|\\.|[^\s'"\\])+)(?=\s|$)|\S+""", re.DOTALL)
"""A word with its quotes closed (group 1: its quotes are removed), else any run of non-blanks."""


def rough_commands(line: str) -> tuple[tuple[str, ...], ...]:
    """The commands `line` may run, read loosely: split at every separator, pipe, subshell and
    command substitution (quoted or not), each piece's words with their quotes removed (a word
    with an unclosed quote kept as written), past leading assignments and wrappers. For rules that
    refuse or ask: a line the parser is unsure of still meets them."""
    found: list[tuple[str, ...]] = []
    for piece in _ROUGH_SPLIT.split(line):
        words = [
            _unquoted(raw) if match.lastindex else raw
            for match in _ROUGH_WORD.finditer(piece)
            for raw in (match.group(),)
        ]
        while words and _LEADING_ASSIGNMENT.match(words[0]):
            words.pop(0)
        if words:
            found.append(unwrapped(tuple(words)))
    return tuple(found)
