"""The loop asks permission with one value, `PermissionQuestion`, and an embedder's asker written for
the old keyword form of `ask` keeps working for one release, with a DeprecationWarning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_agent.api import PermissionDecision, PermissionQuestion, ToolRegistry, run_turn
from acp_agent.permissions.question import question_asker
from acp_agent.tools.files.edit import WriteFile
from tests.unit.test_strategies import ScriptedModel, text, tool


class KeywordAsker:
    """An asker as embedders wrote them up to 0.2."""

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []

    async def ask(self, *, title: str, permission: str, **rest: Any) -> PermissionDecision:
        self.asked.append({"title": title, "permission": permission, **rest})
        return PermissionDecision(False, message="no")


class QuestionAsker:
    def __init__(self) -> None:
        self.asked: list[PermissionQuestion] = []

    async def ask(self, question: PermissionQuestion) -> PermissionDecision:
        self.asked.append(question)
        return PermissionDecision(False, message="no")


def test_an_asker_of_questions_is_used_as_it_is() -> None:
    asker = QuestionAsker()
    assert question_asker(asker) is asker


async def test_a_keyword_asker_still_gets_every_field_and_is_warned_about(tmp_path: Path) -> None:
    asker = KeywordAsker()
    model = ScriptedModel(tool("write_file", {"path": "a.txt", "content": "x"}), text("done"))
    with pytest.warns(DeprecationWarning, match=r"KeywordAsker\.ask takes keyword arguments"):
        result = await run_turn(
            "go", model=model, tools=ToolRegistry([WriteFile()]), cwd=tmp_path, permissions=asker
        )
    assert result.status == "completed" and not (tmp_path / "a.txt").exists()
    [asked] = asker.asked
    assert asked["permission"] == "edit" and asked["tool_name"] == "write_file"
    assert asked["raw_input"] == {"path": "a.txt", "content": "x"} and callable(asked["preview"])
    assert sorted(asked) == ["call_id", "kind", "permission", "preview", "raw_input", "title", "tool_name"]


async def test_the_loop_asks_one_question_value(tmp_path: Path) -> None:
    asker = QuestionAsker()
    model = ScriptedModel(tool("write_file", {"path": "a.txt", "content": "x"}), text("done"))
    await run_turn("go", model=model, tools=ToolRegistry([WriteFile()]), cwd=tmp_path, permissions=asker)
    [question] = asker.asked
    assert (question.tool_name, question.kind, question.permission) == ("write_file", "edit", "edit")
    assert question.preview is not None and (await question.preview()) is not None
