"""What governs the agent itself (issue 41, item 3): the file tools' guard on its settings, hooks,
`.mcp.json` and memory imports, and the paths the sandbox keeps read-only."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_agent.tools.files.sensitive import governance_reason
from acp_agent.tools.sandbox.command_sandbox import governing_files


@pytest.mark.parametrize(
    ("path", "text", "governs"),
    [
        (".claude/settings.json", None, True),
        (".claude/settings.local.json", "{}", True),
        ("pkg/.Claude/Settings.Local.json", None, True),  # any depth, any case
        (".claude/hooks/guard.sh", None, True),
        (".claude/hooks/lib/util.py", None, True),
        (".mcp.json", None, True),
        ("CLAUDE.md", "Read @docs/style.md first", True),
        ("sub/CLAUDE.local.md", "@~/.ssh/id_rsa", True),
        (".claude/rules/python.md", "@../../secrets.txt", True),
        ("CLAUDE.md", "Write to me@example.com", False),  # no import: an ordinary edit
        ("CLAUDE.md", None, False),
        ("docs/notes.md", "@~/.ssh/id_rsa", False),  # not a memory file
        (".claude/commands/x.md", None, False),  # sensitive, not governing (sensitive.py asks)
        ("hooks/guard.sh", None, False),
        ("settings.json", None, False),
    ],
)
def test_which_writes_govern_the_agent(tmp_path: Path, path: str, text: str | None, governs: bool) -> None:
    assert bool(governance_reason(tmp_path, path, text)) is governs


def test_a_link_to_a_governing_file_governs_too(tmp_path: Path) -> None:
    (tmp_path / ".claude" / "hooks").mkdir(parents=True)
    (tmp_path / ".claude" / "settings.json").write_text("{}")
    (tmp_path / "harmless.json").symlink_to(tmp_path / ".claude" / "settings.json")
    (tmp_path / "scripts").symlink_to(tmp_path / ".claude" / "hooks")
    assert governance_reason(tmp_path, "harmless.json")
    assert governance_reason(tmp_path, "scripts/new.sh")
    assert governance_reason(tmp_path, "plain.json") is None


def test_the_sandbox_keeps_the_existing_ones_read_only(tmp_path: Path) -> None:
    root, other = tmp_path / "root", tmp_path / "elsewhere"
    (root / ".claude" / "hooks").mkdir(parents=True)
    (root / ".claude" / "settings.json").write_text("{}")
    (root / ".mcp.json").write_text("{}")
    other.mkdir()
    (other / "local.json").write_text("{}")
    (root / ".claude" / "settings.local.json").symlink_to(other / "local.json")  # outside the roots
    assert governing_files([root]) == (
        root / ".claude" / "settings.json",
        root / ".claude" / "hooks",
        root / ".mcp.json",
    )
    assert other / "local.json" in governing_files([root, other])  # inside a root: covered


@pytest.mark.parametrize(
    ("before", "old", "new", "governs"),
    [
        ("Notes ~/.ssh/id_rsa\n", "Notes ", "Notes @", True),  # the `@` alone completes an import
        ("See @ docs/x.md\n", "@ docs", "@docs", True),  # so does taking a space out
        ("Notes here\n", "here", "there", False),  # an ordinary edit
        ("Read @docs/a.md\n", "Read", "Please read", False),  # the import was there: not added
    ],
)
async def test_an_edit_of_a_memory_file_is_weighed_as_the_file_will_read(
    tmp_path: Path, before: str, old: str, new: str, governs: bool
) -> None:
    """The gate weighs an `edit_file` of a memory file on the text it leaves (issue 41's guard: a
    memory file given an `@import` is asked in every mode), not on its `new_string` alone."""
    from acp_agent.permissions.gate import PermissionGate
    from acp_agent.permissions.question import PermissionQuestion

    (tmp_path / "CLAUDE.md").write_text(before)
    gate = PermissionGate.without_rules([tmp_path])
    edit = {"path": "CLAUDE.md", "old_string": old, "new_string": new}
    question = await gate.classified(PermissionQuestion("t", "edit_file", "Edit", "edit", "edit", edit))
    assert (question.permission == "governance") is governs
