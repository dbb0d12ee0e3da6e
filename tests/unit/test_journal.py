"""The journal file: what is written, and which appends wait for the disk (fsync)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_agent.journal.store import JournalWriteFailed, SessionStore
from acp_agent.turn.context.history import History, tool_result
from acp_agent.turn.journal.entries import AssistantEntry, ModeEntry, NoticeEntry, ToolResultEntry, TurnEntry

ID1, ID2, ID3 = ("sess_" + digit * 32 for digit in "123")


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts fsync calls (and still makes them)."""
    calls: list[int] = []
    real = os.fsync

    def counting(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    return calls


def test_the_header_and_an_assistant_reply_are_synced_by_the_entry_after_them(
    tmp_path: Path, fsyncs: list[int]
) -> None:
    store = SessionStore.open(tmp_path, keep_days=None)
    journal = store.create(ID1, str(tmp_path))
    assert fsyncs == []  # the header waits for the first prompt (session/new never waits on the disk)
    history = History(journal=journal.append)
    history.add_prompt([{"type": "text", "text": "go"}])
    history.add_assistant([{"type": "tool_use", "id": "tu_1", "name": "read_file", "input": {}}])
    assert len(fsyncs) == 1  # the prompt, with the header before it; the reply waits for what follows it
    history.note(ToolResultEntry(tool_result("tu_1", "ok")))
    assert len(fsyncs) == 2
    kinds = [e.type for e in store.read(ID1)]
    assert kinds == ["meta", "prompt", "assistant", "tool_result"]
    assert History.replay(store.read(ID1)).messages == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "tu_1", "name": "read_file", "input": {}}],
        },
        {"role": "user", "content": [tool_result("tu_1", "ok")]},
    ]


def test_every_other_entry_is_synced_before_append_returns(tmp_path: Path, fsyncs: list[int]) -> None:
    store = SessionStore.open(tmp_path, keep_days=None)
    journal = store.create(ID2, str(tmp_path))
    history = History(journal=journal.append)
    before = len(fsyncs)
    history.add_prompt([{"type": "text", "text": "hi"}])
    history.note(ModeEntry("plan"))
    history.note(TurnEntry({"stopReason": "end_turn"}))
    assert len(fsyncs) - before == 3


def test_a_write_to_a_closed_journal_is_an_error_and_writes_nothing(tmp_path: Path) -> None:
    """A turn that outlives its session (closed or deleted) hears it: nothing is dropped silently."""
    store = SessionStore.open(tmp_path, keep_days=None)
    journal = store.create(ID3, str(tmp_path))
    journal.close()
    with pytest.raises(JournalWriteFailed, match="the session was closed"):
        journal.append(ModeEntry("plan"))
    with pytest.raises(JournalWriteFailed, match=ID3):
        journal.append(AssistantEntry([]), sync=False)
    assert [e.type for e in store.read(ID3)] == ["meta"]


def test_a_torn_tail_is_cut_before_the_next_append(tmp_path: Path) -> None:
    store = SessionStore.open(tmp_path, keep_days=None)
    store.create(ID1, str(tmp_path))
    with (tmp_path / f"{ID1}.jsonl").open("a") as f:
        f.write('{"type": "notice", "text": "half')
    assert [e.type for e in store.read(ID1)] == ["meta"]
    store.reopen(ID1).append(NoticeEntry("whole"))
    assert [getattr(e, "text", None) for e in store.read(ID1)] == [None, "whole"]


def test_only_the_agents_own_ids_name_a_journal(tmp_path: Path) -> None:
    store = SessionStore.open(tmp_path, keep_days=None)
    store.create(ID1, str(tmp_path))
    for odd in (f"{ID1}/../x", "sess_1", "a" * 300, "../" + ID1):
        assert not store.exists(odd)
        store.delete(odd)
        with pytest.raises(ValueError, match="not a session id"):
            store.read(odd)
    assert store.exists(ID1)
