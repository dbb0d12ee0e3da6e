"""The command sandbox's parts: the git dirs it guards, the bwrap argv, the session's sandbox
(told once when there is none), the per-call grant in the permission question, and real runs
of git in a worktree (the layout this project itself is developed in)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.permissions.question import PermissionQuestion
from acp_agent.session.editor.permissions import SessionPermissions
from acp_agent.tools.base import Preview, ToolContext
from acp_agent.tools.grant import Grant
from acp_agent.tools.sandbox.bwrap import Confinement, bwrap_argv, find_bwrap
from acp_agent.tools.sandbox.command_sandbox import GIT_GRANT, CommandSandbox, SandboxPolicy
from acp_agent.tools.sandbox.git_dirs import find_git_dirs, hooks_path_setting
from acp_agent.tools.shell.run_command import RunCommand
from acp_agent.turn.inprocess import run_turn
from acp_agent.turn.strategies.verify import CommandEvaluator, VerifyStrategy
from tests.support.procs import marked_sleep, running
from tests.support.sandbox import require_bwrap, require_git
from tests.support.waits import wait_until
from tests.unit.test_strategies import ScriptedModel, text


def mounts(argv: list[str]) -> list[tuple[str, ...]]:
    """The mount options of a bwrap argv, in order, with their operands."""
    arity = {"--ro-bind": 2, "--bind": 2, "--tmpfs": 1, "--remount-ro": 1, "--dev": 1, "--proc": 1}
    found, i = [], 1
    while i < len(argv) and argv[i] != "--":
        n = arity.get(argv[i], 0)
        if n:
            found.append((argv[i], *argv[i + 1 : i + 1 + n]))
        i += 1 + n
    return found


# ── git dirs ─────────────────────────────────────────────────────────────────────────────────


def make_git_dir(path: Path, config: str = "[core]\n\tbare = false\n") -> Path:
    (path / "hooks").mkdir(parents=True)
    (path / "objects").mkdir()
    (path / "HEAD").write_text("ref: refs/heads/main\n")
    (path / "config").write_text(config)
    return path


def test_a_plain_repository_guards_its_hooks_and_config_from_any_subdirectory(tmp_path: Path) -> None:
    git_dir = make_git_dir(tmp_path / "repo" / ".git")
    (tmp_path / "repo" / "src").mkdir()
    found = find_git_dirs(tmp_path / "repo" / "src")
    assert found is not None
    assert found.writable == (git_dir,)
    assert set(found.runs_code) == {git_dir / "hooks", git_dir / "config"}


def test_a_worktree_guards_the_common_dir_and_its_own_gitdir_file(tmp_path: Path) -> None:
    common = make_git_dir(tmp_path / "main" / ".git")
    own = tmp_path / "main" / ".git" / "worktrees" / "wt"
    own.mkdir(parents=True)
    (own / "commondir").write_text("../..\n")
    (own / "config.worktree").write_text("[core]\n")
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text(f"gitdir: {own}\n")
    found = find_git_dirs(tmp_path / "wt")
    assert found is not None and found.writable == (own, common)
    assert set(found.runs_code) == {
        tmp_path / "wt" / ".git",  # rewritten, it would point git at hooks of the command's choosing
        common / "hooks",
        common / "config",
        own / "config.worktree",
    }


def test_submodules_and_a_hooks_path_inside_the_tree_are_guarded_too(tmp_path: Path) -> None:
    git_dir = make_git_dir(tmp_path / ".git", '[core]\n\thooksPath = "githooks" ; shared hooks\n')
    module = make_git_dir(git_dir / "modules" / "lib" / "nested")
    (tmp_path / "githooks").mkdir()
    found = find_git_dirs(tmp_path)
    assert found is not None
    assert {module / "hooks", module / "config", tmp_path / "githooks"} <= set(found.runs_code)


def test_hooks_path_setting_reads_the_last_core_value_only() -> None:
    text = "[core]\n  hooksPath = one\n[alias]\n  hooksPath = not-this\n[CORE] hookspath = two # note\n"
    assert hooks_path_setting(text) == "two"
    assert hooks_path_setting("[user]\n  name = x\n") is None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_a_fifo_where_a_gitdir_file_should_be_is_skipped_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".git")
    assert find_git_dirs(tmp_path) is None  # a blocking open would hang this test


def test_outside_any_repository_nothing_is_guarded(tmp_path: Path) -> None:
    if any((p / ".git").exists() for p in (tmp_path, *tmp_path.parents)):
        pytest.skip("the temp dir is inside a repository")
    assert find_git_dirs(tmp_path) is None


# ── the bwrap argv ───────────────────────────────────────────────────────────────────────────


def test_mounts_go_read_only_root_then_roots_then_git_then_private_mounts_then_hidden(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    git_dir = make_git_dir(root / ".git")
    state, holder = tmp_path / "state", tmp_path / "holder"
    state.mkdir()
    holder.mkdir()
    found = find_git_dirs(root)
    assert found is not None
    confinement = Confinement(
        cwd=root,
        writable=(root, holder / "inner"),
        git=(found,),
        hidden=(state, holder, Path("/tmp/not-there-at-all")),
        network=False,
    )
    (holder / "inner").mkdir()
    argv = bwrap_argv("/usr/bin/bwrap", ["bash", "-c", "true"], confinement)
    seen = mounts(argv)
    assert seen[0] == ("--ro-bind", "/", "/")
    # /tmp holds the root here (a project in /tmp): its tmpfs goes first, or it would hide the root.
    assert seen.index(("--tmpfs", "/tmp")) < seen.index(("--bind", str(root), str(root)))
    assert seen.index(("--bind", str(git_dir), str(git_dir))) < seen.index(
        ("--ro-bind", str(git_dir / "hooks"), str(git_dir / "hooks"))
    )
    # The sandbox's own /dev and /proc come after every root: a root never shows the host's.
    last_bind = max(i for i, m in enumerate(seen) if m[0] in ("--bind", "--ro-bind") and m[1] != "/dev/null")
    assert seen.index(("--dev", "/dev")) > last_bind and seen.index(("--proc", "/proc")) > last_bind
    # The state dir is under /tmp here, but the tmpfs does not cover it: it is not in a root...
    assert ("--tmpfs", str(state)) not in seen
    # ...and a hidden dir that holds a root is left alone (the root must stay reachable).
    assert ("--tmpfs", str(holder)) not in seen
    assert argv[argv.index("--chdir") + 1] == str(root)
    assert argv[argv.index("--") + 1 :] == ["bash", "-c", "true"]
    assert "--unshare-net" in argv and "--unshare-pid" in argv and "--die-with-parent" not in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"


def test_a_hidden_dir_inside_a_root_gets_an_empty_read_only_tmpfs(tmp_path: Path) -> None:
    state = tmp_path / "ws" / ".state"
    state.mkdir(parents=True)
    key = tmp_path / "ws" / "key.json"
    key.write_text("{}")
    confinement = Confinement(cwd=tmp_path / "ws", writable=(tmp_path / "ws",), hidden=(state, key))
    seen = mounts(bwrap_argv("bwrap", ["true"], confinement))
    assert seen[-3:] == [
        ("--tmpfs", str(state)),
        ("--remount-ro", str(state)),
        ("--ro-bind", "/dev/null", str(key)),
    ]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux's")
def test_even_a_root_of_slash_gets_the_sandboxs_own_proc_and_tmp(tmp_path: Path) -> None:
    """Roots are bound first and the private mounts over them (issue 35 item 6): a root of `/`
    (which a session refuses anyway) shows neither the host's processes nor its /tmp."""
    require_bwrap()
    marker = tmp_path / "host-marker"
    marker.write_text("x")
    program = find_bwrap()
    assert program is not None
    script = (
        f"echo PROCS $(ls -d /proc/[0-9]* | wc -l); test -e {marker} && echo TMP-SHARED || echo TMP-PRIVATE"
    )
    confinement = Confinement(cwd=Path("/"), writable=(Path("/"),), network=False)
    done = subprocess.run(
        bwrap_argv(program, ["sh", "-c", script], confinement), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split("PROCS ")[1].split()[0]) < 10 and "TMP-PRIVATE" in done.stdout, done.stdout


def test_a_grant_leaves_the_git_dir_writable_and_the_editor_gets_die_with_parent(tmp_path: Path) -> None:
    make_git_dir(tmp_path / ".git")
    found = find_git_dirs(tmp_path)
    assert found is not None
    confinement = Confinement(
        cwd=tmp_path, writable=(tmp_path,), git=(found,), git_writable=True, die_with_parent=True
    )
    argv = bwrap_argv("bwrap", ["true"], confinement)
    assert not [m for m in mounts(argv) if m[0] == "--ro-bind" and ".git" in m[1]]
    assert "--die-with-parent" in argv and "--unshare-net" not in argv


# ── the session's sandbox ────────────────────────────────────────────────────────────────────


def failing_bwrap(tmp_path: Path) -> str:
    """A bwrap that fails as it does where user namespaces are off."""
    script = tmp_path / "bwrap"
    script.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    script.chmod(0o755)
    return str(script)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux's")
async def test_where_bwrap_fails_commands_run_unsandboxed_and_the_session_is_told_once(
    tmp_path: Path,
) -> None:
    told: list[str] = []

    async def tell(text: str) -> None:
        told.append(text)

    sandbox = CommandSandbox(SandboxPolicy(program=failing_bwrap(tmp_path)), tell)
    ctx = ToolContext(cwd=tmp_path, sandbox=sandbox)
    for _ in range(3):
        result = await RunCommand().run({"command": "echo ran"}, ctx)
        assert result.text == "exit code 0\nran\n"
    assert len(told) == 1 and "No permissions to create new namespace" in told[0]
    assert "commands run unsandboxed" in await sandbox.status_line()
    preview = await RunCommand().preview({"command": "ls"}, ctx)
    assert preview.text and "No sandbox (bwrap cannot start here" in preview.text and not preview.grants


async def test_turned_off_nothing_is_probed_and_the_reason_names_the_setting(tmp_path: Path) -> None:
    sandbox = CommandSandbox(SandboxPolicy(enabled=False, program="/nonexistent/bwrap"))
    wrapped = await sandbox.wrap(["true"], cwd=tmp_path, roots=[tmp_path])
    assert wrapped.argv == ["true"] and wrapped.confinement is None
    assert "(--sandbox / ACP_AGENT_SANDBOX)" in await sandbox.status_line()


# ── the per-call grant in the permission question ────────────────────────────────────────────


class Editor:
    def __init__(self, option: str) -> None:
        self.option = option
        self.asked: list[dict[str, Any]] = []

    async def request(self, method: str, params: Any) -> Any:
        self.asked.append(params)
        return {"outcome": {"outcome": "selected", "optionId": self.option}}


async def ask(permissions: SessionPermissions, grants: tuple[Grant, ...]) -> Any:
    async def preview() -> Preview:
        return Preview(text="cmd", grants=grants)

    return await permissions.ask(
        PermissionQuestion("c1", "run_command", "Run", "execute", "execute", {}, preview)
    )


async def test_a_grant_is_one_more_allow_once_choice_and_is_never_remembered() -> None:
    editor = Editor("allow_once:git")
    permissions = SessionPermissions("s", editor)  # type: ignore[arg-type]
    decision = await ask(permissions, (Grant(GIT_GRANT, "Allow once, with git"),))
    assert decision.allowed and decision.grants == frozenset({GIT_GRANT})
    option = editor.asked[0]["options"][1]
    assert option == {"optionId": "allow_once:git", "name": "Allow once, with git", "kind": "allow_once"}
    assert permissions.engine.rules() == [] and permissions.engine.lines == {}
    editor.option = "allow_once:git"  # not offered this time: unreadable, so rejected
    assert not (await ask(permissions, ())).allowed


# ── real runs ────────────────────────────────────────────────────────────────────────────────


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "T"}
    env["GIT_COMMITTER_EMAIL"] = "t@e"
    return subprocess.run(
        ["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True, env=env
    ).stdout


async def test_git_commit_works_in_a_worktree_whose_common_dir_is_outside_the_workspace(
    tmp_path: Path,
) -> None:
    require_bwrap()
    require_git()
    main, tree = tmp_path / "main", tmp_path / "tree"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    git(main, "commit", "-q", "--allow-empty", "-m", "start")
    git(main, "worktree", "add", "-q", "-b", "side", str(tree))
    ctx = ToolContext(cwd=tree.resolve(), sandbox=CommandSandbox(SandboxPolicy()))
    command = (
        "echo x > f && git add f && GIT_AUTHOR_NAME=T GIT_AUTHOR_EMAIL=t@e GIT_COMMITTER_NAME=T "
        "GIT_COMMITTER_EMAIL=t@e git commit -qm side-work && echo COMMITTED; "
        f"echo evil > {main}/.git/hooks/pre-commit; echo 'gitdir: /tmp/evil' > .git; "
        f"echo outside > {main}/README"  # /tmp is the sandbox's own: this lands there, not here
    )
    result = await RunCommand().run({"command": command}, ctx)
    assert "COMMITTED" in result.text, result.text
    assert git(main, "log", "--format=%s", "side") == "side-work\nstart\n"
    assert result.text.count("Read-only file system") == 2, result.text
    assert not (main / ".git" / "hooks" / "pre-commit").exists() and not (main / "README").exists()
    assert (tree / ".git").read_text().startswith("gitdir: ") and "evil" not in (tree / ".git").read_text()


async def test_a_daemon_that_clears_its_environment_and_leaves_the_session_dies_with_the_sandbox(
    tmp_path: Path,
) -> None:
    """Unsandboxed it escapes (README, "Daemons do not outlive run_command"); sandboxed it does not."""
    require_bwrap()
    sleep = marked_sleep()
    ctx = ToolContext(cwd=tmp_path.resolve(), sandbox=CommandSandbox(SandboxPolicy()))
    # The command ends once the daemon is up (it says so in a file before it becomes the sleep).
    daemon = f"sh -c 'touch up; exec {sleep}'"
    command = (
        f"(setsid env -i {daemon} > /dev/null 2>&1 < /dev/null &); "
        "for _ in $(seq 3000); do [ -e up ] && break; sleep 0.01; done; echo started"
    )
    result = await RunCommand(kill_grace=0.5).run({"command": command}, ctx)
    assert "started" in result.text and "bwrap" not in result.text and (tmp_path / "up").exists()
    # It dies with the sandbox's PID namespace, whose teardown the kernel ends a moment after the
    # bwrap the tool waited for: unsandboxed it runs on for minutes.
    await wait_until(lambda: not running(sleep), "the daemon to die with the sandbox")


async def test_an_in_process_turn_runs_its_verify_check_in_the_sandbox_it_is_given(tmp_path: Path) -> None:
    require_bwrap()
    check = CommandEvaluator(f"test ! -e /proc/{os.getpid()}")  # passes only where we are not seen
    outcomes = []
    for policy in (SandboxPolicy(), None):
        result = await run_turn(
            "go",
            model=ScriptedModel(text("done")),
            cwd=tmp_path,
            strategy=VerifyStrategy(check, max_trials=1),
            sandbox=policy,
        )
        outcomes.append([t.passed for t in result.record.trials])
    assert outcomes == [[True], [False]]


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file another user owns needs root")
def test_a_git_dir_another_user_owns_is_not_opened_for_writing(tmp_path: Path) -> None:
    victim = make_git_dir(tmp_path / "victim" / ".git")
    (tmp_path / "common").mkdir()
    planted = tmp_path / "common" / ".git"
    planted.write_text(f"gitdir: {victim}\n")
    os.chown(planted, 65534, 65534)  # planted by someone else in a shared parent
    assert find_git_dirs(tmp_path / "common") is None
    os.chown(planted, os.getuid(), os.getgid())
    found = find_git_dirs(tmp_path / "common")
    assert found is not None and found.writable == (victim,)


def test_a_hooks_path_that_is_the_workspace_itself_does_not_make_it_read_only(tmp_path: Path) -> None:
    make_git_dir(tmp_path / ".git", "[core]\n\thooksPath = .\n")
    found = find_git_dirs(tmp_path)
    assert found is not None and tmp_path in found.runs_code
    argv = bwrap_argv("bwrap", ["true"], Confinement(cwd=tmp_path, writable=(tmp_path,), git=(found,)))
    assert ("--ro-bind", str(tmp_path), str(tmp_path)) not in mounts(argv)


@pytest.mark.timeout(300)  # six bwrap setups: at load 15 they took over 60 s; 600 s is still far off
async def test_a_cancel_while_bwrap_sets_up_still_stops_what_it_starts_without_waiting_for_sigkill(
    tmp_path: Path,
) -> None:
    """Processes that appear after the SIGTERM (bwrap's init starting the shell) get one too."""
    require_bwrap()
    ctx = ToolContext(cwd=tmp_path.resolve(), sandbox=CommandSandbox(SandboxPolicy()))
    await ctx.sandbox.state()  # type: ignore[union-attr]  # the one-time probe, out of the timing
    # A SIGKILL grace far past the test's 300 s timeout: a stop that waited for it fails the test.
    for delay in (0.0, 0.002, 0.005, 0.01, 0.02, 0.05):  # one of them lands inside the setup
        sleep = marked_sleep()
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(RunCommand(kill_grace=600).run, {"command": sleep}, ctx)
                await anyio.sleep(delay)  # deliberate: the moment of the cancel, swept across the setup
                scope.cancel()
        assert running(sleep) == [], delay
