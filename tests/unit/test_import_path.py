"""`process/import_path.py`: the working directory leaves the front of `sys.path`, unless the agent
itself was loaded from it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from acp_agent.process.import_path import drop_working_directory


@pytest.fixture
def path_front(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.chdir(tmp_path)
    front = [str(tmp_path), *sys.path]
    monkeypatch.setattr(sys, "path", front)
    return front


def test_the_working_directory_is_dropped(tmp_path: Path, path_front: list[str]) -> None:
    rest = path_front[1:]
    installed = tmp_path.parent / "site-packages" / "acp_agent"
    assert drop_working_directory(str(installed)) is True
    assert sys.path == rest  # only the first entry went


def test_an_empty_entry_means_the_working_directory_too(tmp_path: Path, path_front: list[str]) -> None:
    path_front[0] = ""
    assert drop_working_directory(str(tmp_path.parent / "elsewhere" / "acp_agent")) is True
    assert "" not in sys.path


def test_a_checkout_run_in_place_keeps_it(tmp_path: Path, path_front: list[str]) -> None:
    assert drop_working_directory(str(tmp_path / "acp_agent")) is False
    assert sys.path[0] == str(tmp_path)


def test_another_first_entry_is_left_alone(tmp_path: Path, path_front: list[str]) -> None:
    path_front[0] = str(tmp_path.parent / "venv" / "bin")  # the console script's folder
    assert drop_working_directory(str(tmp_path.parent / "x" / "acp_agent")) is False
    assert sys.path[0] == str(tmp_path.parent / "venv" / "bin")
