"""`python bench/grant_checks.py [--reps N]`: what the permission checks of one tool call cost.

Figures (CPU time of this process per call, the best of 5 runs of `--reps` calls each: a busy box
inflates wall-clock time, much less CPU time):
- `parse_line`: a command line read into the argv of its simple commands (or refused), for a short
  line, a long quoted one, a four-part list and a refused one;
- `ToolGrants.covers` for `run_command` under an `allowed-tools` of three `Bash(…)` patterns;
- `sensitive_reason` for a write to a plain file and to a command file, in a repository with a
  `.claude` directory (commands, skills) at its root and in a subdirectory the session runs in.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `acp_agent` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp_agent.claude_code.conventions.allowed_tools import read_allowed_tools
from acp_agent.tools.files.sensitive import sensitive_reason
from acp_agent.tools.shell.command_line import parse_line

LINES = {
    "short (`git status -s`)": "git status -s",
    "long, quoted (200 chars)": "git commit -m 'fix: the parser reads quotes' "
    + '"and more words here " ' * 7,
    "a list of four": "git status -s && git diff --stat; git log -1 | head -5",
    "refused (`$(…)`)": "echo GRANTED $(touch pwned)",
}


def per_call_us(call: Callable[[], Any], reps: int) -> float:
    return min(timeit.Timer(call, timer=time.process_time).repeat(number=reps, repeat=5)) / reps * 1e6


def make_repo(root: Path) -> Path:
    (root / ".git").mkdir(parents=True)
    for base in (root, root / "pkg"):
        for n in range(20):
            (base / ".claude" / "commands").mkdir(parents=True, exist_ok=True)
            (base / ".claude" / "commands" / f"c{n}.md").write_text("Do it.\n")
            (base / ".claude" / "skills" / f"s{n}").mkdir(parents=True)
            (base / ".claude" / "skills" / f"s{n}" / "SKILL.md").write_text("---\nname: s\n---\n")
    (root / "pkg" / "src").mkdir()
    (root / "pkg" / "src" / "app.py").write_text("x = 1\n")
    return root / "pkg"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=2000)
    reps = parser.parse_args().reps
    rows = [
        (f"parse_line: {name}", per_call_us(lambda line=line: parse_line(line), reps))
        for name, line in LINES.items()
    ]
    grants = read_allowed_tools("Bash(git status:*), Bash(git diff:*), Bash(npm run *)")
    for name in ("short (`git status -s`)", "a list of four"):
        args = {"command": LINES[name]}
        rows.append(
            (f"covers run_command: {name}", per_call_us(lambda a=args: grants.covers("run_command", a), reps))
        )
    with tempfile.TemporaryDirectory() as tmp:
        cwd = make_repo(Path(tmp).resolve())
        rows.extend(
            (f"sensitive_reason: {path}", per_call_us(lambda p=path: sensitive_reason(cwd, p), reps // 10))
            for path in ("src/app.py", ".claude/commands/c1.md", "new/notes.md")
        )
    print(f"| {'figure':<58} | {'per call':>10} |")
    print(f"|{'-' * 60}|{'-' * 12}|")
    for label, us in rows:
        print(f"| {label:<58} | {us:>7.1f} µs |")


if __name__ == "__main__":
    main()
