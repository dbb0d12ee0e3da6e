"""A session's checkpoints: what each turn changed in the workspace, kept so a rewind can undo it.

Before a call that may change anything runs (a command, an MCP tool: `ToolContext.checkpoint`),
each root is snapshotted into the session's shadow git store (`shadow_git.py`), once a turn (taken
as the turn begins, beside its first model request, `prepare`); before an edit tool writes a file,
that file's before-image is kept (it may be ignored by git, or git may be missing; a turn of edits
alone needs no snapshot). Both are written and journaled (`CheckpointEntry`) before the change.
When the turn ends, its net changes are journaled (`ChangesEntry`, after a second snapshot if the
first was taken): each file with what it held before the turn and after it. A turn a crash ended
is closed when the session next runs a turn or a rewind.

Everything lives under `<state dir>/checkpoints/<session id>/` (`SessionStore.checkpoints`):
removed with the session (`session/delete`, `--keep-days`), and capped at `MAX_TURNS` turns with
changes a session (older turns' snapshots are pruned: a rewind reaches back that far).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from hashlib import sha1
from pathlib import Path

import anyio
import structlog

from acp_agent.journal.file_images import ImageStore, current_state, read_state
from acp_agent.journal.shadow_git import GIT_MISSING, ShadowGit, SnapshotFailed, find_git
from acp_agent.turn.context.history import JournalWriter
from acp_agent.turn.journal.entries import (
    ChangesEntry,
    CheckpointEntry,
    Entry,
    FileChange,
    FileImage,
    FileState,
    PromptEntry,
    RootTree,
)

__all__ = ["MAX_TURNS", "Checkpoints"]

log = structlog.get_logger(__name__)

MAX_TURNS = 100
"""Turns with changes whose snapshots a session keeps (Claude Code keeps 100 checkpoints too)."""
PRUNE_EVERY = 10
"""Turns past the cap before the older ones are pruned (a prune walks the store)."""
PACK_EVERY = 10
"""Snapshotted turns between two repacks of the stores' loose objects."""
SNAPSHOT_SECONDS = 60.0
"""A root whose snapshot takes longer is given up for the session (only edit images are kept)."""


@dataclass(frozen=True, slots=True)
class _Kept:
    """What a closed turn's checkpoint holds on to: its snapshots and its edit images."""

    prompt: int
    trees: frozenset[str]
    blobs: frozenset[str]


@dataclass(slots=True)
class _Turn:
    """The checkpoint of the turn running now (or of one a crash ended)."""

    prompt: int
    trees: dict[str, str] | None = None
    """Each root's tree before the turn's first change (None: not taken yet)."""
    prepared: dict[str, str] | None = None
    """The roots' trees taken when the turn began (`prepare`), for its first change to use."""
    images: dict[str, FileState | None] = field(default_factory=dict)
    early: set[str] = field(default_factory=set)
    """Files edited before the roots were snapshotted (before a command ran): their image, not
    the snapshot, says what they held before the turn."""

    def keep_image(self, path: str, state: FileState | None) -> None:
        if path not in self.images:
            self.images[path] = state
            if self.trees is None:
                self.early.add(path)

    @property
    def changed_anything(self) -> bool:
        return self.trees is not None or bool(self.images)

    def kept(self, after: Iterable[str]) -> _Kept:
        trees = frozenset([*(self.trees or {}).values(), *after])
        return _Kept(self.prompt, trees, frozenset(s.blob for s in self.images.values() if s is not None))


class Checkpoints:
    """One session's checkpoints (the `Checkpoint` seam its tools call), journaled in its journal."""

    def __init__(
        self,
        directory: Path,
        roots: Callable[[], tuple[Path, ...]],
        journal: JournalWriter,
        *,
        hidden: Iterable[Path] = (),
        git: str | None = None,
        prompts: int = 0,
        pending: _Turn | None = None,
        kept: Iterable[_Kept] = (),
    ) -> None:
        self.directory = directory
        self.roots = roots
        self.journal = journal
        self.hidden = tuple(hidden)
        self.git = git
        self.images = ImageStore(directory / "images")
        self.prompts = prompts
        """Prompts journaled so far: the next turn's prompt is this one (counted from 0)."""
        self._turn: _Turn | None = None
        self._pending = pending
        self._kept = list(kept)
        self._unpacked = 0
        """Turns snapshotted since the stores were last repacked (in this process)."""
        """The closed turns that changed something, oldest first (at most `MAX_TURNS` once pruned)."""
        self._stores: dict[str, ShadowGit] = {}
        self._given_up: dict[str, str] = {}
        """Roots whose snapshots failed or took too long: why."""
        self._lock = anyio.Lock()

    @classmethod
    def of_journal(
        cls,
        directory: Path,
        roots: Callable[[], tuple[Path, ...]],
        journal: JournalWriter,
        entries: Iterable[Entry],
        *,
        hidden: Iterable[Path] = (),
    ) -> Checkpoints:
        """A loaded session's checkpoints: the prompts counted, the closed turns' snapshots listed
        (for the cap), a turn a crash left open found."""
        prompts = 0
        turns: dict[int, _Turn] = {}
        after: dict[int, tuple[str, ...]] = {}
        for entry in entries:
            if isinstance(entry, PromptEntry):
                prompts += 1
            elif isinstance(entry, CheckpointEntry):
                turn = turns.setdefault(max(prompts - 1, 0), _Turn(max(prompts - 1, 0)))
                if entry.trees:
                    turn.trees = {t.root: t.tree for t in entry.trees}
                for image in entry.images:
                    turn.keep_image(image.path, image.state)
            elif isinstance(entry, ChangesEntry):
                after[entry.prompt] = tuple(t.tree for t in entry.trees)
        kept = [turns[p].kept(after[p]) for p in sorted(turns) if p in after]
        open_turns = [turns[p] for p in sorted(turns) if p not in after]
        pending = open_turns[-1] if open_turns else None
        return cls(
            directory,
            roots,
            journal,
            hidden=hidden,
            git=find_git(),
            prompts=prompts,
            pending=pending,
            kept=kept,
        )

    # ── what /status says ─────────────────────────────────────────────────────────────────────

    def status(self) -> str:
        """What a rewind can undo in this session, for /status."""
        if self.git is None:
            return f"the edit tools' changes only ({GIT_MISSING}: commands' changes are not kept)"
        line = "the edit tools' and commands' changes (a git snapshot of the roots before each turn)"
        if self._given_up:
            line += "; not for " + ", ".join(f"{root} ({why})" for root, why in self._given_up.items())
        return line

    # ── the turn's lifecycle (the engine) ─────────────────────────────────────────────────────

    async def turn_started(self) -> None:
        """A prompt's turn begins (before its prompt is journaled): a turn a crash left open is
        closed first, against the workspace as it is now."""
        await self.close_pending()
        self._turn = _Turn(self.prompts)
        self.prompts += 1

    async def turn_ended(self) -> None:
        """The turn is over: its net changes are journaled."""
        turn, self._turn = self._turn, None
        if turn is not None and turn.changed_anything:
            await self._close(turn)

    async def close_pending(self) -> None:
        """Journal the changes of a turn a crash ended (a rewind needs them)."""
        turn, self._pending = self._pending, None
        if turn is not None:
            await self._close(turn)

    # ── the tools' seam ───────────────────────────────────────────────────────────────────────

    async def prepare(self) -> None:
        """Snapshot the roots as the turn begins, beside its first model request, so that its
        first change rarely waits (cancelled with the turn if nothing needed it)."""
        turn = self._turn
        if turn is None or self.git is None:
            return
        async with self._lock:
            if turn.trees is None and turn.prepared is None:
                turn.prepared = await self._snapshot()

    async def before_change(self) -> None:
        turn = self._turn
        if turn is None or turn.trees is not None:
            return
        async with self._lock:
            if turn.trees is None:
                turn.trees = turn.prepared if turn.prepared is not None else await self._snapshot()
                entry = CheckpointEntry(trees=tuple(RootTree(r, t) for r, t in turn.trees.items()))
                self.journal(entry)

    async def before_write(self, path: Path) -> None:
        turn = self._turn
        key = str(path)
        if turn is None or key in turn.images:
            return
        async with self._lock:
            if key in turn.images:
                return
            found = await anyio.to_thread.run_sync(read_state, path)
            if found is not None:
                await anyio.to_thread.run_sync(self.images.keep, found[0].blob, found[1])
            state = found[0] if found else None
            turn.keep_image(key, state)
            # Not synced: the call's result, synced before it is reported, makes it durable too.
            self.journal(CheckpointEntry(images=(FileImage(key, state),)), sync=False)

    # ── snapshots ─────────────────────────────────────────────────────────────────────────────

    def store_of(self, root: Path) -> ShadowGit | None:
        """The shadow git store of a root (None: git is missing), in a folder named by its path."""
        if self.git is None:
            return None
        key = str(root)
        if key not in self._stores:
            name = "root-" + sha1(os.fsencode(key), usedforsecurity=False).hexdigest()[:16]
            self._stores[key] = ShadowGit(self.git, self.directory / name, root, self.hidden)
        return self._stores[key]

    def _snapshot_roots(self) -> list[Path]:
        """The roots a snapshot covers: not one inside another, never `/` or the home dir."""
        roots = [Path(os.path.realpath(r)) for r in self.roots()]
        home = Path(os.path.realpath(Path.home()))
        kept: list[Path] = []
        for root in roots:
            if root in (Path(root.anchor), home):
                self._given_up.setdefault(str(root), "too wide to snapshot")
                continue
            if str(root) in self._given_up or any(root.is_relative_to(k) for k in kept):
                continue
            kept = [k for k in kept if not k.is_relative_to(root)] + [root]
        return kept

    async def _snapshot(self) -> dict[str, str]:
        """Each root's tree now; a root whose snapshot fails is given up (and said in /status)."""
        trees: dict[str, str] = {}
        if self.git is None:
            return trees
        for root in self._snapshot_roots():
            store = self.store_of(root)
            assert store is not None
            try:
                with anyio.fail_after(SNAPSHOT_SECONDS):
                    trees[str(root)] = await store.snapshot()
            except (SnapshotFailed, OSError, TimeoutError) as exc:
                why = "it took too long" if isinstance(exc, TimeoutError) else str(exc)
                log.warning("checkpoint.snapshot_failed", root=str(root), problem=why)
                self._given_up[str(root)] = why
        return trees

    async def _close(self, turn: _Turn) -> None:
        """Journal what `turn` changed: the roots' snapshots compared (when a call that may change
        anything ran: otherwise no snapshot is needed), and each edited file's before-image
        against what it holds now where the snapshots do not say (ignored, or edited first)."""
        async with self._lock:
            changes: dict[str, FileChange] = {}
            after: dict[str, str] = {}
            if turn.trees:
                after = await self._snapshot()
                for root, before in turn.trees.items():
                    store = self._stores.get(root) or self.store_of(Path(root))
                    if store is None or root not in after:
                        continue
                    try:
                        found = await store.changes(before, after[root])
                    except SnapshotFailed as exc:
                        log.warning("checkpoint.diff_failed", root=root, problem=str(exc))
                        continue
                    for relative, old, new in found:
                        path = str(Path(root) / relative)
                        changes[path] = FileChange(path, old, new)
            for path, image in turn.images.items():
                seen = changes.get(path)
                if seen is not None and path not in turn.early:
                    continue  # snapshotted before its edit: the snapshots say it all
                now = (
                    seen.after
                    if seen is not None
                    else await anyio.to_thread.run_sync(current_state, Path(path))
                )
                if now != image:
                    changes[path] = FileChange(path, image, now)
                else:
                    changes.pop(path, None)
            trees = tuple(RootTree(r, t) for r, t in after.items())
            self.journal(ChangesEntry(turn.prompt, tuple(changes[p] for p in sorted(changes)), trees))
            self._kept.append(turn.kept(t.tree for t in trees))
            if len(self._kept) > MAX_TURNS + PRUNE_EVERY:
                await self._prune()
            elif trees:
                self._unpacked += 1
                if self._unpacked >= PACK_EVERY:
                    self._unpacked = 0
                    for root in after:
                        await self._repack(self._stores[root])

    async def _repack(self, store: ShadowGit) -> None:
        try:
            await store.repack()
        except SnapshotFailed as exc:
            log.warning("checkpoint.repack_failed", root=str(store.root), problem=str(exc))

    async def _prune(self) -> None:
        """Keep the last `MAX_TURNS` turns' snapshots and images; let the older ones go."""
        dropped, self._kept = self._kept[:-MAX_TURNS], self._kept[-MAX_TURNS:]
        trees = {tree for kept in self._kept for tree in kept.trees}
        blobs = {blob for kept in self._kept for blob in kept.blobs}
        for blob in {blob for kept in dropped for blob in kept.blobs} - blobs:
            await anyio.to_thread.run_sync(self.images.drop, blob)
        for store in self._stores.values():
            try:
                await store.prune(trees)
            except SnapshotFailed as exc:
                log.warning("checkpoint.prune_failed", root=str(store.root), problem=str(exc))
            await self._repack(store)
        log.info("checkpoint.pruned", turns=len(dropped), horizon=self._kept[0].prompt)

    async def content(self, states: Iterable[FileState]) -> dict[str, bytes]:
        """The content of each state's blob: the image store's, else a root store's."""
        found: dict[str, bytes] = {}
        missing: list[str] = []
        for state in states:
            data = await anyio.to_thread.run_sync(self.images.get, state.blob)
            if data is None:
                missing.append(state.blob)
            else:
                found[state.blob] = data
        folders = sorted(self.directory.glob("root-*")) if missing and self.git else []
        for folder in folders:
            store = ShadowGit(self.git or "git", folder, folder)
            try:
                found |= await store.blobs(b for b in missing if b not in found)
            except (SnapshotFailed, OSError) as exc:
                log.warning("checkpoint.read_failed", store=folder.name, problem=str(exc))
        return found
