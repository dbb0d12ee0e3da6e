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

__all__ = ["MAX_FILE_REFS", "MAX_SHELL_COMMANDS", "file_refs", "shell_commands", "substitute"]

MAX_SHELL_COMMANDS = 10
MAX_FILE_REFS = 20
_PLACEHOLDER = re.compile(r"\$ARGUMENTS\[(\d{1,3})\]|\$ARGUMENTS|\$([1-9])(?!\d)")
SHELL = re.compile(r"!`([^`\n]+)`")
_FILE_REF = re.compile(r"(?<![\w@`/\\])@((?:~/|\./|\.\./)?[\w.-]+(?:/[\w.-]+)*/?)")


def substitute(body: str, arguments: str) -> str:
    """`body` with `$ARGUMENTS`, `$ARGUMENTS[N]` and `$1`…`$9` replaced (a missing word is empty)."""
    try:
        words = shlex.split(arguments)
    except ValueError:  # an unbalanced quote: plain words then
        words = arguments.split()

    def value(match: re.Match[str]) -> str:
        indexed, numbered = match.group(1), match.group(2)
        if indexed is None and numbered is None:
            return arguments
        index = int(indexed) if indexed is not None else int(numbered) - 1
        return words[index] if index < len(words) else ""

    text = _PLACEHOLDER.sub(value, body)  # in one pass: a `$1` typed by the user stays as it is
    if arguments and _PLACEHOLDER.search(body) is None:
        text = f"{text.rstrip()}\n\nARGUMENTS: {arguments}"
    return text


def shell_commands(text: str) -> list[str]:
    """The `` !`cmd` `` commands in `text`, in order (each once)."""
    return list(dict.fromkeys(m.group(1).strip() for m in SHELL.finditer(text) if m.group(1).strip()))


def file_refs(text: str) -> list[str]:
    """The `@path` references in `text`, in order (each once; an e-mail address is not one, and a
    trailing full stop or comma is not part of the path)."""
    refs = (m.group(1).rstrip(".,;:") for m in _FILE_REF.finditer(SHELL.sub("", text)))
    return list(dict.fromkeys(r for r in refs if r and r not in {".", ".."}))
