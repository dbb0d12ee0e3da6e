"""A permission answer allows a tool only when it is a valid `selected` of an offered option."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from acp_agent.claude_code.setup.setup import load_claude_setup
from acp_agent.permissions.engine import RuleEngine
from acp_agent.permissions.gate import PermissionGate, decision_of
from acp_agent.permissions.path_denials import REJECTED_ALWAYS
from acp_agent.permissions.question import PermissionDecision, PermissionQuestion
from acp_agent.session.editor.permissions import OPTION_IDS, SessionPermissions, read_answer
from tests.support.examples import examples

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["outcome", "optionId", "x"]), inner, max_size=3)
    ),
    max_leaves=12,
)


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ({"outcome": {"optionId": "allow_once"}}, "outcome.outcome is None"),
        ({"outcome": {"outcome": "bogus", "optionId": "allow_once"}}, "outcome.outcome is 'bogus'"),
        ({"outcome": {"outcome": "selected", "optionId": ["allow_once"]}}, "not a string"),
        ({"outcome": {"outcome": "selected", "optionId": "allow_sometimes"}}, "was not offered"),
        ({"outcome": "selected"}, "no outcome object"),
        (None, "no outcome object"),
        (["allow_once"], "no outcome object"),
    ],
)
def test_malformed_answers_are_rejections_and_the_log_says_why(answer: Any, why: str) -> None:
    with capture_logs() as logs:
        assert read_answer(answer, OPTION_IDS) == ("invalid", None)
    assert [e["event"] for e in logs] == ["permission.invalid_answer"]
    assert why in logs[0]["why"] and logs[0]["treated_as"] == "rejected"


def test_the_two_valid_shapes() -> None:
    assert read_answer({"outcome": {"outcome": "selected", "optionId": "allow_once"}}, OPTION_IDS) == (
        "selected",
        "allow_once",
    )
    assert read_answer({"outcome": {"outcome": "cancelled"}}, OPTION_IDS) == ("cancelled", None)


@settings(max_examples=examples(200))
@given(JSON)
def test_nothing_but_a_selected_offered_option_is_ever_selected(answer: Any) -> None:
    kind, option = read_answer(answer, OPTION_IDS)
    if kind == "selected":
        assert answer["outcome"]["outcome"] == "selected" and option in OPTION_IDS
        assert answer["outcome"]["optionId"] == option


class Client:
    """The client side of the Requester seam: answers every permission question with `option`."""

    def __init__(self, option: str) -> None:
        self.option, self.asked = option, 0

    async def request(self, method: str, params: dict[str, Any], *, timeout: float | None = None) -> Any:
        self.asked += 1
        return {"outcome": {"outcome": "selected", "optionId": self.option}}


def gate_of(permissions: SessionPermissions) -> PermissionGate:
    """The session's gate over its asker, as the engine builds it (`session/machinery/engine.py`)."""
    return PermissionGate(permissions.engine, permissions.cell, permissions)


@pytest.mark.anyio
async def test_always_allow_never_covers_a_sensitive_write() -> None:
    client = Client("allow_always")
    permissions = SessionPermissions("sess_x", client)  # type: ignore[arg-type]
    gate = gate_of(permissions)
    edit = PermissionQuestion("t", "write_file", "Write", "edit", "edit", {"path": "x"})
    sensitive = replace(edit, permission="sensitive")
    assert (await gate.check(edit)).allowed
    assert (await gate.check(edit)).allowed and client.asked == 1
    client.option = "reject_once"
    assert not (await gate.check(sensitive)).allowed
    assert client.asked == 2
    permissions.mode = "acceptEdits"
    assert not (await gate.check(sensitive)).allowed and client.asked == 3


@pytest.mark.anyio
async def test_a_question_an_ask_rule_forced_offers_no_lasting_allow(tmp_path: Path) -> None:
    """An "Always allow" there would be a rule the ask rule outranks: it is not offered."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text('{"permissions": {"ask": ["Read(./notes.md)"]}}')
    setup = load_claude_setup(
        tmp_path, home=home, config_dir=None, trust_store=None, tracked=lambda r, p: False
    )
    client = Options("reject_always")
    permissions = SessionPermissions(
        "s",
        client,
        engine=RuleEngine(setup, roots=lambda: (tmp_path,), save=False),  # type: ignore[arg-type]
    )
    gate = gate_of(permissions)
    read = PermissionQuestion("t", "read_file", "Read", "read", "none", {"path": "notes.md"})
    assert not (await gate.check(read)).allowed
    assert [o["optionId"] for o in client.options] == ["allow_once", "reject_once", "reject_always"]
    assert client.options[-1]["name"] == f"Always reject Read(/{tmp_path}/notes.md) (this session)"
    asked, verdict = await gate.verdict(read)
    assert decision_of(verdict, asked) == PermissionDecision(False, message=REJECTED_ALWAYS)  # no question


class Options(Client):
    def __init__(self, option: str) -> None:
        super().__init__(option)
        self.options: list[dict[str, Any]] = []

    async def request(self, method: str, params: dict[str, Any], *, timeout: float | None = None) -> Any:
        self.options = params["options"]
        return await super().request(method, params, timeout=timeout)


@pytest.mark.anyio
async def test_a_go_ahead_question_waits_its_turn_and_the_engine_is_asked_again() -> None:
    """`PermissionGate.confirm` (a rewind's question): one question at a time, like a tool call's;
    once it is its turn the engine decides again (a mode switched meanwhile settles it unasked),
    and the user's go-ahead decides only what the engine left to them."""
    import anyio

    client = Client("reject_once")
    permissions = SessionPermissions("sess_x", client)  # type: ignore[arg-type]
    gate = gate_of(permissions)
    rewind = PermissionQuestion("r", "edit_file", "Rewind", "edit", "edit", {"path": "notes.txt"})
    asked: list[str] = []

    async def go_ahead(answer: bool) -> bool:
        asked.append("go-ahead")
        return answer

    assert (await gate.confirm([rewind], lambda: go_ahead(True))).allowed
    declined = await gate.confirm([rewind], lambda: go_ahead(False))
    assert not declined.allowed and declined.message == "" and asked == ["go-ahead", "go-ahead"]
    done: list[PermissionDecision] = []
    answered = anyio.Event()

    async def another_question() -> None:
        async with gate.asking:  # held as while the user answers another call's question
            await answered.wait()

    async def rewind_now() -> None:
        done.append(await gate.confirm([rewind], lambda: go_ahead(False)))

    async with anyio.create_task_group() as group:
        group.start_soon(another_question)
        await anyio.wait_all_tasks_blocked()
        group.start_soon(rewind_now)
        await anyio.wait_all_tasks_blocked()
        assert done == []  # it waits for the other question
        permissions.mode = "acceptEdits"  # decided meanwhile
        answered.set()
    assert done[0].allowed and asked == ["go-ahead", "go-ahead"]  # the engine's: nobody asked
