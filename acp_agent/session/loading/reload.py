"""session/load's reading half: a session's journal back into entries, history and updates.

A journal that cannot be read or replayed is a clear error naming the file (and the line, when one
is at fault). The choices it recorded (mode, model, effort, loop) are restored by
`session/options/config_options.py:SessionOptions.restore`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, NamedTuple

import structlog

from acp_agent.errors import RpcError
from acp_agent.journal.store import Journal, JournalCorrupt, JournalWriteFailed, SessionStore
from acp_agent.journal.timeline import Timeline
from acp_agent.journal.titles import session_title
from acp_agent.protocol.lifecycle import ClientCapabilities
from acp_agent.session.editor.updates import info_update
from acp_agent.session.loading.replay import replay_updates
from acp_agent.turn.context.history import History
from acp_agent.turn.journal.entries import Entry

__all__ = ["Reloaded", "journal_error", "read_journal", "reload_journal", "reopen_journal"]

log = structlog.get_logger(__name__)


class Reloaded(NamedTuple):
    """A journal read back (`read_journal`) and reopened for the next entries (`reopen_journal`)."""

    entries: list[Entry]
    history: History
    updates: list[dict[str, Any]]
    journal: Journal


def reload_journal(
    store: SessionStore, session_id: str, capabilities: ClientCapabilities | None = None
) -> Reloaded:
    """session/load's journal: read back, then reopened (before the session is registered)."""
    entries, history, updates = read_journal(store, session_id, capabilities)
    return Reloaded(entries, history, updates, reopen_journal(store, session_id))


def read_journal(
    store: SessionStore, session_id: str, capabilities: ClientCapabilities | None = None
) -> tuple[list[Entry], History, list[dict[str, Any]]]:
    """The journal's entries (all of them, as written), the history and the updates they rebuild
    (the conversation as it stands: what a rewind went back over is left out, `timeline.py`), as
    this client is shown them: the conversation, then its title and last activity
    (`session_info_update`)."""
    path = store.path(session_id)
    caps = capabilities or ClientCapabilities()
    try:
        entries = store.read(session_id)
        updated = datetime.fromtimestamp(path.lstat().st_mtime, UTC).isoformat(timespec="seconds")
        title = session_title(entries)
        info = info_update(**({"title": title} if title else {}), updated_at=updated.replace("+00:00", "Z"))
        try:
            live = Timeline.of(entries).entries
            shown = replay_updates(live, notices=caps.notices, compaction=caps.compaction)
            return entries, History.replay(live), [*shown, info]
        except Exception as exc:  # shapes the entry check let through: still this journal's fault
            log.exception("journal.replay_failed", path=str(path))
            raise JournalCorrupt(
                path, None, f"cannot be replayed ({type(exc).__name__}: {str(exc)[:200]})"
            ) from exc
    except (JournalCorrupt, OSError) as exc:
        raise journal_error(session_id, exc) from None


def reopen_journal(store: SessionStore, session_id: str) -> Journal:
    """The journal, open for the loaded session's next entries."""
    try:
        return store.reopen(session_id)
    except OSError as exc:
        raise journal_error(session_id, JournalWriteFailed(store.path(session_id), exc)) from None


def journal_error(session_id: str, exc: Exception, doing: str = "load") -> RpcError:
    """-32010 for a journal that cannot be read (or written), naming the file (and the line)."""
    log.warning("journal.unusable", session_id=session_id, problem=str(exc))
    data: dict[str, Any] = {"sessionId": session_id, "journal": str(getattr(exc, "path", ""))}
    if isinstance(exc, JournalCorrupt) and exc.line is not None:
        data["line"] = exc.line
    message = str(exc)
    if isinstance(exc, OSError) and not isinstance(exc, JournalWriteFailed):
        message = f"cannot read its journal: {exc.strerror or exc}"
    return RpcError.journal_error(f"Cannot {doing} session {session_id}: {message}", data)
