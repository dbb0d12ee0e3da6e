"""The journal's vocabulary: journals of the 0.1.0 release still load, lines round-trip, the
schema describes them, and a duplicated journal is refused at the line where it repeats."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from acp_agent.journal.store import JournalCorrupt, SessionStore
from acp_agent.session.loading.reload import read_journal
from acp_agent.turn.context.history import tool_result
from acp_agent.turn.journal.entries import (
    ENTRY_CLASSES,
    AssistantEntry,
    LoopEntry,
    MetaEntry,
    NoticeEntry,
    ShownDiff,
    ShownLocation,
    ToolCallShown,
    ToolResultEntry,
)
from acp_agent.turn.journal.lines import EntryProblem, entry_json, read_entry

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "journals" / "v0.1.0"
SESSION = "sess_9bc54f280c884fddabd097bbf928bb38"
SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "journal-entry.schema.json"


def blank_ids(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**u, "messageId": ""} if "messageId" in u else u for u in updates]


def fixture_lines() -> list[bytes]:
    return (FIXTURE / f"{SESSION}.jsonl").read_bytes().splitlines()


NEWER_KINDS = {"loop", "web", "title", "roots", "clearing", "shown_call", "output_style"} | {
    "rewind", "rewound", "checkpoint", "changes", "steering"
}  # fmt: skip
"""Entry kinds added after 0.1.0 (that release journaled neither the loop nor the web choice, and
knew no rename, no additional roots, no clearing of old tool results, no command `!` calls, no
output style, no checkpoints or rewinds and no steering)."""


def test_the_fixture_holds_every_kind_the_release_wrote() -> None:
    kinds = {json.loads(line)["type"] for line in fixture_lines()}
    assert kinds == set(ENTRY_CLASSES) - NEWER_KINDS


def test_a_journal_of_the_010_release_loads_to_the_same_history_and_replay() -> None:
    """What `History.replay` and session/load's replay made of it with the 0.1.0 code, committed
    beside it, is what they make of it now (the mode comes from the options' restore)."""
    entries, history, updates = read_journal(SessionStore(FIXTURE), SESSION)
    assert len(entries) == len(fixture_lines())
    assert history.messages == json.loads((FIXTURE / "history.json").read_text())
    expected = json.loads((FIXTURE / "replayed.json").read_text())
    assert expected[-1] == {"sessionUpdate": "current_mode_update", "currentModeId": "acceptEdits"}
    *shown, info = updates  # new: the title and the last activity come last
    assert info["sessionUpdate"] == "session_info_update" and info["title"] == "What does notes.txt say?"
    assert blank_ids(named_calls(shown, entries)) == expected[:-1]


def named_calls(updates: list[dict[str, Any]], entries: list[Any]) -> list[dict[str, Any]]:
    """The updates without each tool call's `name` (new since the fixture was made), once each
    name is checked to be the tool's own, from its tool_use."""
    names = {
        b["id"]: b["name"]
        for e in entries
        if isinstance(e, AssistantEntry)
        for b in e.blocks
        if b["type"] == "tool_use"
    }
    out = []
    for update in updates:
        if update["sessionUpdate"] == "tool_call" and update["toolCallId"] in names:
            assert update.pop("name") == names[update["toolCallId"]]
        out.append(update)
    return out


def test_every_line_round_trips_and_matches_the_schema() -> None:
    schema = json.loads(SCHEMA.read_text())
    checker = jsonschema.validators.validator_for(schema)  # what `jsonschema.validate` picks
    checker.check_schema(schema)
    validator = checker(schema)  # built once: `jsonschema.validate` checks the schema on every call
    for number, line in enumerate(fixture_lines(), 1):
        validator.validate(json.loads(line))
        entry = read_entry(line)
        written = json.dumps(entry_json(entry), ensure_ascii=False, separators=(",", ":"))
        assert read_entry(written) == entry, number
        validator.validate(json.loads(written))


def test_lines_are_written_as_before_less_the_empty_fields_of_shown() -> None:
    """The format on disk did not change: every line the release wrote is written byte for byte
    the same, except a tool result's empty `locations`/`diffs` and null `rawOutput`, now left out."""
    for line in fixture_lines():
        old = json.loads(line)
        if old["type"] == "tool_result":
            shown = old["shown"]
            for key, empty in (("locations", []), ("diffs", []), ("rawOutput", None)):
                if shown.get(key, empty) == empty:
                    shown.pop(key, None)
        written = json.dumps(entry_json(read_entry(line)), ensure_ascii=False, separators=(",", ":"))
        assert written == json.dumps(old, ensure_ascii=False, separators=(",", ":"))


def test_the_shown_part_keeps_what_the_editor_sees() -> None:
    entry = ToolResultEntry(
        tool_result("t1", "done"),
        ToolCallShown(
            title="Edit a.txt",
            kind="edit",
            status="completed",
            raw_input={"path": "a.txt"},
            text="done",
            locations=(ShownLocation("/w/a.txt", 2),),
            diffs=(ShownDiff("/w/a.txt", None, "new\n"),),
        ),
    )
    line = json.dumps(entry_json(entry))
    assert json.loads(line)["shown"]["diffs"] == [["/w/a.txt", None, "new\n"]]
    assert read_entry(line) == entry


def test_a_kind_this_agent_does_not_know_is_skipped_and_the_rest_loads(tmp_path: Path) -> None:
    journal = SessionStore(tmp_path).create(SESSION, str(tmp_path))
    journal.append(NoticeEntry("before"))
    with (tmp_path / f"{SESSION}.jsonl").open("a") as f:
        f.write('{"type": "bookmark", "label": "from a newer agent"}\n')
    journal.append(LoopEntry("verify"))
    entries = SessionStore(tmp_path).read(SESSION)
    assert [type(e) for e in entries] == [MetaEntry, NoticeEntry, LoopEntry]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"type": "mode"}', "the mode entry's modeId: Field required"),
        ('{"type": "rollback", "messages": -1, "blocks": 0}', "the rollback entry's messages"),
        ('{"type": "tool_result", "block": {"type": "text", "text": "x"}}', "not a tool_result block"),
        ("[1, 2]", "a JSON array, not an entry"),
        ("{not json", "not a JSON line"),
    ],
)
def test_a_line_of_the_wrong_shape_says_what_is_wrong(line: str, problem: str) -> None:
    with pytest.raises(EntryProblem, match=problem):
        read_entry(line)


def test_a_journal_copied_into_itself_is_refused_at_the_first_repeated_line(tmp_path: Path) -> None:
    """Every entry twice would send the API every tool_use id twice (a 400 on every request)."""
    lines = fixture_lines()
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_bytes(b"\n".join([*lines, *lines]) + b"\n")
    with pytest.raises(JournalCorrupt, match=rf"line {len(lines) + 1}: a second session header") as raised:
        SessionStore(tmp_path).read(SESSION)
    assert raised.value.line == len(lines) + 1
    doubled = [line for line in lines for _ in range(2)]  # each line twice in a row
    path.write_bytes(b"\n".join(doubled) + b"\n")
    with pytest.raises(JournalCorrupt, match=r"a second session header"):
        SessionStore(tmp_path).read(SESSION)
    path.write_bytes(b"\n".join([*lines, *lines[2:]]) + b"\n")  # the body again, not the header
    with pytest.raises(JournalCorrupt, match=r"the tool_use 't_read' appears again \(first at line 4\)"):
        SessionStore(tmp_path).read(SESSION)


def test_the_fixture_loads_in_process_with_its_choices_restored(tmp_path: Path) -> None:
    from acp_agent.config import Config
    from acp_agent.session.manager import SessionManager

    class Requester:
        async def notify(self, method: str, params: Any) -> None: ...

        async def request(self, method: str, params: Any, *, timeout: float | None = None) -> Any: ...

    async def no_model() -> Any:
        raise AssertionError("a load needs no model")

    shutil.copy(FIXTURE / f"{SESSION}.jsonl", tmp_path)
    manager = SessionManager(
        Config(model="claude-test-1"), Requester(), no_model, store=SessionStore(tmp_path)
    )
    session, updates, _ = manager.load(SESSION, str(tmp_path), {})
    assert (session.mode, session.model, session.loop.loop) == ("acceptEdits", "claude-test-1", "tools")
    assert updates[-1] == {"sessionUpdate": "current_mode_update", "currentModeId": "acceptEdits"}
