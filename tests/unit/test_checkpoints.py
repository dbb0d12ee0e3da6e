"""Checkpoints on real files and a real git: the shadow store never runs the repository's config,
keeps bytes as they are, leaves ignored output out; the edit images work without git; the cap
prunes; a session's checkpoints go with its journal; a rewind's file history is followed."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from acp_agent.journal import checkpoints as checkpoints_module
from acp_agent.journal.checkpoints import Checkpoints
from acp_agent.journal.rewind import apply_rewind, plan_rewind
from acp_agent.journal.shadow_git import ShadowGit, find_git
from acp_agent.journal.store import SessionStore
from acp_agent.turn.context.history import History
from acp_agent.turn.journal.entries import ChangesEntry, Entry, MetaEntry, PromptEntry

GIT = find_git()
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed")
SESSION = "sess_" + "cd" * 16


def git(cwd: Path, *args: str) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def hostile_repo(root: Path, marks: Path) -> dict[str, Path]:
    """A repository whose own config runs commands: an fsmonitor hook, a clean filter, a pager."""
    root.mkdir()
    git(root, "init", "-q")
    ran = {name: marks / f"{name}-ran" for name in ("fsmonitor", "filter", "pager")}
    for name, mark in ran.items():
        script = marks / f"{name}.sh"
        script.write_text(f"#!/bin/sh\ntouch {mark}\ncat\n")
        script.chmod(0o755)
    with (root / ".git" / "config").open("a") as config:
        config.write(
            f"[core]\n\tfsmonitor = {marks / 'fsmonitor.sh'}\n\tpager = {marks / 'pager.sh'}\n"
            f'[filter "evil"]\n\tclean = {marks / "filter.sh"}\n\tsmudge = {marks / "filter.sh"}\n'
            "\trequired = true\n"
        )
    (root / ".gitattributes").write_text("* filter=evil\n*.txt text=auto eol=lf\n")
    return ran


@needs_git
async def test_a_snapshot_never_runs_what_the_repositorys_config_names(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    root = tmp_path / "repo"
    ran = hostile_repo(root, marks)
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    store = ShadowGit(str(GIT), tmp_path / "store", root)
    first = await store.snapshot()
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    (root / "new.bin").write_bytes(b"\x00\x01")
    second = await store.snapshot()
    changes = {path: (old, new) for path, old, new in await store.changes(first, second)}
    assert set(changes) == {"crlf.txt", "new.bin"}
    assert not [name for name, mark in ran.items() if mark.exists()]
    old_crlf = changes["crlf.txt"][0]
    assert old_crlf is not None
    assert (await store.blobs([old_crlf.blob]))[old_crlf.blob] == b"one\r\ntwo\r\n"  # bytes as they were
    git(root, "status")  # the repository really is hostile: git run there runs its hook
    assert ran["fsmonitor"].exists()


@needs_git
async def test_ignored_output_hidden_paths_and_nested_repositories_are_left_out(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    git(root, "init", "-q")
    (root / ".gitignore").write_text("build/\n")
    (root / ".ignore").write_text("cache/\n")
    (root / ".git" / "info" / "exclude").write_text("*.log\n")
    (root / "nested").mkdir()
    git(root / "nested", "init", "-q")  # a repository with no commit: git cannot add it
    (root / "nested" / "inside.txt").write_text("nested\n")
    store = ShadowGit(str(GIT), tmp_path / "store", root, hidden=[root / "state"])
    first = await store.snapshot()
    for name in ("build/out.o", "cache/c", "run.log", "state/journal", "src/kept.py", "nested/more.txt"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    second = await store.snapshot()
    assert [path for path, _, _ in await store.changes(first, second)] == ["src/kept.py"]


async def turn(checkpoints: Checkpoints, journal: list[Entry], writes: dict[Path, str | None]) -> None:
    """One turn that writes (or deletes: None) files as an edit tool would, checkpointed."""
    journal.append(PromptEntry([{"type": "text", "text": "p"}], [{"type": "text", "text": "p"}]))
    await checkpoints.turn_started()
    for path, text in writes.items():
        await checkpoints.before_write(path)
        if text is None:
            path.unlink()
        else:
            path.write_text(text)
    await checkpoints.turn_ended()


def recorder(tmp_path: Path) -> tuple[list[Entry], Any]:
    journal: list[Entry] = [MetaEntry(1, SESSION, str(tmp_path), "2026-01-01T00:00:00Z")]

    def write(entry: Entry, *, sync: bool = True) -> None:
        journal.append(entry)

    return journal, write


def session_at(tmp_path: Path, *, git: str | None) -> tuple[Path, list[Entry], Any, Checkpoints]:
    """A workspace root, a journal and its writer, and the checkpoints of a session there."""
    root = tmp_path / "w"
    root.mkdir()
    journal, write = recorder(tmp_path)
    return root, journal, write, Checkpoints(tmp_path / "cp", lambda: (root,), write, git=git)


async def test_without_git_the_edit_images_still_rewind_and_status_says_so(tmp_path: Path) -> None:
    root, journal, write, checkpoints = session_at(tmp_path, git=None)
    assert "git was not found" in checkpoints.status()
    (root / "a.txt").write_text("one\n")
    await turn(checkpoints, journal, {root / "a.txt": "two\n", root / "b.txt": "new\n"})
    await turn(checkpoints, journal, {root / "a.txt": "three\n", root / "b.txt": None})
    changes = [e for e in journal if isinstance(e, ChangesEntry)]
    assert [len(c.changes) for c in changes] == [2, 2]
    history = History(journal=write)
    plan = await plan_rewind(journal, 2, "files", checkpoints, (root,))
    outcome = await apply_rewind(plan, journal, history=history, journal=write)
    assert sorted(Path(p).name for p in outcome.restored) == ["a.txt", "b.txt"]
    assert (root / "a.txt").read_text() == "two\n" and (root / "b.txt").read_text() == "new\n"
    plan = await plan_rewind(journal, 1, "files", checkpoints, (root,))
    await apply_rewind(plan, journal, history=history, journal=write)
    assert (root / "a.txt").read_text() == "one\n" and not (root / "b.txt").exists()


async def test_a_rewind_of_a_rewind_follows_the_file_history(tmp_path: Path) -> None:
    root, journal, write, checkpoints = session_at(tmp_path, git=None)
    target = root / "a.txt"
    target.write_text("v0\n")
    for version in ("v1\n", "v2\n", "v3\n"):
        await turn(checkpoints, journal, {target: version})
    history = History(journal=write)
    plan = await plan_rewind(journal, 3, "all", checkpoints, (root,))
    await apply_rewind(plan, journal, history=history, journal=write)
    assert target.read_text() == "v2\n"
    await turn(checkpoints, journal, {target: "w3\n"})  # prompt 3 again, a new one
    plan = await plan_rewind(journal, 2, "files", checkpoints, (root,))
    await apply_rewind(plan, journal, history=history, journal=write)
    assert target.read_text() == "v1\n"
    target.write_text("the user's\n")
    plan = await plan_rewind(journal, 1, "files", checkpoints, (root,))
    assert plan.conflicts == (str(target),) and not plan.restore


@pytest.fixture
def capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[Entry], Any]:
    """A session capped at 2 turns, pruned at the first turn past them: its root and journal."""
    monkeypatch.setattr(checkpoints_module, "MAX_TURNS", 2)
    monkeypatch.setattr(checkpoints_module, "PRUNE_EVERY", 1)
    root, journal, write, _ = session_at(tmp_path, git=None)
    return root, journal, write


async def test_the_cap_prunes_the_oldest_turns_images(
    tmp_path: Path, capped: tuple[Path, list[Entry], Any]
) -> None:
    root, journal, write = capped
    checkpoints = Checkpoints(tmp_path / "cp", lambda: (root,), write, git=None)
    target = root / "a.txt"
    target.write_text("v0\n")
    for n in range(1, 5):
        await turn(checkpoints, journal, {target: f"v{n}\n"})
    assert len(checkpoints.images.held()) == 2  # v2 and v3, the before-images of turns 3 and 4
    plan = await plan_rewind(journal, 1, "files", checkpoints, (root,))
    assert plan.lost == (str(target),)  # its snapshot is gone: named, never guessed
    plan = await plan_rewind(journal, 3, "files", checkpoints, (root,))
    assert [c.after for c in plan.restore] and not plan.lost


@needs_git
async def test_the_cap_prunes_the_shadow_stores_old_snapshots(
    tmp_path: Path, capped: tuple[Path, list[Entry], Any]
) -> None:
    root, journal, write = capped
    checkpoints = Checkpoints(tmp_path / "cp", lambda: (root,), write, git=GIT)
    for n in range(1, 6):
        journal.append(PromptEntry([{"type": "text", "text": "p"}]))
        await checkpoints.turn_started()
        await checkpoints.before_change()
        (root / f"f{n}.txt").write_text(f"file {n}\n")
        await checkpoints.turn_ended()
    store = next(iter(checkpoints._stores.values()))
    kept = {ref.name for ref in (store.git_dir / "refs" / "snapshots").iterdir()}
    assert len(kept) <= 4  # the last two turns' before and after (and the last one)
    plan = await plan_rewind(journal, 4, "files", checkpoints, (root,))
    await apply_rewind(plan, journal, history=History(journal=write), journal=write)
    assert sorted(p.name for p in root.iterdir()) == ["f1.txt", "f2.txt", "f3.txt"]


async def test_a_sessions_checkpoints_go_with_its_journal(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    store.create(SESSION, str(tmp_path))
    other = "sess_" + "ef" * 16
    store.create(other, str(tmp_path))
    for session in (SESSION, other, "sess_" + "00" * 16):  # the last one has no journal any more
        (store.checkpoints(session) / "images").mkdir(parents=True)
    store.delete(SESSION)
    assert not store.checkpoints(SESSION).exists()
    old = time.time() - 40 * 86400
    os.utime(store.path(other), (old, old))
    assert store.expire(30) == 1
    assert not (tmp_path / "checkpoints").exists() or not list((tmp_path / "checkpoints").iterdir())


async def test_a_crashed_turn_is_closed_by_the_next_one(tmp_path: Path) -> None:
    root, journal, write, checkpoints = session_at(tmp_path, git=None)
    journal.append(PromptEntry([{"type": "text", "text": "p"}]))
    await checkpoints.turn_started()
    await checkpoints.before_write(root / "a.txt")
    (root / "a.txt").write_text("written before the crash\n")  # then the agent died
    reloaded = Checkpoints.of_journal(tmp_path / "cp", lambda: (root,), write, journal)
    reloaded.git = None
    await reloaded.turn_started()
    closed = [e for e in journal if isinstance(e, ChangesEntry)]
    assert len(closed) == 1 and closed[0].prompt == 0
    assert closed[0].changes[0].path == str(root / "a.txt") and closed[0].changes[0].before is None


@needs_git
async def test_a_file_edited_then_changed_by_a_command_goes_back_to_before_the_edit(tmp_path: Path) -> None:
    root, journal, write, checkpoints = session_at(tmp_path, git=GIT)
    target = root / "a.txt"
    target.write_text("before the turn\n")
    journal.append(PromptEntry([{"type": "text", "text": "p"}]))
    await checkpoints.turn_started()
    await checkpoints.before_write(target)  # an edit first: no snapshot of the roots yet
    target.write_text("edited\n")
    await checkpoints.before_change()  # then a command: the snapshot sees the edited file
    target.write_text("then the command's\n")
    (root / "made.txt").write_text("made\n")
    await checkpoints.turn_ended()
    plan = await plan_rewind(journal, 1, "files", checkpoints, (root,))
    await apply_rewind(plan, journal, history=History(journal=write), journal=write)
    assert target.read_text() == "before the turn\n"
    assert not (root / "made.txt").exists()


async def deleted_in_a_turn(tmp_path: Path) -> tuple[Path, list[Entry], Any, Checkpoints, Path]:
    """A session whose one turn deleted d/authorized_keys, and a folder outside its root."""
    root, journal, write, checkpoints = session_at(tmp_path, git=None)
    (root / "d").mkdir()
    (root / "d" / "authorized_keys").write_text("ssh-ed25519 AAAA the repository's key\n")
    await turn(checkpoints, journal, {root / "d" / "authorized_keys": None})
    outside = tmp_path / "outside"
    outside.mkdir()
    return root, journal, write, checkpoints, outside


def swap_for_a_link(directory: Path, target: Path) -> None:
    """What a background command can do between two turns: a directory becomes a link."""
    directory.rename(directory.with_name(directory.name + ".old"))
    directory.symlink_to(target, target_is_directory=True)


async def test_a_directory_swapped_for_a_link_is_a_conflict_never_written_through(tmp_path: Path) -> None:
    root, journal, write, checkpoints, outside = await deleted_in_a_turn(tmp_path)
    swap_for_a_link(root / "d", outside)  # d/authorized_keys "holds what the turn left": nothing
    plan = await plan_rewind(journal, 1, "files", checkpoints, (root,))
    assert plan.conflicts == (str(root / "d" / "authorized_keys"),) and not plan.restore
    outcome = await apply_rewind(plan, journal, history=History(journal=write), journal=write)
    assert outcome.restored == () and list(outside.iterdir()) == []


async def test_a_link_planted_between_the_plan_and_the_put_back_is_refused(tmp_path: Path) -> None:
    """The put-back walks to the file again, from its root, without following a link: a swap after
    the plan (while the user reads the question) is a conflict too, and no temporary file lands
    outside."""
    root, journal, write, checkpoints, outside = await deleted_in_a_turn(tmp_path)
    plan = await plan_rewind(journal, 1, "files", checkpoints, (root,))
    assert [c.path for c in plan.restore] == [str(root / "d" / "authorized_keys")]
    swap_for_a_link(root / "d", outside)
    outcome = await apply_rewind(plan, journal, history=History(journal=write), journal=write)
    assert outcome.restored == () and outcome.conflicts == (str(root / "d" / "authorized_keys"),)
    assert list(outside.iterdir()) == []
    swap_for_a_link(root, outside)  # the root itself, now a link: refused the same way
    outcome = await apply_rewind(plan, journal, history=History(journal=write), journal=write)
    assert outcome.restored == () and list(outside.iterdir()) == []


async def test_a_file_outside_every_root_is_a_conflict(tmp_path: Path) -> None:
    root, journal, _, checkpoints, _ = await deleted_in_a_turn(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    plan = await plan_rewind(journal, 1, "files", checkpoints, (other,))  # the roots changed since
    assert plan.conflicts == (str(root / "d" / "authorized_keys"),) and not plan.restore


async def test_a_put_back_makes_the_folders_it_needs_and_removes_those_it_empties(tmp_path: Path) -> None:
    root, journal, write, checkpoints = session_at(tmp_path, git=None)
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "run.sh").write_text("#!/bin/sh\n")
    (root / "a" / "b" / "run.sh").chmod(0o700)
    (root / "x" / "y").mkdir(parents=True)
    made = root / "x" / "y" / "new.txt"
    await turn(checkpoints, journal, {root / "a" / "b" / "run.sh": None, made: "new\n"})
    for folder in (root / "a" / "b", root / "a"):
        folder.rmdir()
    plan = await plan_rewind(journal, 1, "files", checkpoints, (root,))
    await apply_rewind(plan, journal, history=History(journal=write), journal=write)
    assert (root / "a" / "b" / "run.sh").read_text() == "#!/bin/sh\n"
    assert (root / "a" / "b" / "run.sh").stat().st_mode & 0o777 == 0o755  # executable, as kept
    assert sorted(p.name for p in root.iterdir()) == ["a"]  # x/y emptied: removed, up to the root
    assert not list(root.rglob("*acp-rewind*"))
