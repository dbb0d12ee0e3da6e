"""The system prompt's text is shared by sessions that get the same one, never changed by it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from acp_agent.limits import Limits
from acp_agent.session.system_prompt import build_system_prompt

DAY = dt.date(2026, 11, 25)
TOOLS = [("read_file", "Read a file."), ("list_files", "List files.")]


def prompt(cwd: Path, instructions: str = "") -> str:
    return build_system_prompt(cwd=cwd, tools=TOOLS, limits=Limits(), today=DAY, instructions=instructions)


def test_sessions_of_one_workspace_share_one_prompt_string(tmp_path: Path) -> None:
    first, second = prompt(tmp_path), prompt(tmp_path)
    assert second is first
    other = prompt(tmp_path / "other")
    assert other is not first and other == first.replace(str(tmp_path), str(tmp_path / "other"), 1)


def test_only_a_few_recent_prompts_are_kept(tmp_path: Path) -> None:
    first = prompt(tmp_path / "first")
    for i in range(8):  # eight other workspaces since
        prompt(tmp_path / f"w{i}")
    again = prompt(tmp_path / "first")
    assert again == first and again is not first  # the first had gone: a new string, the same text


def test_a_prompt_with_large_instructions_is_not_kept(tmp_path: Path) -> None:
    big = "x" * 60_000
    first, second = prompt(tmp_path, big), prompt(tmp_path, big)
    assert first == second and first is not second and first.endswith(big)
