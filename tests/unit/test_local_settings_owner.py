"""Whose hand made a local settings file (issue 41, item 3): the record of the user's part, how a
file is divided by it, and git's index read whole (a split index, a sparse one)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from acp_agent.claude_code.settings.local_owner import LocalOwners, split_owned
from acp_agent.tools.files.gitdir import find_repository, index_tracks

GIT = shutil.which("git")


def git(root: Path, *args: str) -> None:
    assert GIT is not None
    env = {"PATH": os.environ["PATH"], "HOME": str(root.parent), "GIT_CONFIG_NOSYSTEM": "1"}
    identity = ["-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([GIT, *identity, *args], cwd=root, env=env, check=True, capture_output=True, timeout=30)


def test_a_split_index_is_read_with_its_shared_index(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".claude").mkdir(parents=True)
    (root / ".claude" / "settings.local.json").write_text("{}")
    (root / "a.txt").write_text("a")
    git(root, "init", "-q")
    git(root, "config", "core.splitIndex", "true")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    repository = find_repository(root)
    assert repository is not None and list(repository.git_dir.glob("sharedindex.*"))
    assert index_tracks(repository, ".claude/settings.local.json") and index_tracks(repository, "a.txt")
    assert not index_tracks(repository, "b.txt")
    for shared in repository.git_dir.glob("sharedindex.*"):
        shared.unlink()  # the half that holds the entries is gone: the careful answer
    assert index_tracks(repository, "b.txt")


def test_a_sparse_index_directory_entry_holds_what_is_below_it(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for name in ("src/app.py", ".claude/settings.local.json", ".claude/hooks/x.sh"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")
    git(root, "sparse-checkout", "set", "--cone", "--sparse-index", "src")
    repository = find_repository(root)
    assert repository is not None
    assert b".claude/" in (repository.git_dir / "index").read_bytes()  # one entry for the folder
    assert index_tracks(repository, ".claude/settings.local.json") and index_tracks(repository, "src/app.py")
    assert not index_tracks(repository, ".claudette")


@pytest.mark.parametrize(
    ("data", "owned", "mine", "rest"),
    [
        ({"model": "x"}, {"model": "x"}, {"model": "x"}, {}),
        ({"model": "y"}, {"model": "x"}, {}, {"model": "y"}),
        (
            {"permissions": {"allow": ["Bash(a)", "Bash(b)"], "defaultMode": "bypassPermissions"}},
            {"permissions": {"allow": ["Bash(a)"]}},
            {"permissions": {"allow": ["Bash(a)"]}},
            {"permissions": {"allow": ["Bash(b)"], "defaultMode": "bypassPermissions"}},
        ),
        (
            {"env": {"A": "1", "B": "2"}},
            {"env": {"A": "1", "B": "3"}},
            {"env": {"A": "1"}},
            {"env": {"B": "2"}},
        ),
        ({"hooks": {"Stop": [{"hooks": []}]}}, {}, {}, {"hooks": {"Stop": [{"hooks": []}]}}),
        (
            {"permissions": {"allow": "Bash(a)"}},
            {"permissions": {"allow": ["Bash(a)"]}},
            {},
            {"permissions": {"allow": "Bash(a)"}},
        ),
    ],
)
def test_a_file_is_divided_by_what_the_user_wrote(
    data: dict[str, object], owned: dict[str, object], mine: dict[str, object], rest: dict[str, object]
) -> None:
    assert split_owned(data, owned) == (mine, rest)


def test_the_record_adopts_a_file_only_the_first_time_and_only_when_git_has_not_got_it(
    tmp_path: Path,
) -> None:
    owners = LocalOwners(tmp_path / "state" / "local-settings.json")
    repo, archive = tmp_path / "repo", tmp_path / "archive"
    local = repo / ".claude" / "settings.local.json"
    data = {"permissions": {"allow": ["Bash(a)"]}}
    assert owners.owned(repo, [(local, data)], adoptable=True) == {local: data}  # first run: theirs
    assert owners.owned(repo, [(local, data)], adoptable=True) == {local: data}  # as recorded
    other = archive / ".claude" / "settings.local.json"
    assert owners.owned(archive, [(other, data)], adoptable=False) == {}  # no git: not theirs
    assert owners.owned(archive, [(other, data)], adoptable=True) == {}  # known folder: never adopted late
    owners.add_rules(archive, other, "allow", ["Bash(b)", "Bash(b)"])
    owners.add_rules(archive, other, "deny", ["Bash(c)"])
    assert owners.owned(archive, [(other, data)], adoptable=False) == {
        other: {"permissions": {"allow": ["Bash(b)"], "deny": ["Bash(c)"]}}
    }
    record = json.loads((tmp_path / "state" / "local-settings.json").read_text())
    assert set(record["folders"]) == {str(repo), str(archive)}
    assert oct((tmp_path / "state").stat().st_mode & 0o777) == "0o700"
