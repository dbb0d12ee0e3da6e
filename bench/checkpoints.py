"""`python bench/checkpoints.py [--files N] [--turns N] [--touch N]`: what checkpoints cost on a
large repository (issue 34 item 1), and what a rewind takes.

A repository of `--files` tracked files (40,000 by default) and a tenth as many ignored ones
(`acp_agent/testing/repo.py`). A session's checkpoints (`journal/checkpoints.py`, the
agent's own code, its journal a list) run `--turns` turns (100); each touches `--touch` files (10),
one turn in two through the edit tools alone (each file's before-image kept first: no snapshot),
the other half through the edit tools and half by "a command" (the roots snapshotted before it and
after the turn), which also creates one file and deletes one. Printed:

- the first snapshot (the session's first turn: every file read once);
- the cost per turn, wall clock (and CPU, steadier on a shared box): what the checkpoint calls
  add to each kind of turn (median and p90), and the snapshot the engine takes as a turn begins,
  beside its first model request;
- the state after all turns: the checkpoint folder on disk and the journal lines they added;
- a rewind of one turn and of half the turns: planning and restoring, wall clock.

For comparison, the same change detection in Python (`--python`): the search tools' own walk
(`tools/search/ignore.py`, the same ignore rules), one lstat a file against the last scan's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `acp_agent` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio

from acp_agent.journal.checkpoints import Checkpoints
from acp_agent.journal.rewind import apply_rewind, plan_rewind
from acp_agent.journal.shadow_git import find_git
from acp_agent.testing.repo import RepoShape, make_repo
from acp_agent.tools.search.ignore import walk_files
from acp_agent.turn.context.history import History
from acp_agent.turn.journal.entries import ChangesEntry, CheckpointEntry, Entry, MetaEntry, PromptEntry
from acp_agent.turn.journal.lines import entry_json


def _size(path: Path) -> int:
    """Bytes on disk (allocated blocks) under `path`."""
    total = 0
    for folder, _, names in os.walk(path):
        for name in names:
            total += os.lstat(os.path.join(folder, name)).st_blocks * 512
    return total


def _cpu() -> float:
    """CPU seconds of this process and of the children it waited for (git)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def _sources(root: Path) -> list[Path]:
    """The tracked sources a turn touches: what the ignore rules keep (not generated output)."""
    return sorted(
        Path(p) for p, relative in walk_files(root) if relative.endswith(".py") and not os.path.islink(p)
    )


async def _run(files: int, turns: int, touch: int, python: bool) -> None:
    git = find_git()
    if git is None:
        sys.exit("git is not installed: checkpoints keep only the edit tools' images, nothing to measure")
    with tempfile.TemporaryDirectory(prefix="acp-bench-checkpoints-") as scratch:
        root = make_repo(Path(scratch) / "repo", RepoShape(tracked=files, ignored=files // 10))
        sources = _sources(root)
        state = Path(scratch) / "state"
        journal: list[Entry] = [MetaEntry(1, "sess_bench", str(root), "2026-01-01T00:00:00Z")]

        def write(entry: Entry, *, sync: bool = True) -> None:
            journal.append(entry)

        checkpoints = Checkpoints(state, lambda: (root,), write, git=git)
        load = os.getloadavg()[0]
        print(f"repository: {len(sources):,} tracked files, {files // 10:,} ignored; load {load:.1f}")

        started = time.perf_counter()
        journal.append(PromptEntry([{"type": "text", "text": "turn 0"}]))
        await checkpoints.turn_started()
        await checkpoints.before_change()
        await checkpoints.turn_ended()
        first = time.perf_counter() - started
        baseline = _size(state)
        print(f"first snapshot (every file read once): {first:.1f} s, store {baseline / 1e6:.1f} MB")

        waits: dict[str, list[float]] = {"edits": [], "command": []}
        cpu: dict[str, list[float]] = {"edits": [], "command": []}
        beside: dict[str, list[float]] = {"edits": [], "command": []}
        for n in range(1, turns + 1):
            kind = "command" if n % 2 == 0 else "edits"
            picked = [sources[(n * 7919 + i * 104729) % len(sources)] for i in range(touch)]
            journal.append(PromptEntry([{"type": "text", "text": f"turn {n}"}]))
            await checkpoints.turn_started()
            t0 = time.perf_counter()
            await checkpoints.prepare()  # the engine runs it beside the turn's first model request
            beside[kind].append(time.perf_counter() - t0)
            t0, c0 = time.perf_counter(), _cpu()
            edited = picked if kind == "edits" else picked[: touch // 2]
            for path in edited:  # an edit tool: the file's before-image first
                await checkpoints.before_write(path)
                path.write_text(f"turn {n} edited this\n{path.name}\n")
            if kind == "command":  # then a command: changes 4 files, creates one, deletes one
                await checkpoints.before_change()
                for path in picked[touch // 2 : -1]:
                    path.write_text(f"turn {n}'s command changed this\n")
                if picked[-1].exists():
                    picked[-1].unlink()
                (root / "src" / f"created-{n}.txt").write_text(f"created by turn {n}\n")
            await checkpoints.turn_ended()
            waits[kind].append(time.perf_counter() - t0)
            cpu[kind].append(_cpu() - c0)
        added = [e for e in journal if isinstance(e, CheckpointEntry | ChangesEntry)]
        journaled = sum(len(json.dumps(entry_json(e))) + 1 for e in added)

        def stats(samples: list[float]) -> str:
            ordered = sorted(samples)
            p90 = ordered[max(int(len(ordered) * 0.9) - 1, 0)]
            return f"median {_ms(statistics.median(ordered))}, p90 {_ms(p90)}"

        print(f"cost per turn touching {touch} files, wall, added to the turn (the checkpoint calls):")
        print(f"  edit tools only: {stats(waits['edits'])} (CPU, agent and git: {stats(cpu['edits'])})")
        print(
            f"  {touch // 2} edits and a command changing {touch // 2}: {stats(waits['command'])} "
            f"(CPU, agent and git: {stats(cpu['command'])})"
        )
        print(f"  beside the first model request, the snapshot as a turn begins: {stats(beside['command'])}")
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        print(f"  git's CPU over all turns: {children.ru_utime + children.ru_stime:.1f} s")
        print(
            f"state after {turns} turns: checkpoint folder {_size(state) / 1e6:.1f} MB on disk (the first "
            f"snapshot's {baseline / 1e6:.1f} MB included), journal lines {journaled / 1e6:.2f} MB"
        )

        history = History(journal=write)
        for back in (turns, turns // 2):
            t0 = time.perf_counter()
            plan = await plan_rewind(journal, back + 1, "files", checkpoints)
            t1 = time.perf_counter()
            outcome = await apply_rewind(plan, journal, history=history, journal=write, roots=(root,))
            t2 = time.perf_counter()
            print(
                f"rewind to before prompt {back + 1} ({len(outcome.restored)} files back): "
                f"plan {_ms(t1 - t0)}, restore {_ms(t2 - t1)}, total {_ms(t2 - t0)}"
            )

        if python:
            _python_scan(root)


def _python_scan(root: Path) -> None:
    """The alternative: detect changes in Python with the search tools' walk and one lstat a file."""

    def scan() -> dict[str, tuple[int, int, int]]:
        seen = {}
        for absolute, _ in walk_files(root, include_hidden=True):
            info = os.lstat(absolute)
            seen[absolute] = (info.st_mtime_ns, info.st_size, info.st_ino)
        return seen

    t0 = time.perf_counter()
    last = scan()
    first = time.perf_counter() - t0
    timings, cpu = [], []
    for _ in range(5):
        t0, c0 = time.perf_counter(), time.process_time()
        now = scan()
        changed = [p for p, key in now.items() if last.get(p) != key]
        timings.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        last = now
        assert not changed
    print(
        f"python change detection (walk with the ignore rules + lstat, {len(last):,} files): "
        f"first {_ms(first)}, then median {_ms(statistics.median(timings))} a scan "
        f"(CPU {_ms(statistics.median(cpu))}; content not kept)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=40_000)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--touch", type=int, default=10)
    parser.add_argument("--python", action="store_true", help="also time the pure-Python change detection")
    args = parser.parse_args()
    anyio.run(_run, args.files, args.turns, args.touch, args.python)


if __name__ == "__main__":
    main()
