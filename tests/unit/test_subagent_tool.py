"""The session's task tool: its subagents' system prompt is made on the first `task` call only,
from what the session had when the tool was built."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest

from acp_agent.session.requester import Requester
from acp_agent.session.state import Session
from acp_agent.session.subagents import tool as subagent_tool
from acp_agent.session.system_prompt import build_subagent_prompt
from acp_agent.tools.registry import default_registry
from tests.support.sessions import make_session

NO_CLIENT = cast(Requester, object())  # never asked: the client has no subagent sessions


def a_session(cwd: Path, extra_root: Path) -> Session:
    return make_session("sess_1", cwd, NO_CLIENT, extra_roots=(extra_root,))


def test_the_subagents_prompt_is_built_on_the_first_call_once_with_what_the_session_had(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[dict[str, Any]] = []

    def counting(**kwargs: Any) -> str:
        built.append(kwargs)
        return build_subagent_prompt(**kwargs)

    today = [dt.date(2026, 11, 25)]
    monkeypatch.setattr(subagent_tool, "build_subagent_prompt", counting)
    session = a_session(tmp_path, tmp_path / "other")
    tools = default_registry()
    task = subagent_tool.task_tool(
        session, tools, NO_CLIENT, instructions="RULES", skills="", today=lambda: today[0]
    )
    assert task is not None
    assert built == []  # a session that never calls `task` never makes the text
    today[0] = dt.date(2026, 11, 26)  # midnight passed, the roots changed: the runner's prompt
    session.basis = replace(session.basis, extra_roots=())  # has what the session had when it was
    # built, so the subagents' too
    first = task.system
    assert task.system is first and len(built) == 1
    read_only = [
        (t.name, t.description) for n in ("read_file", "list_files", "search_text") if (t := tools.get(n))
    ]
    assert first == build_subagent_prompt(
        cwd=tmp_path,
        tools=read_only,
        today=dt.date(2026, 11, 25),
        instructions="RULES",
        extra_roots=(tmp_path / "other",),
    )
    assert "2026-11-25" in first and str(tmp_path / "other") in first
