"""`python bench/conventions.py [--skills N] [--commands N] [--reps N]`: discovering commands and skills.

A repository with `--skills` skills (200 by default, the read cap) and `--commands` command files
(100) in `.claude/`. Figures (medians over `--reps`):
- the discovery itself (`read_conventions`, in this process: the walk, every file read under the
  file tools' rules, the frontmatter parsed), in the repository and in an empty one;
- over real pipes, the agent's `session/new` answer and its `available_commands_update`, each timed
  from the `session/new` request, in the repository and in an empty one (a fresh agent each time,
  warmed up by one session first).
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `acp_agent` and `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp_agent.session.commands.convention_files import read_conventions
from acp_agent.testing import FakeMessagesAPI
from bench.common import AGENT, BenchError, Peer, Scratch, median


def make_repo(root: Path, skills: int, commands: int) -> Path:
    (root / ".git").mkdir(parents=True)
    for n in range(skills):
        skill = root / ".claude" / "skills" / f"skill-{n:03d}"
        (skill / "references").mkdir(parents=True)
        (skill / "SKILL.md").write_text(
            f"---\nname: skill-{n:03d}\ndescription: Does task number {n} the way this team likes it.\n"
            f"---\n# Skill {n}\n\n" + "Step by step instructions.\n" * 40
        )
        (skill / "references" / "guide.md").write_text("A reference.\n")
    for n in range(commands):
        folder = root / ".claude" / "commands" / (f"group{n % 5}" if n % 2 else "")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"command-{n:03d}.md").write_text(
            f"---\ndescription: Command {n}\nargument-hint: <file>\n---\nDo {n} to $ARGUMENTS.\n"
        )
    return root


def discovery_ms(cwd: Path, home: Path, reps: int) -> tuple[float, int, int]:
    times, found = [], None
    for _ in range(reps):
        start = time.perf_counter()
        found = read_conventions(cwd, home=home, config_dir=home / ".config" / "acp-agent")
        times.append(time.perf_counter() - start)
    assert found is not None
    return median(times) * 1000, len(found.skills), len(found.commands)


def session_new_ms(scratch: Scratch, api: FakeMessagesAPI, cwd: Path, reps: int) -> tuple[float, float, int]:
    """(session/new answered, available_commands_update received, commands listed): medians, ms."""
    answers, updates, listed = [], [], 0
    for rep in range(reps):
        got = threading.Event()
        seen: dict[str, Any] = {}

        def watch(
            message: dict[str, Any], now: float, seen: dict[str, Any] = seen, got: threading.Event = got
        ) -> None:
            update = (message.get("params") or {}).get("update") or {}
            if update.get("sessionUpdate") == "available_commands_update" and seen.get("warm"):
                seen["at"], seen["count"] = now, len(update["availableCommands"])
                got.set()

        peer = Peer(AGENT, scratch.env(api.base_url), cwd, scratch.stderr_path(f"conventions-{rep}"))
        peer.on_message = watch
        try:
            peer.initialize()
            peer.new_session(scratch.workspace)  # the first session pays for the thread pool
            time.sleep(0.5)
            seen["warm"] = True
            sent = time.perf_counter()
            answered, _ = peer.new_session(cwd)
            if not got.wait(30):
                raise BenchError("no available_commands_update within 30 s")
            answers.append(answered - sent)
            updates.append(seen["at"] - sent)
            listed = seen["count"]
        finally:
            peer.close()
    return median(answers) * 1000, median(updates) * 1000, listed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skills", type=int, default=200)
    parser.add_argument("--commands", type=int, default=100)
    parser.add_argument("--reps", type=int, default=10)
    opts = parser.parse_args()
    with Scratch() as scratch, FakeMessagesAPI() as api:
        repo = make_repo(scratch.root / "repo", opts.skills, opts.commands)
        empty = scratch.root / "empty"
        (empty / ".git").mkdir(parents=True)
        full_ms, skills, commands = discovery_ms(repo, scratch.home, opts.reps)
        empty_ms, _, _ = discovery_ms(empty, scratch.home, opts.reps)
        runs: dict[Path, list[tuple[float, float, int]]] = {repo: [], empty: []}
        for _ in range(max(3, opts.reps // 2)):  # alternated: the machine's load drifts
            for cwd, results in runs.items():
                results.append(session_new_ms(scratch, api, cwd, 1))
        answer, update = (median([r[i] for r in runs[repo]]) for i in (0, 1))
        empty_answer, empty_update = (median([r[i] for r in runs[empty]]) for i in (0, 1))
        listed = runs[repo][-1][2]
    print(f"{skills} skills and {commands} command files found; medians of {opts.reps} (agent: fewer)")
    print(f"| {'figure':<58} | {'repository':>10} | {'empty repo':>10} |")
    print(f"|{'-' * 60}|{'-' * 12}|{'-' * 12}|")
    rows = [
        ("discovery (read_conventions, in process)", full_ms, empty_ms),
        ("session/new → its answer (over pipes)", answer, empty_answer),
        ("session/new → available_commands_update (over pipes)", update, empty_update),
    ]
    for label, full, none in rows:
        print(f"| {label:<58} | {full:>7.1f} ms | {none:>7.1f} ms |")
    print(f"commands listed in the update: {listed}")


if __name__ == "__main__":
    main()
