"""The agent's hidden paths (issue 35 item 5) under every file tool, and a skill's pinned directory
(item 3): every route to a hidden file is refused or left out, on the rg and the Python paths alike,
and a skill reads nothing once its directory was replaced."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_agent.errors import PathOutsideCwd
from acp_agent.tools.base import ToolContext
from acp_agent.tools.files.confined import pin_dir
from acp_agent.tools.files.read import ReadFile
from acp_agent.tools.hidden import HiddenPaths, agent_hidden_paths
from acp_agent.tools.paths import resolve_inside
from acp_agent.tools.search.listing import ListFiles
from acp_agent.tools.search.text import SearchText
from acp_agent.tools.skill import Skill, SkillTool

KEY = "sk-ant-unit-marker"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A workspace that holds the agent's state dir and config dir (an editor opened on $HOME)."""
    root = tmp_path / "home"
    state = root / ".local" / "share" / "acp-agent" / "sessions"
    state.mkdir(parents=True)
    (state / "sess_1.jsonl").write_text(f'{{"prompt": "journal {KEY}"}}\n')
    config = root / ".config" / "acp-agent"
    config.mkdir(parents=True)
    (config / "credentials.json").write_text(f'{{"anthropicApiKey": "{KEY}"}}')
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('sk-ant- prefix')\n")
    return root


def hidden_of(home: Path) -> HiddenPaths:
    """As `agent_hidden_paths` makes it: the state dir, the config dir, the key in it."""
    config = home / ".config" / "acp-agent"
    return HiddenPaths.of([home / ".local" / "share" / "acp-agent", config, config / "credentials.json"])


def ctx(home: Path) -> ToolContext:
    return ToolContext(cwd=home, hidden=hidden_of(home))


@pytest.mark.parametrize(
    "path",
    [
        ".config/acp-agent/credentials.json",
        "src/../.config/acp-agent/credentials.json",
        ".config/acp-agent",
        ".local/share/acp-agent/sessions/sess_1.jsonl",
        ".CONFIG/acp-agent/credentials.json",  # another spelling: one file on a case-insensitive disk
        "key-link",
        "dir-link/credentials.json",
        "hard-link.json",
    ],
)
def test_every_route_to_a_hidden_path_is_refused_without_naming_it(home: Path, path: str) -> None:
    (home / "key-link").symlink_to(home / ".config" / "acp-agent" / "credentials.json")
    (home / "dir-link").symlink_to(home / ".config" / "acp-agent")
    os.link(home / ".config" / "acp-agent" / "credentials.json", home / "hard-link.json")
    with pytest.raises(PathOutsideCwd, match="private files") as refused:
        resolve_inside(home, path, hidden=hidden_of(home))
    assert str(home / ".config") not in str(refused.value)  # where it led is never said


def test_a_file_with_two_names_inside_the_workspace_is_read_as_before(home: Path) -> None:
    os.link(home / "src" / "app.py", home / "src" / "twin.py")
    assert resolve_inside(home, "src/twin.py", hidden=hidden_of(home)) == home / "src" / "twin.py"


@pytest.mark.parametrize("engine", [None, False], ids=["rg", "python"])
async def test_listing_and_search_leave_the_hidden_paths_out_on_both_paths(
    home: Path, engine: bool | None
) -> None:
    os.link(home / ".config" / "acp-agent" / "credentials.json", home / "src" / "copy.json")
    lister, searcher, context = ListFiles(ripgrep=engine), SearchText(ripgrep=engine), ctx(home)
    listed = await lister.run({"pattern": "**/.*/**", "include_ignored": True}, context)
    named = await lister.run({"path": ".local", "include_ignored": True}, context)
    found = await searcher.run({"pattern": "sk-ant-", "glob": "**/*", "include_ignored": True}, context)
    dotted = await searcher.run({"pattern": "sk-ant-", "glob": ".*/**", "output_mode": "count"}, context)
    inside = await searcher.run({"pattern": "journal", "path": ".local/share"}, context)
    assert "credentials.json" not in listed.text and "sess_1" not in listed.text, listed.text
    assert named.text.startswith("No entries match"), named.text
    assert found.text.splitlines() == ["src/app.py:1: print('sk-ant- prefix')"], found.text  # no hard link
    assert dotted.text.startswith("No matches") and inside.text.startswith("No matches")
    with pytest.raises(PathOutsideCwd):
        await searcher.run({"pattern": "x", "path": ".config/acp-agent"}, context)
    with pytest.raises(PathOutsideCwd):
        await ReadFile().run({"path": "src/copy.json"}, context)


def test_the_list_is_the_state_dir_the_config_dir_the_key_and_the_sdk_profiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "sdk"))
    (tmp_path / "real").mkdir()
    (tmp_path / "state").symlink_to(tmp_path / "real")
    hidden = agent_hidden_paths(tmp_path / "state")
    expected = {tmp_path / "real", tmp_path / "state", tmp_path / "cfg" / "acp-agent"}
    expected |= {tmp_path / "cfg" / "acp-agent" / "credentials.json", tmp_path / "sdk"}
    assert set(hidden.paths) == expected
    # The sandbox covers each place once, as it resolves: a mount on the symlink would follow it.
    assert set(hidden.covered()) == {tmp_path / "real", tmp_path / "cfg" / "acp-agent", tmp_path / "sdk"}
    around = hidden.around(tmp_path / "cfg" / "acp-agent" / "skills" / "x")  # a skill kept there
    assert not around.hides(tmp_path / "cfg" / "acp-agent" / "skills" / "x" / "a.md")
    assert around.hides(tmp_path / "cfg" / "acp-agent" / "credentials.json")


def skill_in(directory: Path) -> Skill:
    (directory / "references").mkdir(parents=True)
    (directory / "SKILL.md").write_text("---\nname: notes\ndescription: d\n---\nbody\n")
    (directory / "references" / "how.md").write_text("HOW\n")
    (directory / "latest.md").symlink_to(directory / "references" / "how.md")  # a link that stays inside
    return Skill("notes", "d", directory / "SKILL.md", "body\n", pin=pin_dir(directory))


@pytest.mark.parametrize("swap", ["link", "directory"])
async def test_a_skill_reads_nothing_once_its_directory_was_replaced(home: Path, swap: str) -> None:
    directory = home / "src" / ".claude" / "skills" / "notes"
    tool, context = SkillTool([skill_in(directory)]), ctx(home)
    assert (await tool.run({"name": "notes", "file": "latest.md"}, context)).text == "HOW\n"
    directory.rename(directory.with_name("notes.old"))  # kept: its inode cannot be reused meanwhile
    if swap == "link":
        directory.symlink_to(home / ".config" / "acp-agent")
    else:  # a new directory of the same name: not the one found
        (directory / "references").mkdir(parents=True)
        (directory / "references" / "how.md").write_text("PLANTED\n")
    for file in ("credentials.json", "references/how.md"):
        with pytest.raises(Exception, match="was not read") as refused:
            await tool.run({"name": "notes", "file": file}, context)
        assert KEY not in str(refused.value) and "PLANTED" not in str(refused.value)
    listed = await tool.run({"name": "notes"}, context)
    assert "its files are not listed" in listed.text and "credentials" not in listed.text


async def test_a_skill_kept_in_the_config_dir_reads_its_files_but_not_the_key(home: Path) -> None:
    directory = home / ".config" / "acp-agent" / "skills" / "notes"
    skill = skill_in(directory)
    os.link(home / ".config" / "acp-agent" / "credentials.json", directory / "key.json")
    tool, context = SkillTool([skill]), ctx(home)
    assert (await tool.run({"name": "notes", "file": "references/how.md"}, context)).text == "HOW\n"
    for file in ("../../credentials.json", "key.json"):
        with pytest.raises(Exception, match="was not read") as refused:
            await tool.run({"name": "notes", "file": file}, context)
        assert KEY not in str(refused.value)


def test_a_list_with_denials_or_around_a_folder_outside_it_is_not_resolved_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session's runtime and each memory file derive a list from the session's: every path was
    resolved when that list was made, and resolving them again cost a first prompt ~0.5 ms a list."""
    hidden = HiddenPaths.of([tmp_path / "state", tmp_path / "config"])
    resolved: list[str] = []
    real = os.path.realpath
    monkeypatch.setattr(os.path, "realpath", lambda p, **kw: resolved.append(str(p)) or real(p, **kw))
    denials = object()
    with_denials = hidden.with_denials(denials)  # type: ignore[arg-type]
    assert with_denials.denials is denials and with_denials.paths == hidden.paths
    assert with_denials.covered() == hidden.covered() and with_denials.hides(tmp_path / "state" / "x")
    resolved.clear()
    assert hidden.with_denials(None) is hidden and hidden.around(tmp_path / "workspace") is hidden
    hidden.with_denials(denials)  # type: ignore[arg-type]
    assert resolved == []
    skills = hidden.around(tmp_path / "config" / "skills")  # inside a hidden one: a new list, without it
    assert skills.paths == (tmp_path / "state",) and not skills.hides(tmp_path / "config" / "key.json")
