"""A command line's syntax tree, read by tree-sitter's bash grammar: every simple command in it.

`command_line.py:parse_line` vouches for plain lines only (what an allow rule may cover). A deny or
ask rule must hold on any line, so it needs every command a line may run, wherever it stands: in
a pipeline or a list, a subshell or a group, an `if`, `for`, `while` or `case`, a function body, a
command or process substitution (`$(…)`, a backquote, `<(…)`), the value of an assignment. This
module reads the line with tree-sitter's bash grammar (a C parser: a 1 KB line in about 0.2 ms;
its import, about 45 ms, is deferred to the first line read) and gives each simple command as its
words, each word as written and, where bash would take it literally, its value after quote
removal (`Word.value`; None where bash expands it: a `$`, a backquote, an unquoted glob, a brace
expansion). A command's here-doc or here-string (its standard input, which a shell it runs reads
as commands) is kept with it, and every redirection of the line is listed with its target.

Where the grammar finds an error, `Syntax.broken` is set: the caller reads such a line more widely.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from acp_agent.lazy import deferred

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["Redirect", "SimpleCommand", "Syntax", "Word", "bash_parser", "read_syntax"]


class Word(NamedTuple):
    """One word of a command: as written, and its value when bash would take it literally (a
    tuple: lines are compared and hashed by their words, in C)."""

    raw: str
    value: str | None


class Redirect(NamedTuple):
    """A redirection: its operator (`>`, `>>`, `<`, `&>`, `2>`...) and its target."""

    op: str
    target: Word

    @property
    def writes(self) -> bool:
        return ">" in self.op


class SimpleCommand(NamedTuple):
    """One simple command: its words (the program first; none for a bare redirection) and the
    here-doc or here-string its standard input reads, if any (tuples: built by the hundred per
    line, where a frozen dataclass's `__init__` costs more)."""

    words: tuple[Word, ...]
    stdin: Word | None = None


@dataclass(frozen=True, slots=True)
class Syntax:
    """What tree-sitter read in a line."""

    commands: tuple[SimpleCommand, ...]
    redirects: tuple[Redirect, ...]
    broken: bool
    """The grammar found an error: the commands above may not be all the line runs."""
    here_docs: tuple[tuple[int, int], ...] = ()
    """Where the here-docs' bodies are (UTF-8 byte offsets): text, unless given to a shell."""

    def without_here_docs(self, line: str) -> str:
        """`line` with its here-docs' bodies left out (what a rough reading of it may split)."""
        if not self.here_docs:
            return line
        data, kept, start = line.encode("utf-8", "surrogatepass"), [], 0
        for begin, end in self.here_docs:
            kept.append(data[start:begin])
            start = max(start, end)
        kept.append(data[start:])
        return b"\n".join(kept).decode("utf-8", "surrogatepass")


_QUERY = """
(command) @command
(declaration_command) @declaration
(unset_command) @declaration
(file_redirect) @redirect
(redirected_statement) @statement
(heredoc_body) @body
"""
"""The nodes the analysis reads, found by tree-sitter in C (walking every node in Python cost
five times the parse)."""


@deferred
def bash_parser() -> tuple[Any, Any]:
    """tree-sitter's parser for bash and the query of `_QUERY` (the import is deferred: ~45 ms)."""
    import tree_sitter
    import tree_sitter_bash

    language = tree_sitter.Language(tree_sitter_bash.language())
    query = tree_sitter.Query(language, _QUERY)
    return tree_sitter.Parser(language), lambda node: tree_sitter.QueryCursor(query).captures(node)


@functools.lru_cache(maxsize=512)
def read_syntax(line: str) -> Syntax:
    """Every simple command and redirection of `line` (cached: a question and its answer, a hook's
    `if` and the rules read the same line)."""
    parser, captures = bash_parser.now()
    tree = parser.parse(line.encode("utf-8", "surrogatepass"))
    found: dict[str, list[Node]] = captures(tree.root_node)
    claimed: set[int] = set()
    ascii_line = line if line.isascii() else None
    commands = [
        part
        for node in found.get("command", ())
        for part in _newlines(_command(node, claimed, "statement" in found, ascii_line), "\n" in line)
    ]
    commands += [  # `export A=…`, `unset -f x`
        SimpleCommand(tuple(_word(c) for c in node.children if c.type != "comment"))
        for node in found.get("declaration", ())
    ]
    commands += [  # `> file` alone
        SimpleCommand(())
        for node in found.get("statement", ())
        if not any(c.type in _COMMANDS for c in node.named_children)
    ]
    unclaimed: dict[int, list[Word]] = {}  # `2>&1 2>&1 cmd x`, `a | b 2>&1 cmd` to the grammar
    for node in sorted(found.get("redirect", ()), key=lambda n: n.start_byte):
        if node.start_byte not in claimed and (after := _redirect(node)[2]):
            parent = node.parent
            key = parent.start_byte if parent is not None else -1
            unclaimed.setdefault(key, []).extend(map(_word, after))
    for words in unclaimed.values():  # the words no command took, per statement: read as one
        while words and _ASSIGNMENT.match(words[0].raw):
            words.pop(0)
        if words:
            commands.append(SimpleCommand(tuple(words)))
    redirects = [
        Redirect(op, _word(target))
        for op, target, _ in map(_redirect, found.get("redirect", ()))
        if target is not None
    ]
    glued = any(  # the grammar glued two lines into one word: read the line more widely
        "\n" in w.raw and "\n" in _QUOTED.sub("", w.raw) for c in commands for w in c.words
    )
    bodies = tuple((n.start_byte, n.end_byte) for n in found.get("body", ()))
    return Syntax(tuple(commands), tuple(redirects), tree.root_node.has_error or glued, bodies)


_COMMANDS = frozenset({"command", "declaration_command", "unset_command"})
_QUOTED = re.compile(r"'[^']*'|" + r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_ENDS_WITH = frozenset({"negated_command", "list", "pipeline"})
_AROUND = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})


def _command(node: Node, claimed: set[int], redirected: bool, ascii_line: str | None) -> SimpleCommand:
    """One `command` node's words, in bash's order (`redirected`: the line has redirections,
    whose words the grammar may have put in a redirection of the statement around it;
    `ascii_line`: the line, where its byte offsets are its characters')."""
    parts: list[Node] = []
    assigned: set[int] = set()
    stdin = None
    children = node.named_children
    if redirected:
        parent, end = node.parent, node.end_byte
        while parent is not None and parent.type in _ENDS_WITH and parent.end_byte == end:
            parent = parent.parent  # `! cmd 2>&1 x`, `a && cmd 2>&1 x`: the grammar's redirect is theirs
        if parent is not None and parent.type == "redirected_statement":  # `cmd > x`, `sh <<EOF`
            children += [c for c in parent.named_children if c.type in _AROUND]
    moved = False
    for child in children:
        kind = child.type
        if kind == "command_name":
            parts += child.named_children[:1]
        elif kind == "file_redirect":
            extra = _redirect(child)[2]
            parts += extra
            moved = moved or bool(extra)
            claimed.add(child.start_byte)
        elif kind == "heredoc_redirect":
            stdin = _here_doc(child)
        elif kind == "herestring_redirect":
            stdin = _here_string(child)
        elif kind == "variable_assignment" and _ASSIGNMENT.match(_text(child)):
            assigned.add(child.end_byte)
        elif kind != "comment":
            parts.append(child)
    words: list[Word] = []
    end = -1
    for part in sorted(parts, key=lambda n: n.start_byte) if moved else parts:
        start, stop = part.start_byte, part.end_byte
        if start in assigned:  # `a=''\*`: the rest of the assignment's value
            assigned.add(stop)
            continue
        if ascii_line is not None and part.type == "word":  # the common case, without a call
            raw = ascii_line[start:stop]
            word = Word(raw, raw if _PLAIN.search(raw) is None else _unquoted_word(raw))
        else:
            word = _word(part)
        if not words and _ASSIGNMENT.match(word.raw):  # `2>&1 x=1 cmd`: still before the program
            assigned.add(stop)
            continue
        if start == end and words:  # `"r"\m`: one word to bash, two nodes here
            last = words.pop()
            value = None if last.value is None or word.value is None else last.value + word.value
            word = Word(last.raw + word.raw, value)
        words.append(word)
        end = stop
    return SimpleCommand(tuple(words), stdin)


def _newlines(command: SimpleCommand, any_newline: bool) -> list[SimpleCommand]:
    return _split_at_newlines(command) if any_newline else [command]


def _split_at_newlines(command: SimpleCommand) -> list[SimpleCommand]:
    """The grammar glues a word that starts a line with a backslash (`ls 2>&1` newline `\\rm x`)
    to the command before it, newline included: bash runs two commands there."""
    parts: list[SimpleCommand] = []
    start = 0
    for i, word in enumerate(command.words):
        if i and word.raw[:1] == "\n":
            parts.append(SimpleCommand(command.words[start:i]))
            start = i
    if not parts:
        head = command.words[:1]
        if head and head[0].raw[:1] == "\n":
            return [SimpleCommand((_unglued(head[0]), *command.words[1:]), command.stdin)]
        return [command]
    rest = [_unglued(w) if k == 0 else w for k, w in enumerate(command.words[start:])]
    return [
        *(SimpleCommand((_unglued(p.words[0]), *p.words[1:])) for p in parts),
        SimpleCommand(tuple(rest), command.stdin),
    ]


def _unglued(word: Word) -> Word:
    raw = word.raw.lstrip("\n")
    return Word(raw, None if word.value is None else word.value.lstrip("\n"))


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")


def _redirect(node: Node) -> tuple[str, Node | None, list[Node]]:
    """A `file_redirect`'s operator, its target (None for a duplicate, `2>&1`), and the words
    after it (`echo >x foo`, `rm 2>&1 x`: the command's)."""
    op, targets = "", []
    for child in node.children:
        if not child.is_named:
            op += _text(child)
        elif child.type != "file_descriptor":
            targets.append(child)
    if not targets:
        return op, None, []
    duplicate = op.endswith("&") and targets[0].type == "number"
    return op, None if duplicate else targets[0], targets[1:]


def _here_doc(node: Node) -> Word:
    start = next((c for c in node.children if c.type == "heredoc_start"), None)
    body = next((c for c in node.children if c.type == "heredoc_body"), None)
    text = _text(body) if body is not None else ""
    quoted = start is not None and any(q in _text(start) for q in "'\"\\")
    literal = quoted or not re.search(r"[$`\\]", text)
    return Word(text, text if literal else None)


def _here_string(node: Node) -> Word:
    given = node.named_children
    return _word(given[0]) if given else Word("", "")


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogatepass")


_C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "e": "\x1b"}
_C_ESCAPES |= {"E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_ANSI_C = re.compile(r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)", re.DOTALL)
_BRACES = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")


def _word(node: Node) -> Word:
    """A word node as written, and its value when it holds nothing bash expands."""
    raw = _text(node)
    return Word(raw, _value(node, raw))


def _value(node: Node, raw: str) -> str | None:
    kind = node.type
    if kind == "word":
        return _unquoted_word(raw)
    if kind in ("number", "variable_name") or not node.is_named:  # `export`, `declare`
        return raw
    if kind == "variable_assignment":
        return None if re.search(r"['\"]", raw) else _unquoted_word(raw)
    if kind == "raw_string":
        return raw[1:-1]
    if kind == "string":
        if any(c.type != "string_content" for c in node.named_children):
            return None
        return re.sub(r'\\([$`"\\])|\\\n', lambda m: m.group(1) or "", raw[1:-1])
    if kind == "ansi_c_string":
        return _ansi_c(raw[2:-1])
    if kind == "concatenation":
        if _BRACES.search(re.sub(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"|\\.", "", raw)):
            return None  # a brace expansion: several words
        parts = [_value(c, _text(c)) for c in node.named_children]
        return (
            None
            if any(p is None for p in parts) or not node.named_children
            else "".join(p or "" for p in parts)
        )
    return None  # an expansion, a substitution, an error


_PLAIN = re.compile(r"[\\*?\[$`]")


def _unquoted_word(raw: str) -> str | None:
    """An unquoted word after backslash removal; None if it holds a glob bash would expand."""
    if _PLAIN.search(raw) is None:
        return raw
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        char = raw[i]
        if char == "\\":
            if i + 1 < n and raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        if char in "*?" or (char == "[" and "]" in raw[i + 1 :]) or char in "$`":
            return None
        out.append(char)
        i += 1
    return "".join(out)


def _ansi_c(body: str) -> str:
    """The text of `$'…'` after bash's escapes (`\\x72\\x6d` is `rm`)."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] in "xuU" and len(code) > 1:
            return chr(min(int(code[1:], 16), 0x10FFFF))
        if code[0] in "01234567":
            return chr(int(code, 8) & 0xFF)
        if code[0] == "c" and len(code) == 2:
            return chr(ord(code[1]) & 0x1F)
        return _C_ESCAPES.get(code, "\\" + code)

    return _ANSI_C.sub(one, body)
