"""Which writes can make tools run code (and so are always asked for)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_agent.tools.files.sensitive import sensitive_reason


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
        # issue 29: code-running paths that were not listed
        ".envrc.local",
        ".devcontainer.json",
        "team.code-workspace",
        "sub/All.Code-Workspace",
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".helix/languages.toml",
        ".nvim.lua",
        "mise.toml",
        ".mise.toml",
        "lefthook.yml",
        ".npmrc",
        ".yarnrc.yml",
        ".mcp.json",
        ".vscode/mcp.json",
        ".vscode/launch.json",
        # issue 35: commands, skills, agents, hooks and settings are grants
        ".claude/commands/review.md",
        ".claude/commands/frontend/component.md",
        ".claude/skills/deploy/SKILL.md",
        ".claude/skills/deploy/scripts/go.sh",
        ".agents/skills/deploy/SKILL.md",
        ".claude/agents/reviewer.md",
        ".claude/hooks/guard.sh",
        ".claude/CLAUDE.md",
        "pkg/.claude/commands/x.md",
        ".CLAUDE/Commands/x.md",
        ".Agents/Skills/x/SKILL.md",
        "./.claude/../.claude/commands/x.md",
        "src/../.claude/commands/x.md",
        ".claude/worktrees/../commands/x.md",
        ".claude/worktrees/feature/.claude/commands/x.md",
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
        "settings.json",
        "languages.toml",
        "code-workspace.md",
        "docs/mise.toml.md",
        ".claude/worktrees/feature/src/app.py",  # a checkout Claude Code made: edited as any tree
        "claude/commands/x.md",
        "docs/commands/review.md",
        ".agents/notes.md",
        "skills/deploy/SKILL.md",
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


def make_git_dir(path: Path, config: str = "[core]\n") -> Path:
    """A git dir as `git init --separate-git-dir` leaves it."""
    for sub in ("hooks", "refs/heads", "objects"):
        (path / sub).mkdir(parents=True)
    (path / "HEAD").write_text("ref: refs/heads/main\n")
    (path / "config").write_text(config)
    return path


@pytest.mark.parametrize(
    "config",
    [
        "[core]\n\thooksPath = .githooks\n",
        '[Core]\n  HooksPath = ".githooks" # team hooks\n',
        "[user]\n\tname = x\n[core] hookspath=.githooks\n",
    ],
)
def test_core_hooks_path_makes_its_directory_sensitive(tmp_path: Path, config: str) -> None:
    make_git_dir(tmp_path / ".git", config)
    assert "core.hooksPath" in (sensitive_reason(tmp_path, ".githooks/pre-commit") or "")
    assert sensitive_reason(tmp_path, "githooks/pre-commit") is None
    # A session in a sub-directory of the repository: the hooks path is relative to its top.
    (tmp_path / ".git" / "config").write_text(config.replace(".githooks", "src/.githooks"))
    (tmp_path / "src").mkdir()
    assert "core.hooksPath" in (sensitive_reason(tmp_path / "src", ".githooks/new") or "")


def test_a_hooks_path_in_the_users_own_git_config_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[core]\n\thooksPath = tools/hooks\n")  # relative: per repository
    monkeypatch.setenv("HOME", str(home))
    repo = tmp_path / "repo"
    make_git_dir(repo / ".git")
    assert sensitive_reason(repo, "tools/hooks/pre-push")
    assert sensitive_reason(repo, "tools/other/pre-push") is None


def test_a_git_file_makes_the_git_dir_it_names_sensitive(tmp_path: Path) -> None:
    real = make_git_dir(tmp_path / "meta" / "realgit", "[core]\n\thooksPath = hooks-here\n")
    (tmp_path / ".git").write_text("gitdir: meta/realgit\n")
    for path in ("meta/realgit/config", "meta/realgit/hooks/pre-commit", "hooks-here/pre-commit"):
        assert sensitive_reason(tmp_path, path), path
    # Even when only git's own test finds it: a git dir nobody points at yet (a bare repository).
    bare = make_git_dir(tmp_path / "spare.git")
    assert "a git dir" in (sensitive_reason(tmp_path, "spare.git/hooks/post-merge") or "")
    assert real.exists() and bare.exists()
    assert sensitive_reason(tmp_path, "meta/notes.txt") is None


def test_a_worktree_sees_the_common_dir_of_its_main_repository(tmp_path: Path) -> None:
    main = make_git_dir(tmp_path / "main" / ".git")
    worktree_git = main / "worktrees" / "wt"
    worktree_git.mkdir(parents=True)
    (worktree_git / "commondir").write_text("../..\n")
    (worktree_git / "HEAD").write_text("ref: refs/heads/wt\n")
    wt = tmp_path / "wt"
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {worktree_git}\n")
    (main / "config").write_text("[core]\n\thooksPath = ../common-hooks\n")
    # The session's cwd is the worktree; the main repository's files are extra roots.
    roots = (wt, tmp_path)
    assert sensitive_reason(roots, str(main / "config"))
    assert sensitive_reason(roots, str(worktree_git / "HEAD"))
    assert "core.hooksPath" in (sensitive_reason(roots, "../common-hooks/pre-commit") or "")


def test_a_hard_link_to_git_config_or_a_hook_counts_whatever_its_name(tmp_path: Path) -> None:
    git = make_git_dir(tmp_path / ".git")
    (git / "hooks" / "pre-commit").write_text("#!/bin/sh\n")
    os.link(git / "config", tmp_path / "innocent.txt")
    os.link(git / "hooks" / "pre-commit", tmp_path / "notes.md")
    assert "hard link to" in (sensitive_reason(tmp_path, "innocent.txt") or "")
    assert "git hook" in (sensitive_reason(tmp_path, "notes.md") or "")
    elsewhere = tmp_path.parent / f"{tmp_path.name}-bashrc"  # outside the workspace
    elsewhere.write_text("alias ls=ls\n")
    os.link(elsewhere, tmp_path / "readme.txt")
    assert "2 names (hard links)" in (sensitive_reason(tmp_path, "readme.txt") or "")
    (tmp_path / "plain.txt").write_text("x\n")
    assert sensitive_reason(tmp_path, "plain.txt") is None


def test_fifos_where_git_keeps_its_files_never_block_the_check(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".git")  # a `.git` "file" that is a FIFO
    sub = tmp_path / "sub"
    sub.mkdir()
    make_git_dir(sub / ".gitdir")
    (sub / ".git").write_text("gitdir: .gitdir\n")
    (sub / ".gitdir" / "config").unlink()
    os.mkfifo(sub / ".gitdir" / "config")
    os.mkfifo(sub / ".gitdir" / "commondir")
    # Opening a FIFO with no writer blocks for good: a check that opened one would never return
    # (the test's timeout fails it).
    assert sensitive_reason(tmp_path, "sub/src/app.py") is None
    assert sensitive_reason(tmp_path, "app.py") is None


def test_the_grants_are_found_where_their_links_lead(tmp_path: Path) -> None:
    """A `.claude` (or its `commands`, or one command file) that is a link: its target is written
    under another name, and the commands reader reads it all the same."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for directory in ("conf/commands", "common/skills/x", "docs", "pkg/conf", "pkg/src"):
        (repo / directory).mkdir(parents=True)
    (repo / ".claude").symlink_to("conf")
    (repo / "docs" / "review.md").write_text("Review.\n")
    (repo / "conf" / "commands" / "review.md").symlink_to("../../docs/review.md")
    (repo / "conf" / "commands" / "ghost.md").symlink_to("../../docs/ghost.md")  # to nothing yet
    (repo / ".agents").mkdir()
    (repo / ".agents" / "skills").symlink_to("../common/skills")
    assert "allowed-tools" in (sensitive_reason(repo, "conf/commands/new.md") or "")
    assert sensitive_reason(repo, "CONF/../conf/commands/new.md")
    assert sensitive_reason(repo, "docs/review.md")  # the target of a command file's link
    assert sensitive_reason(repo, "docs/ghost.md")  # writing it would create the command
    assert sensitive_reason(repo, "docs/other.md") is None
    assert sensitive_reason(repo, "common/skills/x/SKILL.md")
    # A session in a sub-directory: the repository root's `.claude` is read too, wherever it leads.
    (repo / ".claude").unlink()
    (repo / ".claude").symlink_to("pkg/conf")
    assert sensitive_reason(repo / "pkg", "conf/commands/x.md")
    assert sensitive_reason(repo / "pkg", "src/app.py") is None


def test_the_users_own_commands_count_from_inside_their_dirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".claude" / "commands").mkdir(parents=True)
    (home / ".claude" / "worktrees" / "feature").mkdir(parents=True)
    (home / "xdg" / "acp-agent" / "skills").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    assert sensitive_reason(home / ".claude", "commands/x.md")  # a session whose cwd is ~/.claude
    assert sensitive_reason(home, "xdg/acp-agent/skills/x/SKILL.md")  # this agent's own skills
    assert sensitive_reason(home, "xdg/acp-agent/notes.md") is None
    assert sensitive_reason(home / ".claude" / "worktrees" / "feature", "src/app.py") is None
    worktree = home / ".claude" / "worktrees" / "feature"
    assert sensitive_reason(worktree, str(worktree / "src" / "app.py")) is None
