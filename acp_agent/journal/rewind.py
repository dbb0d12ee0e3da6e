"""Rewind: a session back to before one of its prompts, its files, its conversation, or both.

What the files go back to comes from the journal's file history, in the order it happened: each
turn's net changes (`ChangesEntry`) and each earlier rewind's restores. For every file changed
since the prompt, the target is what it held before the first change since, and what the turns
left is what the last change left. A file that holds that now is put back; one that holds the
target already is left; any other was changed since by someone else (the user, another process)
and is a conflict, left as it is and named. Every file is read and written from inside its root, one
directory at a time (`file_images.reached`): one outside every root, or behind a directory swapped
for a link since (by a background command, between two turns), is a conflict too, never followed.

The rewind is journaled (`RewindEntry`, synced) before any file is touched, and its end
(`RewoundEntry`) after the last one: a crash in between is finished by the next load
(`finish_interrupted`), file by file under the same rule, so a loaded session is in the old state
(no rewind entry) or the new one, never a mix. The conversation is cut by the entry itself
(`timeline.py`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import anyio
import structlog

from acp_agent.journal.checkpoints import Checkpoints
from acp_agent.journal.file_images import OffRoot, reached
from acp_agent.journal.timeline import PromptNotFound, PromptSpan, Timeline, interrupted_rewind
from acp_agent.journal.titles import prompt_title
from acp_agent.turn.context.history import History, JournalWriter
from acp_agent.turn.journal.entries import (
    ChangesEntry,
    Entry,
    FileChange,
    FileState,
    ModelEntry,
    PromptEntry,
    RewindEntry,
    RewoundEntry,
    ShownDiff,
)

__all__ = [
    "PAUSE_ENV",
    "RewindPlan",
    "Scope",
    "apply_rewind",
    "finish_interrupted",
    "parse_rewind",
    "plan_rewind",
    "prompt_list",
]

log = structlog.get_logger(__name__)

Scope = Literal["all", "chat", "files"]
PAUSE_ENV = "ACP_AGENT_TEST_PAUSE_REWIND"
"""A test hook: with this set to a path, a rewind creates that file once its first file is back,
then waits there forever (the kill -9 test kills it mid-restore)."""
DIFF_BYTES = 256 * 1024
"""A file larger than this is named in the rewind's question, without its diff."""
_USAGE = re.compile(r"\s*(\d+)\s*(?:(--chat|--files)\s*)?\Z")


def parse_rewind(arguments: str) -> tuple[int, Scope] | None:
    """`/rewind`'s arguments: None (list the prompts), or (N, scope).

    Raises:
        ValueError: they are not `N`, `N --chat` or `N --files` (the message says how).
    """
    if not arguments.strip():
        return None
    match = _USAGE.match(arguments)
    if match is None:
        raise ValueError(
            f"/rewind takes a prompt number, optionally --chat or --files (not {arguments.strip()!r}): "
            "/rewind lists the prompts"
        )
    flag = match.group(2)
    scope: Scope = "chat" if flag == "--chat" else "files" if flag == "--files" else "all"
    return int(match.group(1)), scope


# ── the file history ───────────────────────────────────────────────────────────────────────────


States = tuple[FileState | None, FileState | None]
"""What a file held before a change, and after it (None: nothing)."""


def _changes_since(entries: Sequence[Entry], ordinal: int) -> dict[str, States]:
    """Each file changed since prompt `ordinal` began: (what it held before, what the changes left)."""
    events: list[list[FileChange]] = []
    prompts = 0
    rewind: int | None = None  # the event of the rewind a `rewound` entry ends
    for entry in entries:
        if isinstance(entry, PromptEntry):
            prompts += 1
        elif isinstance(entry, ChangesEntry) and entry.prompt >= ordinal:
            events.append(list(entry.changes))
        elif isinstance(entry, RewindEntry):
            rewind = None
            if prompts - 1 >= ordinal and entry.restore:  # a rewind since the prompt: a change too
                rewind = len(events)
                events.append(list(entry.restore))
        elif isinstance(entry, RewoundEntry) and rewind is not None:
            late = set(entry.conflicts)  # not restored after all: no change happened there
            events[rewind] = [c for c in events[rewind] if c.path not in late]
            rewind = None
    net: dict[str, States] = {}
    for event in events:
        for change in event:
            first = net[change.path][0] if change.path in net else change.before
            net[change.path] = (first, change.after)
    return {path: states for path, states in net.items() if states[0] != states[1]}


def files_of(entries: Sequence[Entry], ordinal: int) -> list[str]:
    """The files the turn of prompt `ordinal` changed."""
    return sorted(
        {c.path for e in entries if isinstance(e, ChangesEntry) and e.prompt == ordinal for c in e.changes}
    )


def prompt_list(entries: Sequence[Entry], cwd: Path) -> str:
    """`/rewind` alone: the session's prompts, each with its first line and the files it changed."""
    timeline = Timeline.of(entries)
    if not timeline.prompts:
        return "No prompt to rewind to yet."
    lines = ["Prompts of this session (`/rewind N` goes back to before prompt N; add --chat for the "
             "conversation only, --files for the files only):"]  # fmt: skip
    for span in timeline.prompts:
        title = prompt_title(span.prompt.prompt) or prompt_title(span.prompt.blocks) or "(no text)"
        changed = [_shown(Path(p), cwd) for p in files_of(entries, span.ordinal)]
        files = f"{len(changed)} file(s) changed: {', '.join(changed[:8])}" if changed else "no file changed"
        lines.append(f"{span.number}. {title} ({files}{', …' if len(changed) > 8 else ''})")
    return "\n".join(lines)


def _shown(path: Path, cwd: Path) -> str:
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        return str(path)


# ── planning ───────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class RewindPlan:
    """What a rewind will do: back to before prompt `span.number`, over `scope`.

    `restore`: each file to put back, `before` what the turns left there (and it holds now),
    `after` the target; `conflicts`: files changed since by someone else (or no longer reached
    inside a root); `lost`: files whose snapshot is gone (pruned past the cap); `contents`: each
    target blob's bytes; `roots`: the session's roots, resolved, the only places it touches.
    """

    span: PromptSpan
    scope: Scope
    roots: tuple[Path, ...] = ()
    restore: tuple[FileChange, ...] = ()
    conflicts: tuple[str, ...] = ()
    lost: tuple[str, ...] = ()
    contents: dict[str, bytes] = field(default_factory=dict)

    @property
    def entry(self) -> RewindEntry:
        return RewindEntry(self.span.ordinal, self.scope, self.restore, (*self.conflicts, *self.lost))


async def plan_rewind(
    entries: Sequence[Entry],
    number: int,
    scope: Scope,
    checkpoints: Checkpoints | None,
    roots: Iterable[Path],
) -> RewindPlan:
    """The plan of `/rewind number` over `scope`, from the journal's `entries` (all of them), in
    the session's `roots`.

    Raises:
        PromptNotFound: no prompt `number` in the session as it stands.
    """
    span = Timeline.of(entries).span(number)
    resolved = await anyio.to_thread.run_sync(_resolved, tuple(roots))
    if scope == "chat" or checkpoints is None:
        return RewindPlan(span, scope, resolved)
    restore: list[FileChange] = []
    conflicts: list[str] = []
    for path, (target, left) in sorted(_changes_since(entries, span.ordinal).items()):
        try:
            now = await anyio.to_thread.run_sync(_state_now, Path(path), resolved)
        except OffRoot as exc:
            log.warning("rewind.off_root", path=path, problem=str(exc))
            conflicts.append(path)
            continue
        if now == target:
            continue
        if now != left:
            conflicts.append(path)
        else:
            restore.append(FileChange(path, left, target))
    contents = await checkpoints.content(c.after for c in restore if c.after is not None)
    lost = [c.path for c in restore if c.after is not None and c.after.blob not in contents]
    kept = tuple(c for c in restore if c.path not in lost)
    return RewindPlan(span, scope, resolved, kept, tuple(conflicts), tuple(lost), contents)


def _resolved(roots: tuple[Path, ...]) -> tuple[Path, ...]:
    """The roots as the checkpoints name their files (links resolved, as the snapshots' paths)."""
    return tuple(Path(os.path.realpath(root)) for root in roots)


def _root_of(path: Path, roots: Sequence[Path]) -> Path:
    """The root `path` lies in.

    Raises:
        OffRoot: none.
    """
    for root in roots:
        if path.is_relative_to(root) and path != root:
            return root
    raise OffRoot(f"{path} is outside the session's roots")


def _read_now(path: Path, roots: Sequence[Path]) -> tuple[FileState, bytes] | None:
    """What `path` holds now and its content, reached inside its root. Blocking.

    Raises:
        OffRoot: it is not reached inside one.
    """
    with reached(path, _root_of(path, roots)) as place:
        return place.state()


def _state_now(path: Path, roots: Sequence[Path]) -> FileState | None:
    found = _read_now(path, roots)
    return found[0] if found else None


async def plan_diffs(plan: RewindPlan) -> tuple[ShownDiff, ...]:
    """The diffs the rewind's question shows: what each file holds now → what it gets back."""

    def diffs() -> tuple[ShownDiff, ...]:
        shown = []
        for change in plan.restore:
            try:
                now = _read_now(Path(change.path), plan.roots)
            except (OffRoot, OSError):
                continue  # no longer reached inside its root: the put-back will refuse it
            old = _text(now[1]) if now else None
            new = _text(plan.contents.get(change.after.blob, b"")) if change.after else ""
            if (now is None or old is not None) and new is not None:
                shown.append(ShownDiff(change.path, old, new))
        return tuple(shown)

    return await anyio.to_thread.run_sync(diffs)


def _text(data: bytes) -> str | None:
    if len(data) > DIFF_BYTES or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


# ── doing it ───────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class RewindOutcome:
    """What a rewind did: the files put back, and those left as they were (changed by someone
    else, or their snapshot lost)."""

    restored: tuple[str, ...]
    conflicts: tuple[str, ...]


async def apply_rewind(
    plan: RewindPlan,
    entries: Sequence[Entry],
    *,
    history: History,
    journal: JournalWriter,
) -> RewindOutcome:
    """Journal the rewind, cut the history (unless `--files`), then put the files back."""
    entry = plan.entry
    journal(entry)
    if plan.scope != "files":
        cut(history, [*entries, entry])
    restored, late = await _restore(plan.restore, plan.contents, plan.roots)
    if plan.restore:
        journal(RewoundEntry(tuple(late)))
    return RewindOutcome(tuple(restored), (*entry.conflicts, *late))


def cut(history: History, entries: Sequence[Entry]) -> None:
    """The history as the journal now has it (the rewind applied), kept in the same object."""
    timeline = Timeline.of(entries)
    fresh = History.replay(timeline.entries)
    journal, history.journal = history.journal, None
    history.messages[:] = fresh.messages
    history.cleared = fresh.cleared
    history.journal = journal
    end = timeline.prompts[-1].end if timeline.prompts else 0
    if any(isinstance(e, ModelEntry) for e in timeline.entries[end:]):  # the model changed since
        history.drop_thinking("rewound past a model switch")


async def _restore(
    changes: Sequence[FileChange], contents: dict[str, bytes], roots: tuple[Path, ...]
) -> tuple[list[str], list[str]]:
    """Put each file back that still holds what the turns left (`roots` resolved: each file is
    reached inside its own, never through a link); returns (restored, conflicts)."""
    restored: list[str] = []
    late: list[str] = []
    pause = os.environ.get(PAUSE_ENV)
    for change in changes:
        path = Path(change.path)

        def put_back(change: FileChange = change, path: Path = path) -> bool:
            with reached(path, _root_of(path, roots)) as place:
                found = place.state()  # the last look, just before: a change since the plan wins
                now = found[0] if found else None
                if now == change.after:
                    return True
                if now != change.before:
                    return False
                target = change.after
                place.put(target, contents.get(target.blob) if target else None)
            return True

        try:
            done = await anyio.to_thread.run_sync(put_back)
        except (OffRoot, OSError) as exc:
            log.warning("rewind.restore_failed", path=str(path), problem=str(exc))
            done = False
        (restored if done else late).append(change.path)
        if pause and done:
            await _pause_for_test(Path(pause))
    return restored, late


async def _pause_for_test(marker: Path) -> None:
    await anyio.Path(marker).write_text(str(os.getpid()))
    log.warning("rewind.paused_for_test", marker=str(marker))
    await anyio.sleep_forever()


async def finish_interrupted(
    entries: Sequence[Entry], checkpoints: Checkpoints, journal: JournalWriter, roots: Iterable[Path]
) -> RewindOutcome | None:
    """Finish a rewind a crash stopped (at session/load, before it is answered)."""
    entry = interrupted_rewind(entries)
    if entry is None:
        return None
    contents = await checkpoints.content(c.after for c in entry.restore if c.after is not None)
    resolved = await anyio.to_thread.run_sync(_resolved, tuple(roots))
    restored, late = await _restore(entry.restore, contents, resolved)
    journal(RewoundEntry(tuple(late)))
    log.info("rewind.finished_after_crash", restored=len(restored), conflicts=len(late))
    return RewindOutcome(tuple(restored), tuple(late))


def find_prompt(entries: Sequence[Entry], message_id: str) -> int:
    """The number of the prompt whose user message has `message_id` (as session/load showed it).

    Raises:
        PromptNotFound: none has.
    """
    for span in Timeline.of(entries).prompts:
        if span.prompt.message_id == message_id:
            return span.number
    raise PromptNotFound(f"no prompt of this session has the messageId {message_id!r}")


def summary(plan: RewindPlan, outcome: RewindOutcome, cwd: Path) -> str:
    """What `/rewind N` did, for the user."""
    title = prompt_title(plan.span.prompt.prompt) or "(no text)"
    parts = [f"Rewound to before prompt {plan.span.number} ({title})."]
    if plan.scope != "files":
        parts.append("The conversation now ends before it.")
    if plan.scope != "chat":
        shown = [_shown(Path(p), cwd) for p in outcome.restored]
        parts.append(f"Files restored: {', '.join(shown)}." if shown else "No file needed restoring.")
        if outcome.conflicts:
            names = ", ".join(_shown(Path(p), cwd) for p in outcome.conflicts)
            parts.append(f"Not restored (changed since by someone else, or no snapshot left): {names}.")
    return " ".join(parts)
