"""Start-up with no platform chosen, alternated against another tree, and each platform's import cost.

    python bench/platforms.py --other /tmp/main-export [--rounds 10]

Part 1: spawn → `session/new` answered, for this tree and `--other` (a `git archive` export of the
commit to compare with, run with this venv), alternating round by round so load drifts hit both.
Part 2: what choosing a platform adds when its client is first built (in the warm-up thread, never
before `session/new`): a fresh interpreter importing the SDK's client for it and its packages,
against importing the SDK's first-party client alone.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PYTHON = str(REPO / ".venv" / "bin" / "python")

IMPORTS = {
    "anthropic (first party)": "import anthropic; anthropic.AsyncAnthropic",
    "bedrock": "import anthropic; anthropic.AsyncAnthropicBedrock; import boto3, botocore.auth, botocore.eventstream",  # noqa: E501
    "vertex": "import anthropic; anthropic.AsyncAnthropicVertex; import google.auth, google.auth.transport.requests",  # noqa: E501
    "foundry (key)": "import anthropic; anthropic.AsyncAnthropicFoundry",
    "foundry (Entra ID)": "import anthropic; anthropic.AsyncAnthropicFoundry; import azure.identity",
}


def session_new_ms(tree: Path, home: Path) -> float:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "PYTHONPATH": str(tree),
        "ANTHROPIC_API_KEY": "bench-key",
        "ACP_AGENT_STATE_DIR": str(home / "state"),
        "ACP_AGENT_LOG_LEVEL": "error",
    }
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(home), "mcpServers": []}},
    ]
    started = time.perf_counter()
    proc = subprocess.Popen(
        [PYTHON, "-m", "acp_agent"],
        cwd=home,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
    proc.stdin.flush()
    elapsed = float("nan")
    for raw in proc.stdout:
        if json.loads(raw).get("id") == 2:
            elapsed = (time.perf_counter() - started) * 1000
            break
    proc.stdin.close()
    proc.wait(timeout=10)
    return elapsed


def import_ms(code: str, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        subprocess.run([PYTHON, "-c", code], check=True)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--other", type=Path, required=True, help="an export of the commit to compare with")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    here, there = [], []
    with tempfile.TemporaryDirectory() as scratch:
        for n in range(args.rounds):
            for tree, out in (
                ((REPO, here), (args.other, there)) if n % 2 == 0 else ((args.other, there), (REPO, here))
            ):
                home = Path(scratch) / f"h{n}-{len(out)}-{tree.name}"
                home.mkdir()
                out.append(session_new_ms(tree, home))
    print(f"spawn → session/new, median of {args.rounds} (alternated):")
    for label, samples in (("this tree", here), ("--other", there)):
        p90 = sorted(samples)[int(0.9 * len(samples)) - 1]
        print(f"  {label:<10}: {statistics.median(samples):7.1f} ms   (p90 {p90:.1f})")
    print("import cost in a fresh interpreter, median of 5 (paid once, in the warm-up thread):")
    base = import_ms("pass", 5)
    for name, code in IMPORTS.items():
        print(f"  {name:<24}: {import_ms(code, 5) - base:7.1f} ms over a bare interpreter")
    return 0


if __name__ == "__main__":
    sys.exit(main())
