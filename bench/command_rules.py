"""`python bench/command_rules.py [--reps N]`: what the rules on commands and paths cost per call
(issue 41 items 5 and 8).

Figures (CPU time of this process per call, the best of 5 runs of `--reps` calls each; the caches
the agent keeps per line are cleared before every call, so each is a first reading):
- `analyse`: a command line read once for every rule (tree-sitter's syntax tree, the wrappers,
  the `-c` strings and `eval`s read in turn, and the strict reader's argv for allow rules, which
  a line a deny rule refuses never needs);
- `decide`: the rule engine's whole verdict on a `run_command`, with 6 deny and ask rules and
  4 allow rules of every kind (words, a prefix, a glob, a redirection);
- a path rule: a read under a deny of 40 `**` (the glob that froze the agent before) and under
  a plain `Read(./secrets/**)`, on a 300-segment path.
The goal: under 1 ms per command line under 1 KB.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `acp_agent` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp_agent.claude_code.setup.setup import load_claude_setup
from acp_agent.permissions.engine import RuleEngine
from acp_agent.permissions.question import PermissionQuestion
from acp_agent.tools.shell.command_analysis import analyse, exact_commands
from acp_agent.tools.shell.shell_syntax import bash_parser, read_syntax

LINES = {
    "short (`git status -s`)": "git status -s",
    "a list of four": "git status -s && git diff --stat; git log -1 | head -5",
    "wrapped (`sudo env nice timeout … rm`)": "sudo -u root env -i A=1 nice -n 5 timeout 9 /bin/rm -rf x",
    "nested (`bash -c \"sh -c 'eval …'\"`)": "bash -c \"sh -c 'eval rm x; git -C . push'\"",
    "a here-doc to a shell": "sh <<'EOF'\ncd build\nmake -j4 all\nrm -rf tmp\nEOF",
    "200 chars, quoted words": "git commit -m 'fix: the parser reads quotes' "
    + '"and more words here " ' * 7,
    "1 KB: 25 commands, options, quotes, $": " && ".join(
        f"git -C repo{i} status --short 'a b' \"c $d\"" for i in range(25)
    ),
    "1 KB: one command, 150 words": "echo " + " ".join(f"word{i}" for i in range(150)),
    "1 KB: substitutions, subshells, pipes": " ; ".join(
        f"(cd d{i} && echo $(ls -1 | wc -l) `date`) | tee -a log{i}" for i in range(16)
    ),
}
RULES = {
    "deny": ["Bash(rm:*)", "Bash(curl *)", "Bash(> /etc/passwd)", "Bash(rm -rf ~)"],
    "ask": ["Bash(git push:*)", "Bash(git * --force)"],
    "allow": ["Bash(git:*)", "Bash(npm test *)", "Bash(ls *)", "Bash(echo *)"],
}


def per_call_us(call: Callable[[], Any], reps: int) -> float:
    return min(timeit.Timer(call, timer=time.process_time).repeat(number=reps, repeat=5)) / reps * 1e6


def fresh(call: Callable[[], Any]) -> Callable[[], Any]:
    """`call` with the per-line caches cleared first (a line never read before)."""

    def run() -> Any:
        analyse.cache_clear()
        exact_commands.cache_clear()
        read_syntax.cache_clear()
        return call()

    return run


def engine(root: Path, rules: dict[str, list[str]]) -> RuleEngine:
    (root / "home" / ".claude").mkdir(parents=True)
    (root / "home" / ".claude" / "settings.json").write_text(json.dumps({"permissions": rules}))
    (root / "ws").mkdir()
    setup = load_claude_setup(
        root / "ws", home=root / "home", config_dir=None, trust_store=None, tracked=lambda r, p: False
    )
    return RuleEngine(setup, roots=lambda: (root / "ws",), home=root / "home", save=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=300)
    reps = parser.parse_args().reps
    started = time.perf_counter()
    bash_parser.now()
    print(f"tree-sitter's bash grammar imported in {(time.perf_counter() - started) * 1e3:.0f} ms (once)")
    rows: list[tuple[str, int, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        rules = engine(Path(tmp).resolve(), RULES)
        question = PermissionQuestion("c", "run_command", "Run", "execute", "execute", {"command": ""})
        for name, line in LINES.items():
            ask = replace(question, raw_input={"command": line})
            rows.append(
                (
                    name,
                    len(line.encode()),
                    per_call_us(fresh(lambda line=line: analyse(line).exact), reps),
                    per_call_us(fresh(lambda ask=ask: rules.decide(ask, "default")), reps),
                )
            )
    print(f"| {'command line':<42} | {'bytes':>5} | {'analyse':>9} | {'decide':>9} |")
    print(f"|{'-' * 44}|{'-' * 7}|{'-' * 11}|{'-' * 11}|")
    for name, size, analysed, decided in rows:
        print(f"| {name:<42} | {size:>5} | {analysed:>6.0f} µs | {decided:>6.0f} µs |")
    worst = max(decided for _, size, _, decided in rows if size < 1024)
    print(f"worst decide under 1 KB: {worst:.0f} µs (goal: under 1000 µs)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        deep = "/".join(["a"] * 300)
        for label, deny in (
            ("40 `**` then zz", "Read(./" + "/".join(["**"] * 40) + "/zz)"),
            ("`Read(./secrets/**)`", "Read(./secrets/**)"),
        ):
            paths = engine(root / label.strip("`()*/ "), {"deny": [deny]})
            read = PermissionQuestion("c", "read_file", "Read", "read", "none", {"path": deep})
            cost = per_call_us(lambda read=read, paths=paths: paths.decide(read, "default"), reps)
            print(f"a read of a 300-segment path under a deny of {label}: {cost:.0f} µs")


if __name__ == "__main__":
    main()
