"""What a fork copies of a journal (`session/loading/fork.py`): the conversation as it stands,
through a prompt's turn, with the settings journaled since, without the source's header, roots,
title or a turn still running."""

from __future__ import annotations

from typing import Any

import pytest

from acp_agent.journal.timeline import PromptNotFound
from acp_agent.session.loading.fork import COPIED, NOT_COPIED, fork_entries, fork_title
from acp_agent.turn.context.history import History
from acp_agent.turn.journal.entries import (
    ENTRY_CLASSES,
    AssistantEntry,
    Entry,
    MetaEntry,
    ModeEntry,
    PromptEntry,
    RewindEntry,
    RootsEntry,
    TitleEntry,
    TurnEntry,
)

HEADER = MetaEntry(1, "sess_" + "ab" * 16, "/w", "2026-01-01T00:00:00Z")


def text(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


def turn(prompt: str, answer: str, *, finished: bool = True) -> list[Entry]:
    entries: list[Entry] = [PromptEntry(text(prompt), text(prompt)), AssistantEntry(text(answer))]
    return [*entries, TurnEntry({"turnId": prompt})] if finished else entries


def said(entries: list[Entry]) -> list[str]:
    return [b["text"] for m in History.replay(entries).messages for b in m["content"]]


def test_a_fork_through_prompt_n_holds_prompts_1_to_n_and_the_settings_journaled_since() -> None:
    entries = [
        HEADER,
        *turn("p1", "a1"),
        ModeEntry("plan"),
        *turn("p2", "a2"),
        TitleEntry("renamed"),
        RootsEntry(("/extra",)),
        ModeEntry("acceptEdits"),
    ]
    copied = fork_entries(entries, through=1)
    assert said(copied) == ["p1", "a1"]
    assert [e.mode_id for e in copied if isinstance(e, ModeEntry)] == ["plan", "acceptEdits"]
    assert not any(isinstance(e, MetaEntry | TitleEntry | RootsEntry) for e in copied)
    assert said(fork_entries(entries)) == ["p1", "a1", "p2", "a2"]
    assert fork_title(entries) == "renamed (fork)"
    assert fork_title([HEADER]) is None


def test_a_rewound_conversation_is_copied_as_it_stands() -> None:
    entries = [HEADER, *turn("p1", "a1"), *turn("p2", "a2"), RewindEntry(1, "chat"), *turn("p2b", "a2b")]
    assert said(fork_entries(entries)) == ["p1", "a1", "p2b", "a2b"]
    assert said(fork_entries(entries, through=2)) == ["p1", "a1", "p2b", "a2b"]
    assert not any(isinstance(e, RewindEntry) for e in fork_entries(entries))


def test_a_running_turn_is_not_copied_and_cannot_be_named() -> None:
    entries = [HEADER, *turn("p1", "a1"), *turn("p2", "partial", finished=False)]
    assert said(fork_entries(entries, running=True)) == ["p1", "a1"]
    assert said(fork_entries(entries, through=1, running=True)) == ["p1", "a1"]
    with pytest.raises(PromptNotFound, match="still running"):
        fork_entries(entries, through=2, running=True)
    # Not running (a crash left it without its record): it is history like any other.
    assert said(fork_entries(entries))[-1] == "partial"


@pytest.mark.parametrize("through", [0, 3, -1])
def test_a_prompt_the_session_does_not_have_is_refused(through: int) -> None:
    with pytest.raises(PromptNotFound, match="no prompt"):
        fork_entries([HEADER, *turn("p1", "a1"), *turn("p2", "a2")], through=through)


def test_every_entry_kind_is_copied_by_a_fork_or_left_out_on_purpose() -> None:
    """A new kind of entry (a checkpoint of the workspace, say: the fork has no store of its own)
    must be put in one of the two lists, so a fork never copies it, or drops it, by default."""
    copied, left = set(COPIED), set(NOT_COPIED)
    assert not copied & left
    assert copied | left == set(ENTRY_CLASSES.values())
