"""What a sandboxed command or hook reaches besides its roots, and what bwrap itself starts with.

The paths a command names under the private `/tmp` (an interpreter, a script) are bound read-only,
but for an entry that is or holds a socket and for the hidden paths; the user's own hooks see the
whole disk but the hidden paths (issue 42 item 8, issue 43 item 2). bwrap starts with the agent's
two marks as its whole environment, the command's variables reaching only the command (issue 41
item 1): a real bwrap, its `/proc/<pid>/environ` and `cmdline` read while it runs.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
import pytest

from acp_agent.process.lifetime import OWNER
from acp_agent.tools.sandbox.bwrap import Confinement, bwrap_argv, find_bwrap, private_dirs
from acp_agent.tools.sandbox.named import command_words, named_paths, reach
from acp_agent.tools.shell.local import spawn
from tests.support.sandbox import require_bwrap
from tests.unit.test_sandbox import mounts

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux's")


def test_command_words_keep_quoted_spaces_and_split_operators() -> None:
    line = "'/tmp/a clone/.venv/bin/python' \"$HOME/x.py\" arg;/tmp/b/run&&echo >/tmp/c/out"
    assert command_words(line) == [
        "/tmp/a clone/.venv/bin/python",
        "$HOME/x.py",
        "arg",
        ";",
        "/tmp/b/run",
        "&&",
        "echo",
        ">",
        "/tmp/c/out",
    ]
    assert command_words("echo 'unclosed /tmp/x") == ["echo", "'unclosed", "/tmp/x"]


def test_named_paths_are_the_absolute_words_with_home_expanded() -> None:
    env = {"HOME": "/home/u"}
    words = ["python3", "~/hooks/a.py", "$HOME/b", "${HOME}/c", "/tmp/x/../y", "rel/d", "--opt=/e"]
    assert named_paths(words, env) == [
        Path(p) for p in ("/home/u/hooks/a.py", "/home/u/b", "/home/u/c", "/tmp/y")
    ]


def test_an_entry_below_a_private_dir_is_reached_but_not_one_holding_a_socket_or_a_hidden_path(
    tmp_path: Path,
) -> None:
    private, root, state = tmp_path / "tmp", tmp_path / "tmp" / "ws", tmp_path / "state"
    venv = private / "venv with space" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text("")
    root.mkdir()
    state.mkdir()
    (private / "tmux-1000").mkdir()
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(private / "tmux-1000" / "default"))
        seen = reach(
            [venv / "python", root / "log", private / "absent" / "x"],
            private=[private],
            writable=[root],
            hidden=[state],
        )
        assert seen.entries == (private / "venv with space",) and seen.unreachable is None
        socketed = reach(
            [private / "tmux-1000" / "default"], private=[private], writable=[root], hidden=[state]
        )
        assert socketed.entries == () and "keeps private" in (socketed.unreachable or "")
    (private / "link").symlink_to(state)
    (state / "key.json").write_text("{}")
    for path in (state / "key.json", private / "link" / "key.json"):
        hidden = reach([path], private=[private], writable=[root], hidden=[state])
        assert hidden.entries == () and f"{path}, which the sandbox hides" in (hidden.unreachable or "")
    runtime = tmp_path / "run-user"
    (runtime / "app" / "bin").mkdir(parents=True)
    closed = reach(
        [runtime / "app" / "bin"],
        private=[private, runtime],
        writable=[root],
        hidden=[state],
        closed=[runtime],
    )
    assert closed.entries == () and "holds the user's sockets" in (closed.unreachable or "")
    whole = reach(
        [venv / "python", state / "key.json"], private=[private], writable=[root], hidden=[state], whole=True
    )
    assert whole.entries == () and "sandbox hides" in (whole.unreachable or "")  # only the hidden count


def entry_below_tmp(path: Path) -> Path:
    """The entry right below the private dir `path` lies in (pytest's tmp_path is in /tmp)."""
    tmp = next(d for d in private_dirs() if d in path.parents)
    return tmp / path.relative_to(tmp).parts[0]


def test_named_entries_go_right_after_their_tmpfs_and_before_the_roots_it_holds(tmp_path: Path) -> None:
    root, entry = tmp_path / "ws", entry_below_tmp(tmp_path)
    tmp = entry.parent  # it holds the root here
    root.mkdir()
    confinement = Confinement(cwd=root, writable=(root,), named=(entry,), hidden=(tmp_path / "state",))
    (tmp_path / "state").mkdir()
    seen = mounts(bwrap_argv("bwrap", ["true"], confinement))
    assert seen.index(("--tmpfs", str(tmp))) + 1 == seen.index(("--ro-bind", str(entry), str(entry)))
    assert seen.index(("--ro-bind", str(entry), str(entry))) < seen.index(("--bind", str(root), str(root)))
    # the hidden state dir lies in the named entry: covered again, though it is under /tmp
    assert ("--tmpfs", str(tmp_path / "state")) in seen


def test_the_users_own_code_gets_the_whole_disk_writable_but_the_hidden_paths(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    confinement = Confinement(cwd=tmp_path, writable=(tmp_path,), hidden=(state,), network=False, whole=True)
    argv = bwrap_argv("bwrap", ["true"], confinement)
    assert mounts(argv) == [
        ("--bind", "/", "/"),
        ("--dev", "/dev"),
        ("--proc", "/proc"),
        ("--tmpfs", str(state)),
        ("--remount-ro", str(state)),
    ]
    assert "--unshare-pid" in argv and "--unshare-net" in argv and argv[argv.index("--cap-drop") + 1] == "ALL"


@linux_only
def test_a_named_entry_is_readable_not_writable_and_the_rest_of_tmp_stays_private(tmp_path: Path) -> None:
    require_bwrap()
    program = find_bwrap()
    assert program is not None
    outside = tmp_path / "scripts dir"
    outside.mkdir()
    (outside / "run.sh").write_text("echo RAN\n")
    sibling = Path(tempfile.mkdtemp(prefix="acp-reach-", dir=private_dirs()[0]))  # another entry of /tmp
    try:
        script = (
            f"sh '{outside}/run.sh'; (echo x > '{outside}/new') 2>/dev/null && echo WROTE || echo READ-ONLY; "
            f"test -e '{sibling}' && echo SIBLING || echo NO-SIBLING"
        )
        confinement = Confinement(
            cwd=Path("/"), writable=(), named=(entry_below_tmp(tmp_path),), network=False
        )
        done = subprocess.run(
            bwrap_argv(program, ["sh", "-c", script], confinement), capture_output=True, text=True, timeout=60
        )
    finally:
        sibling.rmdir()
    assert done.stdout.split() == ["RAN", "READ-ONLY", "NO-SIBLING"], done.stderr


@linux_only
async def test_bwrap_starts_with_the_marks_only_and_the_command_gets_its_env_inside(tmp_path: Path) -> None:
    """Issue 41 item 1: a settings `env` (here `LD_PRELOAD` of a file that is no library, which
    would make the loader complain in whatever took it) reaches the command and never bwrap."""
    require_bwrap()
    program = find_bwrap()
    assert program is not None
    bogus = tmp_path / "not-a-library.so"
    bogus.write_text("nothing")
    argv = bwrap_argv(
        program,
        ["sh", "-c", 'echo "LD=$LD_PRELOAD MARK=$SETTINGS_MARK"; read line; exit 0'],
        Confinement(cwd=tmp_path, writable=(tmp_path,), network=False),
    )
    env = {"LD_PRELOAD": str(bogus), "SETTINGS_MARK": "secret-value-41"}
    spawned = await spawn(
        argv, tmp_path, env=env, stdin=subprocess.PIPE, stderr=subprocess.PIPE, sandboxed=True
    )
    proc = spawned.proc
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        with anyio.fail_after(30):
            said = (await proc.stdout.receive()).decode()
        environ = Path(f"/proc/{proc.pid}/environ").read_bytes().split(b"\0")
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
        names = {item.split(b"=", 1)[0].decode() for item in environ if item}
        assert names == {OWNER, "ACP_AGENT_COMMAND"}, environ  # bwrap's own: the marks, nothing else
        assert b"secret-value-41" not in cmdline and b"--setenv" not in cmdline  # nor in its argv
        assert said.strip() == f"LD={bogus} MARK=secret-value-41"
        assert spawned.mark in b"\0".join(environ)  # what stop_command looks for
    finally:
        await proc.stdin.aclose()
        with anyio.fail_after(30):
            await proc.wait()
        errors = (await proc.stderr.receive()).decode() if proc.returncode else ""
        await proc.aclose()
    assert proc.returncode == 0, errors


@linux_only
@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandboxed", "unsandboxed"])
async def test_a_variable_no_environment_can_hold_is_left_out_not_a_failed_start(
    sandboxed: bool, tmp_path: Path
) -> None:
    """A settings `env` may hold `{"A=B": …}` or a NUL in a value: the rest still reaches the command."""
    if sandboxed:
        require_bwrap()
    program = find_bwrap() if sandboxed else None
    argv = ["sh", "-c", 'echo "KEPT=$KEPT"']
    if program is not None:
        argv = bwrap_argv(program, argv, Confinement(cwd=tmp_path, writable=(tmp_path,), network=False))
    env = {"A=B": "x", "NUL": "a\0b", "": "empty", "KEPT": "yes"}
    spawned = await spawn(argv, tmp_path, env=env, sandboxed=sandboxed)
    assert spawned.proc.stdout is not None
    with anyio.fail_after(30):
        said = b"".join([chunk async for chunk in spawned.proc.stdout])
        await spawned.proc.wait()
    await spawned.proc.aclose()
    assert said.decode().strip() == "KEPT=yes"
