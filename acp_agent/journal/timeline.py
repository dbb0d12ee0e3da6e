"""Where each prompt starts in a session's journal: the one answer to "the history up to before
prompt N", for `/rewind`, `_session/rewind` and `session/fork`.

A journal is append-only, so a rewind does not remove the prompts it goes back over: it journals
a `RewindEntry` naming the prompt, and every reader of the conversation reads the journal through
`Timeline`, which leaves out what a rewind went back over. Prompts are numbered from 1 in the
order the user sees them now: after `/rewind 2`, the next prompt is prompt 2 again.

What a cut keeps: the session's settings journaled after the prompt (its header, roots, title,
mode, model, effort, loop, web choice) stay, in order; they are the session's, not the
conversation's. Everything else from the prompt on (messages, tool calls, notices, plans,
compactions, clearings, turn records, the file checkpoints of those turns) is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import structlog

from acp_agent.errors import AgentError
from acp_agent.turn.journal.entries import (
    ChangesEntry,
    CheckpointEntry,
    EffortEntry,
    Entry,
    LoopEntry,
    MetaEntry,
    ModeEntry,
    ModelEntry,
    PromptEntry,
    RewindEntry,
    RewoundEntry,
    RootsEntry,
    StyleEntry,
    TitleEntry,
    WebEntry,
)

__all__ = ["PromptNotFound", "PromptSpan", "Timeline", "interrupted_rewind"]

log = structlog.get_logger(__name__)

SETTINGS = (
    MetaEntry,
    RootsEntry,
    TitleEntry,
    ModeEntry,
    ModelEntry,
    EffortEntry,
    LoopEntry,
    WebEntry,
    StyleEntry,
)
"""The entry kinds a rewind keeps: the session's settings, not its conversation."""
FILE_HISTORY = (CheckpointEntry, ChangesEntry, RewoundEntry)
"""What the session did to the files: read from the journal as written (`rewind.py`), never part
of the conversation (a fork copying it would name another session's checkpoints)."""


class PromptNotFound(AgentError, LookupError):
    """No prompt of that number (or message id) in the session as it stands."""


@dataclass(frozen=True, slots=True)
class PromptSpan:
    """One prompt of the session as it stands.

    `number` counts from 1 as `/rewind` lists them; `start` is where its `PromptEntry` sits in
    `Timeline.entries` (and `end` where the next prompt's does, or the end); `raw` is where it sits
    in the journal as read, and `ordinal` which `PromptEntry` of the journal it is (from 0, counting
    the rewound ones too): what a `RewindEntry` names.
    """

    number: int
    start: int
    end: int
    raw: int
    ordinal: int
    prompt: PromptEntry


class Timeline:
    """A journal's entries with its rewinds applied, and where each remaining prompt starts."""

    def __init__(self, entries: list[Entry], prompts: list[PromptSpan]) -> None:
        self.entries = entries
        """The entries of the conversation as it stands (no rewind, and none of the file
        history: checkpoints, changes): what `History.replay`, session/load's replay and a fork
        read."""
        self.prompts = prompts

    @classmethod
    def of(cls, journal: Iterable[Entry]) -> Timeline:
        """The timeline of a journal's entries, in the order they were written."""
        live: list[Entry] = []
        starts: list[tuple[int, int, int, PromptEntry]] = []  # (live index, raw index, ordinal, entry)
        ordinal = 0
        for raw, entry in enumerate(journal):
            if isinstance(entry, PromptEntry):
                starts.append((len(live), raw, ordinal, entry))
                ordinal += 1
                live.append(entry)
            elif isinstance(entry, FILE_HISTORY):
                continue
            elif isinstance(entry, RewindEntry):
                if entry.scope == "files":
                    continue
                at = next((i for i, s in enumerate(starts) if s[2] == entry.prompt), None)
                if at is None:  # a prompt already rewound over, or none such: nothing to cut
                    log.warning("journal.rewind_target_missing", prompt=entry.prompt)
                    continue
                cut = starts[at][0]
                live[cut:] = [e for e in live[cut:] if isinstance(e, SETTINGS)]
                del starts[at:]
            else:
                live.append(entry)
        ends = [s[0] for s in starts[1:]] + ([len(live)] if starts else [])
        spans = [
            PromptSpan(number, start, end, raw, ordinal, entry)
            for number, ((start, raw, ordinal, entry), end) in enumerate(zip(starts, ends, strict=True), 1)
        ]
        return cls(live, spans)

    def span(self, number: int) -> PromptSpan:
        """Prompt `number` (from 1).

        Raises:
            PromptNotFound: the session has no such prompt (now: a rewound one is gone).
        """
        if not 1 <= number <= len(self.prompts):
            have = f"prompts 1 to {len(self.prompts)}" if self.prompts else "no prompt yet"
            raise PromptNotFound(f"there is no prompt {number} in this session (it has {have})")
        return self.prompts[number - 1]

    def start_of(self, number: int) -> int:
        """Where prompt `number` starts in `entries`: the entries before it are the session as it
        was before that prompt (`History.replay(timeline.entries[:start])`).

        Raises:
            PromptNotFound: as `span`.
        """
        return self.span(number).start

    def before(self, number: int) -> list[Entry]:
        """The entries of the session up to before prompt `number` (settings journaled later are
        not among them: the caller adds them if it wants the session's current settings)."""
        return self.entries[: self.start_of(number)]


def interrupted_rewind(entries: Sequence[Entry]) -> RewindEntry | None:
    """The last rewind, if a crash stopped it before its files were all back (no `RewoundEntry`
    after it): session/load finishes it (`rewind.py:finish_interrupted`)."""
    for entry in reversed(entries):
        if isinstance(entry, RewoundEntry):
            return None
        if isinstance(entry, RewindEntry):
            return entry if entry.restore else None
    return None
