"""Snapshots of a session root in a private git store, so a rewind can undo what commands changed.

One bare repository and index per root, under the session's checkpoint dir in the state dir (which
commands never see: it is a hidden path). Git's index keeps each file's stat data, so a snapshot
after the first one reads only the files that changed: `git add --all` (one lstat a file, a walk
of the directories for new ones), then `git write-tree`; the index is split (`core.splitIndex`),
so each writes only what changed of it. Each tree is kept by a ref until `prune` lets it go. The
first snapshot of a root packs its files in one pack (`core.bigFileThreshold=1`), not one loose
object a file. (`git status` with the untracked cache, then `git add` of what it lists, cost more
CPU on 40,000 files: bench/README.md.)

The user's repository is never read, written or consulted: git runs with our `GIT_DIR`,
`GIT_INDEX_FILE` and `GIT_WORK_TREE`, a clean environment (no system or global config, `HOME`
pointed at the store), hooks pointed at /dev/null, no fsmonitor, and `info/attributes` unsetting
every attribute that runs a filter or converts line endings (a `.gitattributes` in the tree could
otherwise name a filter, or store a CRLF file as LF). What is left out: the ignore rules as the
search tools read them (`.gitignore` files, the checkout's `.git/info/exclude`, git's global
excludes file, the root's `.ignore` and `.rgignore`), the agent's hidden paths, `.git`, and
nested repositories (git keeps only their commit, which a rewind leaves alone).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from hashlib import sha1
from pathlib import Path

import anyio
import structlog

from acp_agent.errors import AgentError
from acp_agent.process.lifetime import owned_env
from acp_agent.tools.search.ignore import global_excludes_file
from acp_agent.turn.journal.entries import FileState

__all__ = ["GIT_MISSING", "ShadowGit", "SnapshotFailed", "find_git", "tree_changes"]

log = structlog.get_logger(__name__)

GIT_MISSING = "git was not found"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
"""The empty tree's id: the snapshot of a root that holds nothing."""

_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=true",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.eol=lf",
    "core.symlinks=true",
    "core.filemode=true",
    "core.quotePath=false",
    "core.precomposeUnicode=false",
    "core.sparseCheckout=false",
    "core.splitIndex=true",
    "core.attributesFile=/dev/null",
    "core.askPass=",
    "index.version=4",
    "gc.auto=0",
    "maintenance.auto=false",
    "commit.gpgSign=false",
    "submodule.recurse=false",
    "safe.directory=*",
    "protocol.allow=never",
    "advice.addEmbeddedRepo=false",
)
_ATTRIBUTES = "* -text -filter -ident -diff -merge !eol !working-tree-encoding\n"
"""`info/attributes` wins over every `.gitattributes`: no filter runs, no line ending changes."""
_ROOT_IGNORES = (".ignore", ".rgignore")
_REPOSITORY_ENV = frozenset({"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"})


class SnapshotFailed(AgentError, RuntimeError):
    """A git command of the snapshot store failed (what it said is in the message)."""


def find_git() -> str | None:
    """The git binary, or None (then only the edit tools' before-images are kept)."""
    return shutil.which("git")


def blob_id(data: bytes) -> str:
    """Git's id of a blob of `data`, whether or not git stored it."""
    return sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class ShadowGit:
    """The snapshots of one root: a bare repository and its index in `directory`."""

    def __init__(self, git: str, directory: Path, root: Path, hidden: Iterable[Path] = ()) -> None:
        self.git = git
        self.directory = directory
        self.root = root
        self.hidden = tuple(hidden)
        self.git_dir = directory / "git"
        self.index = directory / "index"
        self._lock = anyio.Lock()
        self._head: str | None = None
        """The tree of the last snapshot (kept by `prune`)."""

    def _env(self) -> dict[str, str]:
        home = str(self.directory)
        return owned_env(
            {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "LC_ALL": "C",
                "HOME": home,
                "XDG_CONFIG_HOME": home,
                "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_CONFIG_GLOBAL": "/dev/null",
                "GIT_ATTR_NOSYSTEM": "1",
                "GIT_DIR": str(self.git_dir),
                "GIT_WORK_TREE": str(self.root),
                "GIT_INDEX_FILE": str(self.index),
                "GIT_TERMINAL_PROMPT": "0",
                "GIT_LITERAL_PATHSPECS": "1",
                "GIT_NO_REPLACE_OBJECTS": "1",
            }
        )

    async def _run(
        self, *args: str, stdin: bytes | None = None, config: tuple[str, ...] = (), ok: tuple[int, ...] = (0,)
    ) -> bytes:
        argv = [self.git]
        for item in (*_CONFIG, *config):
            argv += ["-c", item]
        argv += ["-c", f"core.excludesFile={self.directory / 'exclude'}", *args]
        result = await anyio.run_process(argv, input=stdin, env=self._env(), cwd=self.root, check=False)
        if result.returncode not in ok:
            said = result.stderr.decode("utf-8", "replace").strip()[-400:]
            raise SnapshotFailed(f"git {args[0]} failed ({result.returncode}): {said}")
        if result.returncode and result.stderr:  # `add --ignore-errors` skipped something
            log.info("checkpoint.git_warned", command=args[0], stderr=result.stderr[-400:])
        return result.stdout

    async def _prepare(self) -> None:
        """Create the store on first use, and write what git leaves out now (rules may change)."""
        if not (self.git_dir / "HEAD").exists():
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            env = {k: v for k, v in self._env().items() if k not in _REPOSITORY_ENV}
            result = await anyio.run_process(
                [self.git, "init", "--quiet", "--bare", "--template=", str(self.git_dir)],
                env=env,
                check=False,
            )
            if result.returncode:
                raise SnapshotFailed(f"git init failed: {result.stderr.decode('utf-8', 'replace')[-400:]}")
            (self.git_dir / "info").mkdir(exist_ok=True)
            (self.git_dir / "info" / "attributes").write_text(_ATTRIBUTES)
        _write_if_changed(self.directory / "exclude", self._excludes())
        (self.directory / "index.lock").unlink(missing_ok=True)  # a git killed mid-snapshot (ours alone)
        for partial in (self.git_dir / "objects" / "pack").glob("tmp_*"):  # and what it was packing
            partial.unlink(missing_ok=True)

    def _excludes(self) -> str:
        """The ignore rules git does not find by itself in the tree, and the agent's own paths."""
        parts: list[str] = []
        sources = [self.root / name for name in _ROOT_IGNORES]
        sources.append(self.root / ".git" / "info" / "exclude")
        found = global_excludes_file()
        if found is not None:
            sources.append(found)
        for source in sources:
            try:
                parts.append(source.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                continue
        for hidden in self.hidden:
            try:
                inside = hidden.relative_to(self.root)
            except ValueError:
                continue
            parts.append("/" + _escaped(inside.as_posix()))
        return "\n".join(parts) + "\n"

    async def snapshot(self) -> str:
        """The root as it is now, as a tree id; only what changed since the last snapshot is read."""
        async with self._lock:
            await self._prepare()
            first = not self.index.exists()  # every file, into one pack
            await self._run(
                "add", "--all", "--ignore-errors", "--", ".", config=_PACKED if first else (), ok=(0, 1)
            )
            tree = (await self._run("write-tree")).decode().strip()
            if tree != self._head:
                await anyio.to_thread.run_sync(
                    _write_atomic, self.git_dir / "refs" / "snapshots" / tree, b"%s\n" % tree.encode()
                )
            self._head = tree
            return tree

    async def repack(self) -> None:
        """Pack the loose objects the snapshots since the last repack wrote (a 4 KiB block each)."""
        async with self._lock:
            await self._run("repack", "-d", "-q", "--no-write-bitmap-index")

    async def prune(self, keep: set[str]) -> int:
        """Drop the snapshots whose trees are not in `keep` (the last one always stays) and the
        objects only they held; returns how many went."""
        async with self._lock:
            refs = self.git_dir / "refs" / "snapshots"
            dropped = [ref for ref in _listed(refs) if ref.name not in keep and ref.name != self._head]
            for ref in dropped:
                ref.unlink(missing_ok=True)
            if dropped:
                await self._run("prune", "--expire=now")
            return len(dropped)

    async def changes(self, before: str, after: str) -> list[tuple[str, FileState | None, FileState | None]]:
        """The files that differ between two snapshots: (path relative to the root, before, after);
        nested repositories (a commit, not files) left out."""
        if before == after:
            return []
        out = await self._run("diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", before, after)
        return tree_changes(out)

    async def blobs(self, ids: Iterable[str]) -> dict[str, bytes]:
        """The content of each blob id this store holds (one `cat-file --batch` for all)."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        out = await self._run("cat-file", "--batch", stdin="".join(f"{i}\n" for i in wanted).encode())
        found: dict[str, bytes] = {}
        at = 0
        for blob in wanted:
            end = out.index(b"\n", at)
            header = out[at:end].split()
            at = end + 1
            if len(header) == 3:
                size = int(header[2])
                found[blob] = out[at : at + size]
                at += size + 1
        return found


_PACKED = ("core.bigFileThreshold=1",)
"""The first snapshot streams every file into one pack: 40,000 loose objects would cost their
disk blocks (a 4 KiB block each) and as many inodes."""


def tree_changes(raw: bytes) -> list[tuple[str, FileState | None, FileState | None]]:
    """`git diff-tree -r -z` raw output as (path, before, after), gitlinks left out."""
    fields = raw.split(b"\0")
    out: list[tuple[str, FileState | None, FileState | None]] = []
    for i in range(0, len(fields) - 1, 2):
        meta = fields[i].decode().lstrip(":").split()
        if len(meta) < 5:
            continue
        old_mode, new_mode, old_id, new_id = meta[:4]
        if "160000" in (old_mode, new_mode):
            continue
        path = os.fsdecode(fields[i + 1])
        before = None if old_mode == "000000" else FileState(old_id, old_mode)
        after = None if new_mode == "000000" else FileState(new_id, new_mode)
        out.append((path, before, after))
    return out


def _escaped(path: str) -> str:
    """A literal path as a gitignore pattern."""
    return "".join("\\" + c if c in "*?[]\\!# " else c for c in path)


def _write_atomic(path: Path, data: bytes) -> None:
    """Write `path` whole or not at all (a temporary file renamed over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_bytes(data)
    os.replace(temp, path)


def _listed(directory: Path) -> list[Path]:
    try:
        return list(directory.iterdir())
    except OSError:
        return []


def _write_if_changed(path: Path, text: str) -> None:
    try:
        if path.read_text() == text:
            return
    except OSError:
        pass
    path.write_text(text)
