"""Which writes can make tools run code (and so are always asked for)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_agent.tools.sensitive import sensitive_reason


@pytest.mark.parametrize(
    "path",
    [
        ".git/config",
        ".git/hooks/pre-commit",
        "./.git/info/../config",
        "sub/.git/config",
        ".GIT/config",
        ".envrc",
        "pkg/.envrc",
        ".vscode/tasks.json",
        ".vscode/settings.json",
        ".zed/tasks.json",
        ".husky/pre-push",
        ".pre-commit-config.yaml",
        ".devcontainer/devcontainer.json",
        "src/../.git/config",
    ],
)
def test_files_that_make_tools_run_code(tmp_path: Path, path: str) -> None:
    assert sensitive_reason(tmp_path, path)


@pytest.mark.parametrize(
    "path",
    [
        "src/app.py",
        ".gitignore",
        "git/config",
        "vscode/tasks.json",
        "tasks.json",
        ".envrc.example",
        "",
        "docs/.git-notes",
    ],
)
def test_ordinary_files(tmp_path: Path, path: str) -> None:
    assert sensitive_reason(tmp_path, path) is None


def test_a_symlink_into_git_counts(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    (tmp_path / "innocent.txt").symlink_to(tmp_path / ".git" / "config")
    (tmp_path / "hooks").symlink_to(tmp_path / ".git")
    assert sensitive_reason(tmp_path, "innocent.txt")
    assert sensitive_reason(tmp_path, "hooks/new-hook")
