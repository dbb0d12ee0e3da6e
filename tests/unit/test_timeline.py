"""Where prompt N starts in a journal, with its rewinds applied (`journal/timeline.py`)."""

from __future__ import annotations

from typing import Any

import pytest

from acp_agent.journal.store import SessionStore
from acp_agent.journal.timeline import PromptNotFound, Timeline
from acp_agent.session.loading.reload import read_journal
from acp_agent.turn.context.history import History
from acp_agent.turn.journal.entries import (
    AssistantEntry,
    ChangesEntry,
    CheckpointEntry,
    Entry,
    FileChange,
    FileState,
    MetaEntry,
    ModeEntry,
    NoticeEntry,
    PromptEntry,
    RewindEntry,
    RewoundEntry,
    RootTree,
    TurnEntry,
)

SESSION = "sess_" + "ab" * 16


def text(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


class Recorder:
    """A session's journal in memory: a real History writes to it."""

    def __init__(self) -> None:
        self.entries: list[Entry] = [MetaEntry(1, SESSION, "/w", "2026-01-01T00:00:00Z")]
        self.history = History(journal=self.write)

    def write(self, entry: Entry, *, sync: bool = True) -> None:
        self.entries.append(entry)

    def rewind(self, entry: RewindEntry) -> None:
        """Journal a rewind and go on from the history it leaves, as a session does."""
        self.write(entry)
        self.history = History(History.replay(Timeline.of(self.entries).entries).messages, self.write)

    def turn(self, prompt: str, answer: str) -> list[dict[str, Any]]:
        """One prompt and its answer; returns the history as it was before the prompt."""
        before = [dict(m, content=list(m["content"])) for m in self.history.messages]
        self.history.add_prompt(text(prompt), text(prompt))
        self.history.add_assistant(text(answer))
        self.write(TurnEntry({"turnId": prompt}))
        return before


def test_prompts_are_numbered_from_one_and_before_gives_the_history_before_each() -> None:
    journal = Recorder()
    befores = [journal.turn(f"p{i}", f"a{i}") for i in range(1, 4)]
    timeline = Timeline.of(journal.entries)
    assert [p.number for p in timeline.prompts] == [1, 2, 3]
    for number, before in enumerate(befores, 1):
        start = timeline.start_of(number)
        assert isinstance(timeline.entries[start], PromptEntry)
        assert timeline.entries[start].prompt == text(f"p{number}")
        assert History.replay(timeline.before(number)).messages == before
    assert timeline.prompts[1].end == timeline.prompts[2].start
    assert timeline.prompts[2].end == len(timeline.entries)


def test_a_rewind_cuts_the_conversation_but_keeps_the_settings_journaled_since() -> None:
    journal = Recorder()
    journal.turn("p1", "a1")
    before_two = journal.turn("p2", "a2")
    journal.write(ModeEntry("plan"))
    journal.write(NoticeEntry("a limit"))
    journal.turn("p3", "a3")
    journal.write(RewindEntry(prompt=1))  # the second prompt ever written
    timeline = Timeline.of(journal.entries)
    assert [p.prompt.prompt for p in timeline.prompts] == [text("p1")]
    assert History.replay(timeline.entries).messages == before_two
    assert ModeEntry("plan") in timeline.entries
    assert NoticeEntry("a limit") not in timeline.entries
    assert not any(isinstance(e, RewindEntry) for e in timeline.entries)


def test_prompts_after_a_rewind_take_the_numbers_again_and_can_be_rewound_to() -> None:
    journal = Recorder()
    journal.turn("p1", "a1")
    journal.turn("p2", "a2")
    journal.rewind(RewindEntry(prompt=1))
    before_new_two = journal.turn("p2 again", "b2")
    journal.turn("p3 new", "b3")
    timeline = Timeline.of(journal.entries)
    assert [p.prompt.prompt[0]["text"] for p in timeline.prompts] == ["p1", "p2 again", "p3 new"]
    assert [p.ordinal for p in timeline.prompts] == [0, 2, 3]
    assert timeline.prompts[1].raw == journal.entries.index(timeline.prompts[1].prompt)
    journal.rewind(RewindEntry(prompt=timeline.span(3).ordinal))
    journal.rewind(RewindEntry(prompt=timeline.span(2).ordinal, scope="chat"))
    again = Timeline.of(journal.entries)
    assert [p.number for p in again.prompts] == [1]
    assert History.replay(again.entries).messages == before_new_two


def test_a_files_only_rewind_leaves_the_conversation_whole() -> None:
    journal = Recorder()
    journal.turn("p1", "a1")
    journal.turn("p2", "a2")
    journal.write(RewindEntry(prompt=0, scope="files"))
    timeline = Timeline.of(journal.entries)
    assert len(timeline.prompts) == 2
    assert History.replay(timeline.entries).messages == journal.history.messages


def test_a_prompt_that_does_not_exist_is_named_in_the_error() -> None:
    journal = Recorder()
    journal.turn("p1", "a1")
    timeline = Timeline.of(journal.entries)
    for number in (0, 2, -1):
        with pytest.raises(PromptNotFound, match=rf"no prompt {number} .*prompts 1 to 1"):
            timeline.start_of(number)
    with pytest.raises(PromptNotFound, match="no prompt yet"):
        Timeline.of(journal.entries[:1]).span(1)


def test_a_rewind_naming_no_live_prompt_cuts_nothing() -> None:
    journal = Recorder()
    journal.turn("p1", "a1")
    journal.write(RewindEntry(prompt=7))
    assert Timeline.of(journal.entries).entries == [
        e for e in journal.entries if not isinstance(e, RewindEntry)
    ]


def test_session_load_reads_the_rewound_conversation(tmp_path: Any) -> None:
    store = SessionStore(tmp_path)
    journal = store.create(SESSION, "/w")
    history = History(journal=journal.append)
    history.add_prompt(text("p1"), text("p1"))
    history.add_assistant([{"type": "text", "text": "a1"}])
    before = [dict(m, content=list(m["content"])) for m in history.messages]
    history.add_prompt(text("p2"), text("p2"))
    history.add_assistant([{"type": "text", "text": "a2"}])
    journal.append(RewindEntry(prompt=1))
    entries, loaded, updates = read_journal(store, SESSION)
    assert loaded.messages == before
    assert AssistantEntry([{"type": "text", "text": "a2"}]) in entries  # the journal keeps it all
    shown = [u["content"].get("text") for u in updates if u.get("sessionUpdate", "").endswith("chunk")]
    assert shown == ["p1", "a1"]


def test_the_file_history_is_not_part_of_the_conversation() -> None:
    """A fork copies `entries`: another session's checkpoints must not come with them."""
    journal = Recorder()
    journal.turn("p1", "a1")
    kept = [
        CheckpointEntry(trees=(RootTree("/w", "t" * 40),)),
        ChangesEntry(0, (FileChange("/w/a", None, FileState("b" * 40, "100644")),)),
        RewoundEntry(),
    ]
    journal.entries.extend(kept)
    timeline = Timeline.of(journal.entries)
    assert not [e for e in timeline.entries if e in kept]
    assert History.replay(timeline.entries).messages == journal.history.messages
