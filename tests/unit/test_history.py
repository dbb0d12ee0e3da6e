"""History stays valid for the Messages API at every turn boundary."""

from __future__ import annotations

import json
from typing import Any

from acp_agent.turn.context.history import (
    INTERRUPTED,
    INTERRUPTED_RUNNING,
    History,
    add_note,
    result_text,
    tool_result,
)
from acp_agent.turn.journal.entries import Entry, ToolCallShown, ToolResultEntry
from acp_agent.turn.journal.lines import entry_json, read_entry


def lines(*entries: dict[str, Any]) -> list[Entry]:
    """Journal entries as written on disk, read back as the journal reads them."""
    found = [read_entry(json.dumps(entry)) for entry in entries]
    assert all(entry is not None for entry in found)
    return [entry for entry in found if entry is not None]


def tool_use(id_: str) -> dict:
    return {"type": "tool_use", "id": id_, "name": "read_file", "input": {"path": "a"}}


def test_prompt_after_trailing_tool_results_is_merged_into_that_user_message() -> None:
    history = History()
    history.add_user([{"type": "text", "text": "hi"}])
    history.add_assistant([tool_use("t1")])
    history.add_user([tool_result("t1", "ok")])
    history.add_user([{"type": "text", "text": "next"}])
    assert [m["role"] for m in history.messages] == ["user", "assistant", "user"]
    assert history.messages[-1]["content"][0]["type"] == "tool_result"
    assert history.messages[-1]["content"][1] == {"type": "text", "text": "next"}


def test_repair_answers_every_dangling_tool_use() -> None:
    history = History()
    history.add_user([{"type": "text", "text": "go"}])
    history.add_assistant([{"type": "text", "text": "sure"}, tool_use("a"), tool_use("b")])
    assert history.repair() == 2
    results = history.messages[-1]["content"]
    assert [r["tool_use_id"] for r in results] == ["a", "b"]
    assert all(r["is_error"] for r in results)
    assert history.repair() == 0


def test_refusal_rollback_drops_only_that_prompts_blocks() -> None:
    history = History()
    history.add_user([{"type": "text", "text": "one"}])
    history.add_assistant([tool_use("t1")])
    history.add_user([tool_result("t1", "ok")])
    mark = history.mark()
    history.add_user([{"type": "text", "text": "refused prompt"}])
    history.add_assistant([{"type": "text", "text": "I can't"}])
    history.rollback(mark)
    assert len(history.messages) == 3
    assert history.messages[-1]["content"] == [tool_result("t1", "ok")]


def test_rollback_of_a_fresh_prompt_removes_the_user_message() -> None:
    history = History()
    history.add_user([{"type": "text", "text": "one"}])
    history.add_assistant([{"type": "text", "text": "answer"}])
    mark = history.mark()
    history.add_user([{"type": "text", "text": "two"}])
    history.rollback(mark)
    assert [m["role"] for m in history.messages] == ["user", "assistant"]


def test_empty_assistant_reply_leaves_no_message() -> None:
    history = History()
    history.add_user([{"type": "text", "text": "x"}])
    history.add_assistant([{"type": "text", "text": ""}])
    assert len(history.messages) == 1


def test_pause_turn_continuation_extends_the_same_assistant_message() -> None:
    history = History()
    history.add_user([{"type": "text", "text": "x"}])
    history.add_assistant([{"type": "text", "text": "part one"}])
    history.add_assistant([{"type": "text", "text": "part two"}])
    assert len(history.messages) == 2
    assert [b["text"] for b in history.messages[-1]["content"]] == ["part one", "part two"]


def test_every_block_and_journal_entry_is_made_utf8_encodable() -> None:
    entries: list[dict] = []
    history = History(journal=lambda entry, sync=True: entries.append(entry_json(entry)))
    history.add_prompt([{"type": "text", "text": "lone \ud800"}], [{"type": "text", "text": "lone \ud800"}])
    history.add_assistant([tool_use("t1")])
    history.add_user([tool_result("t1", "caf\udce9.txt")])
    history.note(ToolResultEntry(tool_result("t1", "x"), ToolCallShown(text="caf\udce9.txt")))
    history.replace_all([{"role": "user", "content": [{"type": "text", "text": "\udfff"}]}])
    texts = [
        history.messages[0]["content"][0]["text"],
        entries[0]["blocks"][0]["text"],
        entries[0]["prompt"][0]["text"],
        entries[2]["blocks"][0]["content"],
        entries[3]["shown"]["text"],
        entries[4]["messages"][0]["content"][0]["text"],
    ]
    assert texts == ["\ufffd", "lone \ufffd", "lone \ufffd", "caf\\xe9.txt", "caf\\xe9.txt", "\ufffd"]


def test_replay_of_an_old_journal_cleans_what_it_holds() -> None:
    history = History.replay(lines({"type": "prompt", "blocks": [{"type": "text", "text": "a\udce9"}]}))
    assert history.messages[0]["content"][0]["text"] == "a\\xe9"


def batch_journal() -> list[dict]:
    """A kill -9 during the 2nd call of a batch of three: only the 1st result was journaled."""
    return [
        {"type": "prompt", "blocks": [{"type": "text", "text": "go"}]},
        {"type": "assistant", "blocks": [tool_use("w"), tool_use("r"), tool_use("x")]},
        {"type": "tool_started", "toolUseId": "w"},
        {"type": "tool_result", "block": tool_result("w", "written")},
        {"type": "tool_started", "toolUseId": "r"},
    ]


def test_replay_answers_every_call_of_a_batch_cut_by_a_kill() -> None:
    history = History.replay(lines(*batch_journal()))
    assert [m["role"] for m in history.messages] == ["user", "assistant", "user"]
    results = history.messages[-1]["content"]
    assert [(r["tool_use_id"], r["content"]) for r in results] == [
        ("w", "written"),
        ("r", INTERRUPTED_RUNNING),
        ("x", INTERRUPTED),
    ]


def test_a_prompt_after_the_crash_follows_the_repaired_results_on_every_replay() -> None:
    entries = [*batch_journal(), {"type": "prompt", "blocks": [{"type": "text", "text": "again"}]}]
    history = History.replay(lines(*entries))
    assert [b.get("tool_use_id", b.get("text")) for b in history.messages[-1]["content"]] == [
        "w",
        "r",
        "x",
        "again",
    ]
    assert history.repair() == 0


def test_a_rollback_after_a_repaired_crash_removes_only_its_prompt() -> None:
    loaded = History.replay(lines(*batch_journal()))
    mark = loaded.mark()  # what the live session counted: the repaired message, 3 results
    entries = [
        *batch_journal(),
        {"type": "prompt", "blocks": [{"type": "text", "text": "bad"}]},
        {"type": "rollback", "messages": mark.messages, "blocks": mark.blocks},
    ]
    assert History.replay(lines(*entries)).messages == loaded.messages


def test_results_are_moved_first_in_order_and_orphans_dropped() -> None:
    history = History(
        [
            {"role": "user", "content": [{"type": "text", "text": "go"}]},
            {"role": "assistant", "content": [tool_use("a"), tool_use("b")]},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "hi"},
                    tool_result("b", "B"),
                    tool_result("zz", "orphan"),
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
            {"role": "user", "content": [tool_result("yy", "orphan")]},
        ]
    )
    assert history.repair() == 1
    assert [m["role"] for m in history.messages] == ["user", "assistant", "user", "assistant"]
    assert [b.get("tool_use_id", b.get("text")) for b in history.messages[2]["content"]] == ["a", "b", "hi"]


def test_replay_puts_results_of_calls_run_at_once_back_in_call_order() -> None:
    entries = [
        {"type": "prompt", "blocks": [{"type": "text", "text": "look"}]},
        {"type": "assistant", "blocks": [tool_use("a"), tool_use("b"), tool_use("c")]},
        {"type": "tool_result", "block": tool_result("c", "3")},  # journaled as each finished
        {"type": "tool_result", "block": tool_result("a", "1")},
        {"type": "tool_result", "block": tool_result("b", "2")},
        {"type": "prompt", "blocks": [{"type": "text", "text": "next"}]},
    ]
    history = History.replay(lines(*entries))
    content = history.messages[-1]["content"]
    assert [b.get("tool_use_id") for b in content] == ["a", "b", "c", None]
    assert content[-1] == {"type": "text", "text": "next"}


def test_a_result_with_an_image_is_a_list_that_notes_and_text_views_handle() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    block = tool_result("t1", "Image a.png", media=[image])
    assert block["content"] == [{"type": "text", "text": "Image a.png"}, image]
    add_note(block, " [note]")
    assert block["content"][-1] == {"type": "text", "text": " [note]"}
    assert result_text(block["content"]) == "Image a.png\n[image]\n [note]"
    plain = tool_result("t2", "text")
    add_note(plain, " [note]")
    assert plain["content"] == "text [note]" and result_text(plain["content"]) == "text [note]"


def test_a_repair_inside_the_history_drops_the_thinking_after_it_and_a_tail_repair_keeps_it() -> None:
    thinking = {"type": "thinking", "thinking": "", "signature": "s"}
    torn = [
        {"type": "prompt", "blocks": [{"type": "text", "text": "go"}]},
        {"type": "assistant", "blocks": [thinking, tool_use("a")]},
        {"type": "prompt", "blocks": [{"type": "text", "text": "again"}]},
        {"type": "assistant", "blocks": [thinking, {"type": "text", "text": "ok"}]},
        {"type": "prompt", "blocks": [{"type": "text", "text": "more"}]},
    ]
    history = History.replay(lines(*torn))
    assert history.messages[1]["content"][0] == thinking  # before the rewritten point: kept
    assert history.messages[2]["content"][0]["tool_use_id"] == "a"
    assert all(b.get("type") != "thinking" for b in history.messages[3]["content"])
    tail = History.replay(lines(*torn[:2]))
    assert tail.messages[1]["content"][0] == thinking  # only appended to: nothing dropped
    assert tail.messages[2]["content"][0]["tool_use_id"] == "a"
