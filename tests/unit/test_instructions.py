"""Which AGENTS.md / CLAUDE.md files a session reads, and how the cap cuts them."""

from __future__ import annotations

import os
from pathlib import Path

from acp_agent.session.instructions import find_instruction_files, read_instructions


def test_without_a_repository_the_walk_stops_at_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cwd = home / "work" / "proj"
    cwd.mkdir(parents=True)
    for directory in (tmp_path, home, home / "work", cwd):
        (directory / "AGENTS.md").write_text(f"rule of {directory.name}\n")
    found = [p for p, _ in find_instruction_files(cwd, home=home, config_dir=None)]
    assert found == [cwd / "AGENTS.md", home / "work" / "AGENTS.md", home / "AGENTS.md"]


def test_a_symlinked_claude_md_counts_once_and_a_fifo_is_skipped(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "AGENTS.md").write_text("the rules\n")
    (tmp_path / "CLAUDE.md").symlink_to("AGENTS.md")
    sub = tmp_path / "sub"
    sub.mkdir()
    os.mkfifo(sub / "AGENTS.md")  # reading it would block the session forever
    instructions = read_instructions(sub, home=None, config_dir=None)
    assert [f.path for f in instructions.files] == [tmp_path / "AGENTS.md"]
    assert instructions.prompt_section().count("the rules") == 1


def test_nearer_files_get_the_room_and_later_ones_are_named_as_left_out(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "AGENTS.md").write_text("root\n")
    config = tmp_path / "config"
    config.mkdir()
    (config / "AGENTS.md").write_text("user\n")
    (tmp_path / "CLAUDE.md").write_text("x" * 50)
    instructions = read_instructions(tmp_path, home=None, config_dir=config, cap=30)
    notes = [f.note for f in instructions.files]
    assert notes == [
        f"{config / 'AGENTS.md'} (user-level) (left out: the 30-byte cap on instructions was reached)",
        f"{tmp_path / 'AGENTS.md'}",
        f"{tmp_path / 'CLAUDE.md'} (cut at the 30-byte cap on instructions: the first 25 of 50 bytes)",
    ]
    assert "x" * 25 in instructions.prompt_section() and "x" * 26 not in instructions.prompt_section()


def test_no_files_no_section(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    assert read_instructions(tmp_path, home=None, config_dir=tmp_path / "none").prompt_section() == ""
