"""A session's title: computed once, the same way for `session/list`, `session_info_update` and load.

The title is the first text line of the session's first prompt (at most `TITLE_CHARS`), with no
model request, until the user renames the session (ACP's unstable `session/set_title`, journaled
as a `TitleEntry`); a renamed session keeps its name. The editor hears of it in a
`session_info_update`: the title once the first prompt is journaled, `updatedAt` after every turn.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from acp_agent.errors import RpcError
from acp_agent.journal.store import SessionStore
from acp_agent.tools.printable import one_line
from acp_agent.turn.journal.entries import Entry, PromptEntry, TitleEntry

__all__ = [
    "RENAME_CHARS",
    "TITLE_CHARS",
    "normalized_title",
    "prompt_title",
    "rename_stored",
    "session_title",
]

TITLE_CHARS = 80
"""The longest title taken from a prompt."""
RENAME_CHARS = 200
"""The longest title a rename keeps (a longer one is cut)."""


def prompt_title(prompt: Iterable[Any]) -> str | None:
    """The first line of the prompt's first text that holds more than whitespace (and control
    characters), one printable line cut to `TITLE_CHARS`; None when it holds no text (an image)."""
    for block in prompt:
        text = block.get("text") if isinstance(block, dict) else None
        line = one_line(text.strip().splitlines()[0]) if isinstance(text, str) and text.strip() else ""
        if line:
            return line[:TITLE_CHARS]
    return None


def session_title(entries: Iterable[Entry]) -> str | None:
    """The title the entries give: the latest rename, else the first prompt's title."""
    title: str | None = None
    prompted = False
    for entry in entries:
        if isinstance(entry, TitleEntry):
            title, prompted = one_line(entry.title) or None, True  # a journal from before the check
        elif isinstance(entry, PromptEntry) and not prompted:
            title, prompted = prompt_title(entry.prompt), True
    return title


def normalized_title(text: str) -> str:
    """A title as a rename stores it: one printable line, runs of whitespace as one space, at
    most `RENAME_CHARS`. Raises ValueError when nothing is left."""
    title = one_line(text)[:RENAME_CHARS].rstrip()
    if not title:
        raise ValueError("must hold more than whitespace and control characters")
    return title


def rename_stored(store: SessionStore, session_id: str, title: str) -> None:
    """Journal a rename (`title` normalized already) straight into the file of a session that is
    not open here (ACP says it need not be; an open one renames itself, `Session.rename`).

    Raises:
        RpcError: -32002 when there is no such session.
        JournalFailed, OSError: the journal refused the entry (nothing was kept).
    """
    if not store.exists(session_id):
        raise RpcError.session_not_found(session_id)
    journal = store.reopen(session_id)
    try:
        journal.append(TitleEntry(title))
    finally:
        journal.close()
