"""Bubblewrap: the argv that confines one command, and whether bwrap can start here at all.

The view a command gets, mount by mount (later mounts cover earlier ones):
- the whole filesystem read-only;
- the session's roots writable; the repository's git dirs writable, each its own mount point, with
  what git runs (hooks, config: `git_dirs.py`) read-only unless the user allowed it for this call;
  and what decides the agent's own rules (`.claude/settings*.json`, `.claude/hooks`, `.mcp.json`:
  `Confinement.read_only`) read-only, always;
- then, over them, the sandbox's own mounts: a fresh `/dev` and a `/proc` of its own PID namespace,
  in which no process of the agent exists (so no `/proc/<agent>/{fd/0,mem,environ}` to reach);
  private, empty `/tmp` (and `$TMPDIR`) and an empty `$XDG_RUNTIME_DIR`, so the user's sockets there
  (tmux, ssh-agent, the session bus, `systemd-run --user`) are out of reach, even when a root holds
  them; the Docker socket is covered by `/dev/null`. Only a private dir that holds a root (a
  project in `/tmp`) is mounted before the roots, or it would hide them;
- the entries a command names below a private dir (`/tmp/venv` for `/tmp/venv/bin/python`:
  `named.py`), read-only, each right after the tmpfs it lies in (before the roots when that
  tmpfs holds them);
- the hidden paths (the agent's state dir, its stored key, the SDK's profiles: `hidden.py`) covered
  by an empty read-only tmpfs;
- no capabilities, a new session (no terminal to push keystrokes into), its own IPC namespace, and
  with networking off its own network namespace (only a loopback of its own).

The user's own code (their hooks: `whole`) gets the whole disk as they have it, writable, with
the sandbox's own `/dev` and `/proc` (no agent process to reach) and only the hidden paths covered.

bwrap itself starts with a fixed environment: the agent's two marks and nothing else
(`launch`). The command's variables (a settings file's `env` among them) are handed over as
`--setenv` pairs read from a memfd (`--args FD`: not in bwrap's argv, which every user of the
machine can read in `/proc/<pid>/cmdline`), and take effect only at the command's own exec,
inside the namespaces: a `LD_PRELOAD`, `LD_AUDIT` or `GCONV_PATH` never reaches bwrap's loader.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from acp_agent.tools.sandbox.git_dirs import GitDirs

__all__ = ["Confinement", "Launch", "bwrap_argv", "find_bwrap", "launch", "probe_bwrap"]

_SYSTEM_BWRAP = ("/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap")
"""Looked at before PATH: a workspace's own bin directory on PATH cannot stand in for bwrap."""
_SOCKETS = ("/run/docker.sock", "/var/run/docker.sock", "/run/podman/podman.sock")
"""Sockets that hand out a root shell on the host (to their group): covered with /dev/null."""
PROBE_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class Confinement:
    """What one sandboxed command may touch."""

    cwd: Path
    writable: tuple[Path, ...]
    """The session's roots (the cwd first), resolved."""
    git: tuple[GitDirs, ...] = ()
    hidden: tuple[Path, ...] = ()
    network: bool = True
    git_writable: bool = False
    """The user allowed this call to write the git hooks and config."""
    die_with_parent: bool = False
    """For a command the editor runs: its whole PID namespace dies with the bwrap it started."""
    read_only: tuple[Path, ...] = ()
    """Paths inside the roots kept read-only (the agent's own settings, hooks and `.mcp.json`)."""
    named: tuple[Path, ...] = ()
    """Entries right below a private dir that the command names, bound read-only (`named.py`)."""
    whole: bool = False
    """The user's own code: the whole disk, writable, but the hidden paths (`writable` and `git`
    then only keep a root inside a hidden dir uncovered)."""


def find_bwrap() -> str | None:
    """The bwrap executable: a system one first, then an absolute PATH entry."""
    for path in _SYSTEM_BWRAP:
        if os.access(path, os.X_OK):
            return path
    entries = [p for p in os.environ.get("PATH", "").split(os.pathsep) if os.path.isabs(p)]
    return shutil.which("bwrap", path=os.pathsep.join(entries)) if entries else None


def probe_bwrap(bwrap: str, *, network: bool) -> str | None:
    """None when bwrap can build a sandbox like a command's here, else why not (one line).

    It fails where user namespaces are off for unprivileged users, inside some containers, and
    under AppArmor rules that forbid them (Ubuntu 24.04 without a bwrap profile).
    """
    true = shutil.which("true") or "/bin/true"
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *_NAMESPACES]
    argv += [] if network else ["--unshare-net"]
    try:
        done = subprocess.run(  # a clean environment, as every bwrap the agent starts (`launch`)
            [*argv, "--", true], capture_output=True, timeout=PROBE_SECONDS, stdin=subprocess.DEVNULL, env={}
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{bwrap} cannot be run: {exc}"
    if done.returncode == 0:
        return None
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return f"bwrap cannot start here: {said[-1] if said else f'exit code {done.returncode}'}"


_NAMESPACES = ("--unshare-pid", "--unshare-ipc", "--new-session", "--cap-drop", "ALL")


def _inside(path: Path, parents: Sequence[Path]) -> bool:
    return any(path == p or p in path.parents for p in parents)


def private_dirs() -> list[Path]:
    """Directories given an empty tmpfs of their own: /tmp, $TMPDIR, the user's runtime dir."""
    found = [Path("/tmp")]
    for name in (os.environ.get("TMPDIR"), runtime_dir()):
        if name and os.path.isabs(name) and os.path.isdir(name):
            path = Path(name).resolve()
            if path not in found and path != Path("/"):
                found.append(path)
    return found


def runtime_dir() -> str:
    """The user's runtime dir (`$XDG_RUNTIME_DIR`, else `/run/user/<uid>`): their sessions' sockets."""
    return os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"


def _is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError:
        return False


def bwrap_argv(bwrap: str, command: Sequence[str], c: Confinement) -> list[str]:
    """`command` (an argv) confined by bwrap as the module docstring describes."""
    if c.whole:
        argv = [bwrap, "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        for path in c.hidden:
            argv += _cover(path, c.writable, (), ())
        argv += [*_NAMESPACES, *([] if c.network else ["--unshare-net"])]
        argv += ["--die-with-parent"] if c.die_with_parent else []
        return [*argv, "--chdir", str(c.cwd), "--", *command]
    argv = [bwrap, "--ro-bind", "/", "/"]
    private = private_dirs()
    bound = [*c.writable, *(p for repo in c.git for p in (*repo.writable, *repo.runs_code))]
    holding = [p for p in private if any(_inside(b, [p]) for b in bound)]  # a project in /tmp
    later = [  # the rest, where an empty tmpfs does not cover them already
        path
        for path in private
        if path not in holding
        and not any(p != path and p not in holding and _inside(path, [p]) for p in private)
    ]
    for path in holding:
        argv += ["--tmpfs", str(path), *_named_in(path, c.named, [*holding, *later])]
    for root in c.writable:
        argv += ["--bind", str(root), str(root)]
    for repo in c.git:
        for directory in repo.writable:
            argv += ["--bind", str(directory), str(directory)]
        if not c.git_writable:
            for path in repo.runs_code:
                if not any(_inside(root, [path]) for root in c.writable):  # hooksPath = "." stays writable
                    argv += ["--ro-bind", str(path), str(path)]
    for path in c.read_only:  # over the roots: what decides the agent's own rules
        argv += ["--ro-bind", str(path), str(path)]
    argv += ["--dev", "/dev", "--proc", "/proc"]  # over the roots: a root never shows the host's
    for path in later:  # over the roots too
        argv += ["--tmpfs", str(path), *_named_in(path, c.named, [*holding, *later])]
    for name in {os.path.realpath(s) for s in _SOCKETS if _is_socket(s)}:
        argv += ["--ro-bind", "/dev/null", name]
    for path in c.hidden:
        argv += _cover(path, c.writable, private, c.named)
    argv += [*_NAMESPACES, *([] if c.network else ["--unshare-net"])]
    argv += ["--die-with-parent"] if c.die_with_parent else []
    return [*argv, "--chdir", str(c.cwd), "--", *command]


def _named_in(tmpfs: Path, named: Sequence[Path], mounted: Sequence[Path]) -> list[str]:
    """Read-only binds of the named entries whose nearest tmpfs is the one over `tmpfs` (bound
    right after it: a later tmpfs nested in it would hide them)."""
    argv: list[str] = []
    for entry in named:
        over = [p for p in mounted if p != entry and _inside(entry, [p])]
        if over and max(over, key=lambda p: len(p.parts)) == tmpfs:
            argv += ["--ro-bind", str(entry), str(entry)]
    return argv


def _cover(path: Path, writable: Sequence[Path], private: Sequence[Path], named: Sequence[Path]) -> list[str]:
    """Mounts that make `path` empty, if the command would otherwise see it."""
    if not os.path.lexists(path) or any(_inside(root, [path]) for root in writable):
        return []  # nothing there, or it holds a root (which must stay reachable)
    if _inside(path, private) and not _inside(path, [*writable, *named]):
        return []  # already behind an empty tmpfs
    if path.is_dir():
        return ["--tmpfs", str(path), "--remount-ro", str(path)]
    return ["--ro-bind", "/dev/null", str(path)]


@dataclass(frozen=True, slots=True)
class Launch:
    """How to start bwrap: its argv, its own fixed environment, and the memfd (passed to it)
    that holds the command's environment; close `fd` once bwrap has started."""

    argv: list[str]
    env: dict[str, str]
    fd: int


def launch(argv: Sequence[str], env: Mapping[str, str], keep: Collection[str]) -> Launch:
    """Start `argv` (a `bwrap_argv`) so that `env` reaches only the command inside: bwrap's own
    environment is `keep` of `env` (the agent's marks), the rest `--setenv` pairs in a memfd that
    bwrap reads with `--args` (and closes) before anything else."""
    pairs = b"".join(
        b"--setenv\0" + _c_string(name) + b"\0" + _c_string(value) + b"\0"
        for name, value in env.items()
        if name and "=" not in name and "\0" not in name  # never a variable: bwrap would refuse it
    )
    fd = os.memfd_create("acp-agent-env", os.MFD_CLOEXEC)
    try:
        view = memoryview(pairs)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    own = {name: env[name] for name in keep if name in env}
    return Launch([argv[0], "--args", str(fd), *argv[1:]], own, fd)


def _c_string(text: str) -> bytes:
    """`text` encoded as the environment is, up to a NUL (which no variable can hold)."""
    return os.fsencode(text).split(b"\0", 1)[0]
