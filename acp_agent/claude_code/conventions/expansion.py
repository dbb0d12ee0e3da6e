"""A command file's text → the prompt: its arguments substituted, its `!` commands and `@` files found.

Claude Code's rules: `$ARGUMENTS` is everything typed after the command name (quotes group
words); `$ARGUMENTS[N]` is its word N counted from 0, as Claude Code's current docs have it;
`$1`…`$9` are its words counted from 1, as issue 25 and Claude Code's older command docs have it
(its current docs count `$N` from 0, so `$1` is the second word there; this project keeps the
issue's reading). A body that uses none of them gets the arguments appended on a line of their
own, so nothing the user typed is lost. `` !`cmd` `` runs `cmd` and puts its output there; `@path`
adds the file's content. Finding them is pure text (here); running and reading them is
`command_turn.py`'s, under the session's permission rules and confinement.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

__all__ = [
    "MAX_FILE_REFS",
    "MAX_SHELL_COMMANDS",
    "Piece",
    "ShellLine",
    "expand",
    "file_refs",
    "shell_commands",
    "text_of",
]

MAX_SHELL_COMMANDS = 10
MAX_FILE_REFS = 20
_PLACEHOLDER = re.compile(r"\$ARGUMENTS\[(\d{1,3})\]|\$ARGUMENTS|\$([1-9])(?!\d)")
SHELL = re.compile(r"!`([^`\n]+)`")
_FILE_REF = re.compile(r"(?<![\w@`/\\])@((?:~/|\./|\.\./)?[\w.-]+(?:/[\w.-]+)*/?)")


@dataclass(frozen=True, slots=True)
class ShellLine:
    """A `` !`cmd` `` of the file's own text."""

    command: str
    refused: str | None = None
    """Why it is not run (it names a placeholder), or None."""


Piece = str | ShellLine
"""A part of a command's prompt: text (its arguments substituted) or a `!` line to run."""


def expand(body: str, arguments: str) -> list[Piece]:
    """`body` cut at its own `` !`cmd` `` lines, the arguments substituted in its text only (see
    `substitute`); a body whose text names no placeholder gets them appended."""
    pieces: list[Piece] = []
    position, uses = 0, False
    for match in SHELL.finditer(body):
        pieces.append(body[position : match.start()])
        command = match.group(1).strip()
        if (named := _PLACEHOLDER.search(command)) is not None:
            refused = f"a `!` line takes no arguments ({named.group()}): what is typed is never run"
            pieces.append(ShellLine(command, refused))
        else:
            pieces.append(ShellLine(command) if command else match.group())
        position = match.end()
    pieces.append(body[position:])
    words = _words(arguments)
    for index, piece in enumerate(pieces):
        if isinstance(piece, str):
            uses = uses or _PLACEHOLDER.search(piece) is not None
            pieces[index] = _substituted(piece, arguments, words)
    if arguments and not uses:
        if isinstance(pieces[-1], str):
            pieces[-1] = pieces[-1].rstrip()
        pieces.append(f"\n\nARGUMENTS: {arguments}")
    return [piece for piece in pieces if piece != ""]


def _words(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:  # an unbalanced quote: plain words then
        return arguments.split()


def _substituted(text: str, arguments: str, words: list[str]) -> str:
    def value(match: re.Match[str]) -> str:
        indexed, numbered = match.group(1), match.group(2)
        if indexed is None and numbered is None:
            return arguments
        index = int(indexed) if indexed is not None else int(numbered) - 1
        return words[index] if index < len(words) else ""

    return _PLACEHOLDER.sub(value, text)  # in one pass: a `$1` typed by the user stays as it is


def text_of(pieces: list[Piece]) -> str:
    """The text pieces, joined where the `!` lines were (to look for `@path` in)."""
    return "".join(piece for piece in pieces if isinstance(piece, str))


def shell_commands(pieces: list[Piece]) -> list[str]:
    """The commands of the `!` lines that run, in order (each once)."""
    return list(dict.fromkeys(p.command for p in pieces if isinstance(p, ShellLine) and p.refused is None))


def file_refs(text: str) -> list[str]:
    """The `@path` references in `text`, in order (each once; an e-mail address is not one, and a
    trailing full stop or comma is not part of the path)."""
    refs = (m.group(1).rstrip(".,;:") for m in _FILE_REF.finditer(SHELL.sub("", text)))
    return list(dict.fromkeys(r for r in refs if r and r not in {".", ".."}))
