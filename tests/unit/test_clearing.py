"""Old tool results leave what a long session sends, at a high-water mark, and only there
(`turn/context/clearing.py`, `turn/context/cleared.py`): what is cleared and what never is, the
notes, the thinking blocks that go with a clearing, and the same view rebuilt from the journal."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from acp_agent.errors import LimitsError
from acp_agent.turn.context.clearing import clear_old_results, note_for, status, with_meta
from acp_agent.turn.context.history import History, tool_result
from acp_agent.turn.journal.entries import ClearingEntry, Entry
from acp_agent.turn.journal.lines import entry_json, read_entry
from acp_agent.turn.settings import RunnerSettings

SETTINGS = RunnerSettings("claude-test-1", 1000, clear_results_at=10_000, clear_results_keep=2_000)
BIG = "x" * 4_000  # about 1,000 tokens


def thinking(text: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": f"sig-{text}"}


def use(id_: str, tool: str = "read_file", **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": id_, "name": tool, "input": args or {"path": f"src/{id_}.py"}}


def session(
    steps: list[tuple[dict[str, Any], dict[str, Any]]],
    journal: list[Entry] | None = None,
    *,
    thoughts: bool = False,
) -> History:
    """A prompt, then one (tool_use, tool_result) step per reply (`thoughts`: each reply with a
    thinking block first, `t0`, `t1`, …)."""
    history = History(journal=None if journal is None else (lambda entry, sync=True: journal.append(entry)))
    history.add_prompt([{"type": "text", "text": "go"}])
    for n, (call, result) in enumerate(steps):
        history.add_assistant([thinking(f"t{n}"), call] if thoughts else [call])
        history.add_user([result])
    return history


def next_prompt(history: History) -> None:
    """The turn ends with an answer and the user asks again: a turn boundary."""
    history.add_assistant([thinking("answer"), {"type": "text", "text": "done"}])
    history.add_prompt([{"type": "text", "text": "next"}])


def reads(count: int, size: str = BIG) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(use(f"r{n}"), tool_result(f"r{n}", size)) for n in range(count)]


def sent_results(history: History) -> dict[str, Any]:
    return {
        b["tool_use_id"]: b["content"]
        for m in history.for_request()
        if m["role"] == "user"
        for b in m["content"]
        if b.get("type") == "tool_result"
    }


def test_below_the_trigger_nothing_changes_and_the_history_is_sent_as_it_is() -> None:
    history = session(reads(8))
    assert clear_old_results(history, 9_999, SETTINGS) == 9_999
    assert history.for_request() is history.messages  # not even copied
    assert clear_old_results(history, 10_000, replace(SETTINGS, clear_results_at=0)) == 10_000
    assert not history.cleared


def test_past_the_trigger_the_oldest_results_become_notes_in_one_step_and_the_latest_stay() -> None:
    history = session(reads(8))
    whole = json.loads(json.dumps(history.messages))
    after = clear_old_results(history, 10_500, SETTINGS)
    sent = sent_results(history)
    # The latest ~2,000 tokens of results stay (r6, r7: 1,000 each); r0-r5 are notes.
    assert [k for k, v in sent.items() if v == BIG] == ["r6", "r7"]
    assert sent["r0"] == (
        "[cleared to save context: the result of read_file src/r0.py (4.0 KB); read it again if you need it]"
    )
    assert 10_500 - after == sum(1_000 - len(sent[f"r{n}"]) // 4 for n in range(6))
    assert history.messages == whole  # the history keeps every result whole
    assert history.cleared.results() == 6 and history.cleared.clearings == 1
    # Until the next clearing, the same prefix: nothing more goes while little could.
    history.add_assistant([use("r8")])
    history.add_user([tool_result("r8", BIG)])
    before = history.for_request()
    assert clear_old_results(history, 10_100, SETTINGS) == 10_100
    assert history.for_request() == before


def test_the_last_batch_errors_the_plan_answers_skills_and_small_results_are_never_cleared() -> None:
    steps = [
        (use("plan", "update_plan", entries=[]), tool_result("plan", BIG)),
        (use("ask", "ask_user", question="?"), tool_result("ask", BIG)),
        (use("skill", "skill", name="review"), tool_result("skill", BIG)),
        (use("err"), tool_result("err", BIG, is_error=True)),
        (use("small"), tool_result("small", "y" * 900)),
        *reads(6),
    ]
    steps[-1] = (use("last"), tool_result("last", "z" * 40_000))  # alone over the keep budget
    history = session(steps)
    clear_old_results(history, 20_000, SETTINGS)
    sent = sent_results(history)
    assert {k for k, v in sent.items() if str(v).startswith("[cleared")} == {f"r{n}" for n in range(5)}
    assert sent["last"] == "z" * 40_000


def test_a_clearing_that_would_free_little_waits_until_it_frees_half_of_the_way_down() -> None:
    history = session(reads(4))  # r0, r1 are old, about 2,000 tokens: under (10,000 - 2,000) / 2
    assert clear_old_results(history, 10_000, SETTINGS) == 10_000 and not history.cleared
    history = session(reads(8))  # r0-r5: about 6,000 tokens
    assert clear_old_results(history, 10_000, SETTINGS) < 5_000


def test_the_keep_budget_is_at_most_half_the_trigger() -> None:
    history = session(reads(12))
    clear_old_results(history, 10_000, replace(SETTINGS, clear_results_keep=1_000_000))
    assert [k for k, v in sent_results(history).items() if v == BIG] == [f"r{n}" for n in range(7, 12)]


def test_thinking_after_the_first_cleared_result_leaves_the_requests_and_later_thinking_stays() -> None:
    history = session(reads(8), thoughts=True)
    next_prompt(history)
    clear_old_results(history, 10_500, SETTINGS)
    sent = history.for_request()
    kept = [
        b["thinking"]
        for m in sent
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "thinking"
    ]
    assert kept == ["t0"]  # r0, the first cleared result, answers the first reply
    assert sent[-2]["content"] == [{"type": "text", "text": "done"}]
    history.add_assistant([thinking("after"), use("r8")])
    history.add_user([tool_result("r8", "ok")])
    assert history.for_request()[-2]["content"][0] == thinking("after")  # signed behind the new prefix
    whole = [b for m in history.messages for b in m["content"] if b.get("type") == "thinking"]
    assert len(whole) == 10  # the history keeps them


def test_while_the_current_cycle_holds_thinking_the_clearing_waits_for_the_turn_to_end() -> None:
    """The API wants the thinking of the replies whose results it is sent back as they were."""
    history = session(reads(8), thoughts=True)
    assert clear_old_results(history, 10_500, SETTINGS) == 10_500 and not history.cleared
    history.add_prompt([{"type": "text", "text": "merged after the results"}])  # still that cycle
    assert clear_old_results(history, 10_500, SETTINGS) == 10_500 and not history.cleared
    next_prompt(history)
    assert clear_old_results(history, 10_500, SETTINGS) < 10_500 and history.cleared.results() == 6
    # Without thinking in the cycle, a clearing happens in the middle of a turn.
    history = session(reads(8))
    assert clear_old_results(history, 10_500, SETTINGS) < 10_500


def test_a_reply_of_thinking_alone_keeps_a_short_text() -> None:
    history = session(reads(1), thoughts=True)
    history.add_assistant([thinking("alone")])
    history.add_prompt([{"type": "text", "text": "next"}])
    for call, result in reads(8)[1:]:
        history.add_assistant([call])
        history.add_user([result])
    clear_old_results(history, 10_500, SETTINGS)
    assert history.for_request()[3]["content"] == [{"type": "text", "text": "[earlier reasoning omitted]"}]
    assert history.messages[3]["content"] == [thinking("alone")]


def test_the_journal_rebuilds_the_same_view_and_the_entry_round_trips() -> None:
    journal: list[Entry] = []
    history = session(reads(8), journal, thoughts=True)
    next_prompt(history)
    clear_old_results(history, 10_500, SETTINGS)
    [entry] = [e for e in journal if isinstance(e, ClearingEntry)]
    assert (entry.first, entry.messages) == (2, 19) and len(entry.results) == 6
    line = json.dumps(entry_json(entry))
    assert read_entry(line) == entry
    history.add_assistant([thinking("later"), use("r9")])
    history.add_user([tool_result("r9", BIG)])
    read = [read_entry(json.dumps(entry_json(e))) for e in journal]
    replayed = History.replay([e for e in read if e is not None])
    assert replayed.messages == history.messages
    assert replayed.for_request() == history.for_request()
    assert status(replayed, SETTINGS) == status(history, SETTINGS)


@pytest.mark.parametrize(
    ("call", "chars", "images", "note"),
    [
        (
            use("a", "run_command", command="pytest -q tests/"),
            12_345,
            0,
            "the output of run_command `pytest -q tests/` (12.3 KB); run it again if you need it",
        ),
        (
            use("b", "search_text", pattern="def main", path="src"),
            2_000,
            0,
            'the result of search_text "def main" in src (2.0 KB); search again if you need it',
        ),
        (
            use("c", path="shot.png"),
            0,
            1,
            "the result of read_file shot.png (1 image); read it again if you need it",
        ),
        (
            use("d", path="big.py", offset=100, limit=50),
            3_000,
            0,
            "the result of read_file big.py from line 100, 50 lines (3.0 KB); read it again if you need it",
        ),
        (
            use("e", "mcp__db__query", sql="select 1"),
            1_500,
            2,
            'the result of mcp__db__query {"sql": "select 1"} (1.5 KB and 2 images); '
            "call it again if you need it",
        ),
    ],
)
def test_the_note_names_the_call_its_size_and_how_to_get_it_back(
    call: dict[str, Any], chars: int, images: int, note: str
) -> None:
    assert note_for(call, chars, images) == f"[cleared to save context: {note}]"


def test_images_in_a_cleared_result_go_too() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}}
    steps = [(use("shot", path="shot.png"), tool_result("shot", "a screenshot", media=[image])), *reads(8)]
    history = session(steps)
    clear_old_results(history, 10_500, SETTINGS)
    assert "iVBORw0K" not in json.dumps(history.for_request()) and "iVBORw0K" in json.dumps(history.messages)
    assert history.cleared.images == 1


def test_a_session_sets_its_own_trigger_and_keep_or_turns_clearing_off() -> None:
    assert with_meta(SETTINGS, {}) is SETTINGS
    mine = with_meta(SETTINGS, {"clearResultsAt": 50_000, "clearResultsKeep": 5_000, "maxTurnRequests": 3})
    assert (mine.clear_results_at, mine.clear_results_keep) == (50_000, 5_000)
    assert with_meta(SETTINGS, {"clearResultsAt": None}).clear_results_at == 0
    for bad in (-1, 1.5, "100000", True):
        with pytest.raises(LimitsError, match="clearResultsAt"):
            with_meta(SETTINGS, {"clearResultsAt": bad})
    assert status(History(), with_meta(SETTINGS, {"clearResultsAt": 0})) == "nothing yet (clearing: off)"
