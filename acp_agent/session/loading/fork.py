"""session/fork and `/fork`: a new journal holding a copy of another session's conversation.

The copy is the source's conversation as it stands (its rewinds applied, `timeline.py`), whole or
through the end of one prompt's turn, with the source's current options (mode, model, effort,
loop, web: the settings journaled after the cut come along, as a rewind keeps them) and a title of
its own. The new journal gets its own header (the fork's cwd and roots) and is written whole before
it is named (`SessionStore.create_whole`); the source's journal is only read, never opened for
writing. A turn the source is running is not copied: the fork holds the history as of the last
finished turn.
"""

from __future__ import annotations

from acp_agent.journal.store import JournalCorrupt, SessionStore
from acp_agent.journal.timeline import FILE_HISTORY, SETTINGS, PromptNotFound, Timeline
from acp_agent.journal.titles import TITLE_CHARS, session_title
from acp_agent.session.loading.reload import journal_error
from acp_agent.turn.journal.entries import (
    AssistantEntry,
    ClearingEntry,
    CompactionEntry,
    EffortEntry,
    Entry,
    LoopEntry,
    MetaEntry,
    ModeEntry,
    ModelEntry,
    NoticeEntry,
    PlanChangedEntry,
    PromptEntry,
    RewindEntry,
    RollbackEntry,
    RootsEntry,
    ShownCallEntry,
    SteeringEntry,
    StyleEntry,
    TitleEntry,
    ToolResultEntry,
    ToolStartedEntry,
    TurnEntry,
    UserEntry,
    WebEntry,
)

__all__ = ["COPIED", "NOT_COPIED", "fork_entries", "fork_journal", "fork_title"]

COPIED = (
    PromptEntry,
    SteeringEntry,
    UserEntry,
    AssistantEntry,
    ToolStartedEntry,
    ToolResultEntry,
    ShownCallEntry,
    RollbackEntry,
    CompactionEntry,
    ClearingEntry,
    NoticeEntry,
    PlanChangedEntry,
    TurnEntry,
    ModeEntry,
    ModelEntry,
    EffortEntry,
    LoopEntry,
    WebEntry,
    StyleEntry,
)
"""What a fork copies: the conversation (what `History.replay` and session/load's replay read)
and the options (what `SessionOptions.restore` reads)."""
NOT_COPIED = (MetaEntry, RootsEntry, TitleEntry, RewindEntry, *FILE_HISTORY)
"""The source's own header, roots and names (a fork has its own), its rewinds (applied already:
the fork copies the conversation as it stands), and its checkpoints (the workspace's history is
the source's: the fork has no store for them, so its `/rewind` starts from the fork). Every
entry kind is in one of the two (`tests/unit/test_fork_entries.py`): a new kind is copied or not on
purpose, never by default."""


def fork_entries(entries: list[Entry], *, through: int | None = None, running: bool = False) -> list[Entry]:
    """What a fork of a journal holding `entries` copies: the conversation through the end of
    prompt `through`'s turn (1-based, as `/rewind` and `/fork` number them; None: all of it), then
    the settings journaled after that; with `running`, the source's last prompt, still running
    (it has no turn record yet), is left out with what followed it.

    Raises:
        PromptNotFound: there is no such prompt, or it has not finished yet.
    """
    timeline = Timeline.of(entries)
    conversation = timeline.entries
    end = len(conversation)
    last = timeline.prompts[-1] if timeline.prompts else None
    if running and last is not None and not any(isinstance(e, TurnEntry) for e in conversation[last.start :]):
        end = last.start
    if through is not None:
        span = timeline.span(through)
        if span.start >= end:
            raise PromptNotFound(f"prompt {through} of this session is still running; fork it once it ends")
        end = span.end
    kept = conversation[:end] + [e for e in conversation[end:] if isinstance(e, SETTINGS)]
    return [e for e in kept if isinstance(e, COPIED)]


def fork_title(entries: list[Entry]) -> str | None:
    """The fork's title: the source's, marked as a fork (None: the source has none yet)."""
    title = session_title(entries)
    return None if title is None else f"{title[: TITLE_CHARS - 7].rstrip()} (fork)"


def fork_journal(
    store: SessionStore,
    source_id: str,
    fork_id: str,
    cwd: str,
    roots: tuple[str, ...],
    *,
    through: int | None = None,
    running: bool = False,
) -> None:
    """Write the fork's journal from the source's (`fork_entries`), with its title.

    Raises:
        PromptNotFound: as `fork_entries`.
        RpcError: -32010 when the source cannot be read or the fork cannot be written.
    """
    try:
        entries = store.read(source_id)
        copied = fork_entries(entries, through=through, running=running)
        title = fork_title(entries)
        if title is not None:
            copied.append(TitleEntry(title))
        store.create_whole(fork_id, cwd, roots, copied)
    except PromptNotFound:
        raise
    except (JournalCorrupt, OSError) as exc:
        raise journal_error(source_id, exc, "fork") from None
