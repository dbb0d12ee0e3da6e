"""A settings deny on a path holds in every file tool, as the hidden paths do (issue 33 item 1):
not read, not edited, not listed, not found by search on the rg and the Python paths, not read as
a skill's file; the refusal is the rule's one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acp_agent.claude_code.setup.setup import load_claude_setup
from acp_agent.errors import PathDenied
from acp_agent.permissions.engine import RuleEngine
from acp_agent.tools.base import ToolContext
from acp_agent.tools.files.confined import pin_dir
from acp_agent.tools.files.edit import WriteFile
from acp_agent.tools.files.read import ReadFile
from acp_agent.tools.hidden import HiddenPaths
from acp_agent.tools.search.listing import ListFiles
from acp_agent.tools.search.text import SearchText
from acp_agent.tools.skill import Skill, SkillTool

DENIES = ["Read(./.env)", "Read(./secrets/**)", "Read(*.pem)"]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / "secrets").mkdir(parents=True)
    (root / "src" / "keys").mkdir(parents=True)
    (root / ".env").write_text("TOKEN=hunter2\n")
    (root / "secrets" / "db.txt").write_text("TOKEN=db-password\n")
    (root / "src" / "keys" / "server.pem").write_text("TOKEN=pem-body\n")
    (root / "src" / "app.py").write_text("TOKEN = 'public'\n")
    (root / "src" / "env-link").symlink_to(root / ".env")
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": DENIES}}))
    return root


def context(workspace: Path) -> ToolContext:
    home = workspace.parent / "home"
    setup = load_claude_setup(
        workspace, home=home, config_dir=None, trust_store=None, tracked=lambda r, p: False
    )
    engine = RuleEngine(setup, roots=lambda: (workspace,), home=home)
    return ToolContext(cwd=workspace, hidden=HiddenPaths().with_denials(engine.path_denials()))


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        (".env", "Read(./.env)"),
        ("src/../.env", "Read(./.env)"),
        ("src/env-link", "Read(./.env)"),  # a link to a denied file: denied where it leads
        ("secrets/db.txt", "Read(./secrets/**)"),
        ("src/keys/server.pem", "Read(*.pem)"),  # a bare name: at any depth
    ],
)
async def test_a_denied_path_is_not_read_nor_written_and_the_refusal_names_the_rule(
    workspace: Path, path: str, rule: str
) -> None:
    ctx = context(workspace)
    line = f"denied by ~/.claude/settings.json: {rule}"
    with pytest.raises(PathDenied) as refused:
        await ReadFile().run({"path": path}, ctx)
    assert str(refused.value) == line
    with pytest.raises(PathDenied):
        await WriteFile().run({"path": path, "content": "x"}, ctx)  # a Read deny blocks edits too
    assert (workspace / ".env").read_text() == "TOKEN=hunter2\n"


@pytest.mark.parametrize("engine", [None, False], ids=["rg", "python"])
async def test_listing_and_search_leave_denied_paths_out_on_both_paths(
    workspace: Path, engine: bool | None
) -> None:
    ctx = context(workspace)
    lister, searcher = ListFiles(ripgrep=engine), SearchText(ripgrep=engine)
    listed = await lister.run({"pattern": "**/*", "include_ignored": True}, ctx)
    dotted = await lister.run({"pattern": ".*"}, ctx)
    found = await searcher.run({"pattern": "TOKEN", "glob": "**/*", "include_ignored": True}, ctx)
    hidden_too = await searcher.run({"pattern": "TOKEN", "glob": ".*"}, ctx)
    assert listed.text.splitlines() == ["src/app.py"], listed.text
    assert dotted.text.startswith("No entries match"), dotted.text
    assert found.text.splitlines() == ["src/app.py:1: TOKEN = 'public'"], found.text
    assert hidden_too.text.startswith("No matches"), hidden_too.text
    inside = await searcher.run({"pattern": "TOKEN", "path": "secrets"}, ctx)  # the folder: its files denied
    assert inside.text.startswith("No matches"), inside.text
    with pytest.raises(PathDenied):
        await searcher.run({"pattern": "TOKEN", "path": ".env"}, ctx)


async def test_a_skill_does_not_read_a_denied_file_of_its_own(workspace: Path) -> None:
    directory = workspace / "skills" / "notes"
    directory.mkdir(parents=True)
    (directory / "SKILL.md").write_text("---\nname: notes\ndescription: d\n---\nbody\n")
    (directory / "deploy.pem").write_text("TOKEN=skill-key\n")
    (directory / "how.md").write_text("HOW\n")
    tool = SkillTool([Skill("notes", "d", directory / "SKILL.md", "body\n", pin=pin_dir(directory))])
    ctx = context(workspace)
    listed = await tool.run({"name": "notes"}, ctx)
    assert "how.md" in listed.text and "deploy.pem" not in listed.text
    with pytest.raises(Exception, match="was not read") as refused:
        await tool.run({"name": "notes", "file": "deploy.pem"}, ctx)
    assert "skill-key" not in str(refused.value)
