"""Finding a session's command files and skills: where, which wins, what is skipped and why, the caps;
and the skill tool's levels 2 and 3."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from acp_agent.claude_code.conventions import convention_files
from acp_agent.claude_code.conventions.builtins import command_of
from acp_agent.claude_code.conventions.convention_files import read_conventions
from acp_agent.claude_code.conventions.conventions import Conventions, ConventionsSlot
from acp_agent.claude_code.setup.plugins import Plugin
from acp_agent.errors import ToolError
from acp_agent.tools.base import ToolContext
from acp_agent.tools.skill import Skill, SkillTool


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def skill(root: Path, name: str, description: str = "Does a thing.", extra: str = "") -> Path:
    return write(
        root / name / "SKILL.md",
        f"---\nname: {name}\ndescription: {description}\n{extra}---\nBody of {name}.\n",
    )


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(repository root with cwd `pkg` inside it, home, config dir)."""
    repo, home, config = tmp_path / "repo", tmp_path / "home", tmp_path / "home" / ".config" / "acp-agent"
    (repo / ".git").mkdir(parents=True)
    (repo / "pkg").mkdir()
    config.mkdir(parents=True)
    return repo, home, config


def read(repo: Path, home: Path, config: Path) -> Conventions:
    return read_conventions(repo / "pkg", home=home, config_dir=config)


def test_the_nearest_project_file_wins_then_the_config_dir_then_the_users(
    places: tuple[Path, Path, Path],
) -> None:
    repo, home, config = places
    near = write(repo / "pkg" / ".claude" / "commands" / "a.md", "near a\n")
    far = write(repo / ".claude" / "commands" / "a.md", "far a\n")
    write(repo / ".claude" / "commands" / "b.md", "---\ndescription: far b\n---\nfar b body\n")
    mine = write(config / "commands" / "b.md", "config b\n")
    write(config / "commands" / "c.md", "config c\n")
    users = write(home / ".claude" / "commands" / "c.md", "user c\n")
    write(home / ".claude" / "commands" / "tools" / "d.md", "user d\n")
    found = read(repo, home, config)
    by_name = {c.name: c for c in found.commands}
    assert [c.name for c in found.commands] == ["a", "b", "c", "d"]
    assert by_name["a"].body == "near a\n" and by_name["a"].label == "(project)"
    assert by_name["b"].description == "far b" and by_name["c"].body == "config c\n"
    assert by_name["c"].label == "(user)" and by_name["d"].label == "(user:tools)"
    assert by_name["a"].description == "near a"  # no description: the first line
    assert f"{far} (shadowed by {near})" in found.skipped
    assert f"{mine} (shadowed by {repo / '.claude' / 'commands' / 'b.md'})" in found.skipped
    assert f"{users} (shadowed by {config / 'commands' / 'c.md'})" in found.skipped


def test_skills_come_from_claude_and_agents_dirs_and_shadow_commands_and_builtins_shadow_both(
    places: tuple[Path, Path, Path],
) -> None:
    repo, home, config = places
    skill(repo / ".claude" / "skills", "alpha")
    skill(repo / ".agents" / "skills", "beta")
    skill(home / ".claude" / "skills", "gamma", extra="disable-model-invocation: true\n")
    skill(config / "skills", "delta", extra="user-invocable: false\n")
    command = write(repo / ".claude" / "commands" / "alpha.md", "a command\n")
    status = write(repo / ".claude" / "commands" / "status.md", "mine\n")
    found = read(repo, home, config)
    assert [s.name for s in found.skills] == ["alpha", "beta", "delta", "gamma"]
    assert [s.source for s in found.skills] == ["project", "project", "user", "user"]
    assert found.commands == ()
    assert (
        f"{command} (shadowed by the skill {repo / '.claude' / 'skills' / 'alpha' / 'SKILL.md'})"
        in found.skipped
    )
    assert f"{status} (shadowed by the built-in /status)" in found.skipped
    assert [s.name for s in found.model_skills()] == ["alpha", "beta", "delta"]  # gamma: the user's only
    assert found.find("delta") is None and found.find("gamma") is not None  # delta: the model's only
    assert [c["name"] for c in found.available_commands()] == ["alpha", "beta", "gamma"]


def test_a_project_command_named_after_claude_codes_everyday_commands_replaces_the_built_in(
    places: tuple[Path, Path, Path],
) -> None:
    repo, home, config = places
    for name in ("permissions", "agents", "tasks", "compact"):
        write(repo / ".claude" / "commands" / f"{name}.md", f"our {name}\n")
    found = read(repo, home, config)
    assert [c.name for c in found.commands] == ["agents", "permissions", "tasks"]  # /compact is ours
    assert command_of([{"type": "text", "text": "/permissions"}]) == ("permissions", "")  # when none is found


@pytest.mark.parametrize(
    ("folder", "text", "reason"),
    [
        ("bad", "---\nname: ok\ndescription: [x\n  oops: y\nnot yaml\n---\n", "line 5 of the frontmatter"),
        ("bad", "---\nname: ok\ndescription: x\nno closing fence\n", "the frontmatter's `---` block is not"),
        ("two words", "---\ndescription: x\n---\nBody.\n", "a skill's name (its folder's) cannot hold"),
    ],
)
def test_an_invalid_skill_is_skipped_with_the_file_and_the_reason(
    places: tuple[Path, Path, Path], folder: str, text: str, reason: str
) -> None:
    repo, home, config = places
    path = write(repo / ".claude" / "skills" / folder / "SKILL.md", text)
    found = read(repo, home, config)
    assert found.skills == ()
    assert len(found.skipped) == 1 and found.skipped[0].startswith(f"{path} (skipped: {reason}")


def test_a_skill_is_named_by_its_folder_and_needs_no_frontmatter_as_in_claude_code(
    places: tuple[Path, Path, Path],
) -> None:
    """Claude Code's command for `.claude/skills/<dir>/SKILL.md` is `/<dir>`; `name` and the
    frontmatter are optional, the body's first paragraph describing a skill without a
    `description` (issue 42 item 1: these were renamed or dropped)."""
    repo, home, config = places
    skills = repo / ".claude" / "skills"
    renamed = write(
        skills / "code-review" / "SKILL.md", "---\nname: reviewing-code\ndescription: Reviews code.\n---\nB\n"
    )
    write(skills / "plain" / "SKILL.md", "# Plain skill\n\nFormats the  release\nnotes.\n\nMore text.\n")
    write(skills / "Title_Only" / "SKILL.md", "---\nname: Not Valid Here\n---\n# Only a title\n")
    write(skills / "empty" / "SKILL.md", "")
    write(skills / "long" / "SKILL.md", "---\ndescription: " + "word " * 400 + "\n---\nB\n")
    write(home / ".claude" / "skills" / "code-review" / "SKILL.md", "The user's, shadowed.\n")
    found = read(repo, home, config)
    by_name = {s.name: s for s in found.skills}
    assert sorted(by_name) == ["Title_Only", "code-review", "empty", "long", "plain"]
    assert by_name["code-review"].description == "Reviews code." and found.find("code-review") is not None
    assert found.find("reviewing-code") is None  # Claude Code's command is the folder's name
    assert by_name["plain"].description == "Formats the release notes."  # its first paragraph of text
    assert by_name["Title_Only"].description == "Only a title"  # only a heading: its text
    assert by_name["empty"].description == "(no description)"
    assert len(by_name["long"].description) == 1024 and by_name["long"].description.endswith("…")
    assert found.skipped == (
        f"{home / '.claude' / 'skills' / 'code-review' / 'SKILL.md'} (shadowed by {renamed})",
    )
    assert [c["name"] for c in found.available_commands()] == sorted(by_name)
    assert f"- code-review (project): {renamed} (its `name` says 'reviewing-code': named by its folder)" in (
        found.status()
    )


def test_a_plugins_skill_is_its_folder_after_the_plugins_name(tmp_path: Path) -> None:
    root = tmp_path / "plugin"
    write(root / "skills" / "code-review" / "SKILL.md", "---\nname: reviewing-code\n---\nReview well.\n")
    found = read_conventions(
        tmp_path,
        home=None,
        config_dir=None,
        plugins=[Plugin("tools@market", "tools", root, "1.0", "settings.json")],
    )
    assert [(s.name, s.source, s.description) for s in found.skills] == [
        ("tools:code-review", "plugin", "Review well.")
    ]


def test_the_homes_own_claude_dir_is_the_users_even_inside_the_walk(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cwd = home / "project"  # no repository: the walk stops at home
    cwd.mkdir(parents=True)
    write(home / ".claude" / "commands" / "x.md", "x\n")
    found = read_conventions(cwd, home=home, config_dir=None)
    assert [(c.name, c.source) for c in found.commands] == [("x", "user")] and found.skipped == ()


def test_caps_on_files_skills_and_size(
    places: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, home, config = places
    monkeypatch.setattr(convention_files, "MAX_SKILLS", 3)
    monkeypatch.setattr(convention_files, "MAX_COMMAND_FILES", 2)
    for n in range(5):
        skill(repo / ".claude" / "skills", f"s{n}")
        write(repo / ".claude" / "commands" / f"c{n}.md", f"command {n}\n")
    big = write(repo / "pkg" / ".claude" / "commands" / "big.md", "x" * (convention_files.FILE_BYTES + 1))
    found = read(repo, home, config)
    assert [s.name for s in found.skills] == ["s0", "s1", "s2"]
    assert [c.name for c in found.commands] == ["c0"]  # big.md counted first: it is nearer
    assert f"{big} (skipped: larger than the 64 KiB cap)" in found.skipped
    assert any("not read: the cap of 2 command files" in line for line in found.skipped)
    assert any("not all read: the cap of 3 skills" in line for line in found.skipped)


def test_the_skill_list_in_the_prompt_is_sorted_and_capped(places: tuple[Path, Path, Path]) -> None:
    repo, home, config = places
    for name in ("zeta", "alpha", "mid"):
        skill(repo / ".claude" / "skills", name, description=f"The {name} skill.")
    found = read(repo, home, config)
    section, left_out = found.skills_section()
    assert section.splitlines()[1:] == [
        "- alpha: The alpha skill.",
        "- mid: The mid skill.",
        "- zeta: The zeta skill.",
    ]
    small, left_out = found.skills_section(cap=50)
    assert small.splitlines()[1:] == ["- alpha: The alpha skill.", "- mid: The mid skill."]
    assert left_out == ["zeta"] and "(left out of the system prompt" not in found.status()


def test_a_linked_command_file_is_refused_and_a_linked_directory_not_followed(
    places: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    repo, home, config = places
    outside = write(tmp_path / "elsewhere" / "secret.md", "SECRET\n")
    link = repo / ".claude" / "commands" / "leak.md"
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)
    (repo / ".claude" / "commands" / "more").symlink_to(outside.parent, target_is_directory=True)
    inside = write(repo / "docs" / "real.md", "inside the repository\n")
    (repo / ".claude" / "commands" / "alias.md").symlink_to(inside)
    found = read(repo, home, config)
    assert [c.name for c in found.commands] == ["alias"]
    assert found.skipped == (f"{link} (refused: it resolves to {outside}, outside {repo})",)


async def test_the_skill_tool_loads_a_body_lists_its_files_and_reads_them_confined(tmp_path: Path) -> None:
    root = tmp_path / "skills" / "deploy"
    write(root / "SKILL.md", "---\nname: deploy\n---\nDeploy with scripts/go.sh.\n")
    write(root / "scripts" / "go.sh", "echo go\n")
    write(root / "references" / "big.md", "é" * 200_000)
    write(root / ".hidden", "no\n")
    (root / "bin.dat").write_bytes(b"\0\1\2")
    (root / "link").symlink_to(tmp_path)
    write(tmp_path / "outside", "OUTSIDE\n")
    deploy = Skill("deploy", "Deploy.", root / "SKILL.md", "Deploy with scripts/go.sh.\n")
    hidden = Skill("secret", "Users only.", root / "SKILL.md", "x", model_invocable=False)
    tool, ctx = SkillTool([deploy, hidden]), ToolContext(cwd=tmp_path)
    loaded = await tool.run({"name": "deploy"}, ctx)
    assert loaded.text.startswith(f"Skill deploy (base directory: {root})\n\nDeploy with scripts/go.sh.")
    assert loaded.text.endswith("- bin.dat\n- references/big.md\n- scripts/go.sh")  # no link followed
    assert (await tool.run({"name": "deploy", "file": "scripts/go.sh"}, ctx)).text == "echo go\n"
    cut = await tool.run({"name": "deploy", "file": "references/big.md"}, ctx)
    assert (
        cut.text.endswith("[cut: the first 262,144 of 400,000 bytes are shown]") and "\ufffd" not in cut.text
    )
    assert (await tool.run({"name": "deploy", "file": "bin.dat"}, ctx)).is_error
    for bad, why in [
        ("../../outside", "was not read: it resolves to"),
        ("/etc/passwd", "was not read: it resolves to"),
        ("link/outside", "was not read: it resolves to"),
        ("missing.md", "has no file 'missing.md'"),
    ]:
        with pytest.raises(ToolError, match=why):
            await tool.run({"name": "deploy", "file": bad}, ctx)
    with pytest.raises(ToolError, match="no skill named 'secret'; the skills are: deploy"):
        await tool.run({"name": "secret"}, ctx)
    assert os.path.exists(root / "SKILL.md")


async def test_a_failing_read_costs_the_commands_not_the_session() -> None:
    calls = []

    async def broken() -> Conventions:
        calls.append(1)
        raise RuntimeError("disk on fire")

    slot = ConventionsSlot(broken)
    found = await slot.current()
    assert found.commands == () and found.skipped == (
        "commands and skills were not read: RuntimeError('disk on fire')",
    )
    assert (await slot.current()).skipped == found.skipped and len(calls) == 1  # read once per session


async def test_callers_at_once_read_the_files_once_and_the_slot_keeps_no_lock_after() -> None:
    calls = []
    release = anyio.Event()

    async def slow() -> Conventions:
        calls.append(1)
        await release.wait()
        return Conventions(skipped=("read",))

    slot = ConventionsSlot(slow)
    found: list[Conventions] = []

    async def ask() -> None:
        found.append(await slot.current())

    async with anyio.create_task_group() as tg:
        for _ in range(3):
            tg.start_soon(ask)
        await anyio.wait_all_tasks_blocked()
        assert len(calls) == 1 and found == []  # the others wait for the one read
        release.set()
    assert len(calls) == 1 and [c.skipped for c in found] == [("read",)] * 3
    assert slot._lock is None  # a session that read its conventions holds no lock (nor its queue)
