"""The adversarial campaign of issue 19, too slow for CI: prints counts, asserts nothing.

    python bench/hostile.py kills [--trials 60]     kill -9 at random moments of a tool batch
    python bench/hostile.py race [--operations 600] a directory swapped with a symlink to the
                                                    outside while read_file/write_file use it

`kills`: each trial runs a batch (write_file, run_command, read_file, edit_file in a random order
and number), SIGKILLs the agent after a random delay, loads the session in a new agent, sends one
more prompt, and checks the history that request carries by the tool_use/tool_result rule
(`tests/support/history.py`). A trial whose reload or request fails counts as invalid too.

`race`: `tests/support/race.py` (renameat2 RENAME_EXCHANGE in a loop, or os.rename swaps); prints
reads and writes tried, refused, and escapes (outside content read, outside files created,
changed, or `.tmp` files left there).
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support import base_env
from tests.support.agent import AgentProcess
from tests.support.client import allow, prompt_until_killed
from tests.support.history import history_problems
from tests.support.race import run_race

TOOLS = [
    ("write_file", lambda n: {"path": f"w{n}.txt", "content": f"{n}\n"}),
    ("run_command", lambda n: {"command": f"echo {n} >> ran.txt; sleep 0.{random.randint(1, 6)}"}),
    ("read_file", lambda n: {"path": "README.md"}),
    ("edit_file", lambda n: {"path": "README.md", "old_string": "demo", "new_string": "demo"}),
]


async def kill_trial(tmp: Path, rng: random.Random) -> tuple[bool, str, int]:
    """One trial: (valid, what was wrong, tool results the reload showed as completed)."""
    workspace = tmp / "workspace"
    workspace.mkdir()
    (workspace / "README.md").write_text("# demo\n")
    with FakeMessagesAPI() as api:
        env = base_env(
            tmp,
            ANTHROPIC_API_KEY="bench-key",
            ANTHROPIC_BASE_URL=str(api.base_url),
            ACP_AGENT_MODEL="claude-test-1",
            ACP_AGENT_STATE_DIR=str(tmp / "state"),
            ACP_AGENT_STREAMING=rng.choice(["0", "1"]),
        )
        batches = []
        for turn in range(rng.randint(1, 3)):
            picks = [rng.choice(TOOLS) for _ in range(rng.randint(2, 5))]
            batches.append(
                replies.message(
                    [
                        replies.tool_use_block(name, make(turn * 10 + i))
                        for i, (name, make) in enumerate(picks)
                    ],
                    stop_reason="tool_use",
                )
            )
        api.script(*batches, replies.text("done"))
        async with AgentProcess.start(
            env=env, on_request=allow, check_on_exit=False, stderr="devnull"
        ) as agent:
            await agent.initialize()
            session = await agent.new_session(workspace)
            async with anyio.create_task_group() as tg:
                tg.start_soon(prompt_until_killed, agent, session)
                await anyio.sleep(rng.uniform(0.05, 2.0))
                os.kill(agent.pid, signal.SIGKILL)
        api.script(replies.text("back"))
        before = len(api.requests)
        async with AgentProcess.start(env=env, check_on_exit=False, stderr="devnull") as agent:
            await agent.initialize()
            loaded = await agent.request(
                "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
            )
            if "result" not in loaded:
                return False, f"load failed: {loaded.get('error')}", 0
            completed = sum(1 for p in agent.updates(session) if p["update"].get("status") == "completed")
            response = await agent.prompt(session, "are you back?")
        if "result" not in response or len(api.requests) == before:
            return False, f"the next prompt failed: {response.get('error')}", completed
        problems = history_problems(api.requests[-1].body["messages"])
        return not problems, "; ".join(problems), completed


async def kills(trials: int, seed: int) -> None:
    rng = random.Random(seed)
    valid = invalid = completed = 0
    started = time.monotonic()
    for number in range(trials):
        with tempfile.TemporaryDirectory(prefix="acp-kill-") as tmp:
            ok, why, done = await kill_trial(Path(tmp), rng)
        valid += ok
        invalid += not ok
        completed += done
        if not ok:
            print(f"trial {number}: INVALID: {why}", flush=True)
    print(
        f"kill -9 during tool batches: {trials} trials, {valid} valid reloaded histories, "
        f"{invalid} invalid; {completed} completed tool results replayed; seed {seed}; "
        f"{time.monotonic() - started:.0f} s"
    )


def race(operations: int) -> None:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="acp-race-") as tmp:
        c = run_race(Path(tmp), operations)
    how = "renameat2 RENAME_EXCHANGE" if c.exchange else "os.rename swaps"
    print(
        f"cwd race ({how}, {c.swaps:,} swaps): {c.reads + c.writes + c.image_reads} operations "
        f"({c.reads} reads, {c.writes} writes, {c.image_reads} image reads), {c.refused} refused; "
        f"escapes {c.escapes}: {c.outside_reads} outside reads, "
        f"{c.outside_image_reads} outside image reads, {c.outside_created} files created outside, "
        f"{c.outside_overwritten} outside file overwritten, {c.outside_tmp} .tmp left outside; "
        f"{time.monotonic() - started:.1f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    kill = sub.add_parser("kills", help="kill -9 at random moments of tool batches")
    kill.add_argument("--trials", type=int, default=60)
    kill.add_argument("--seed", type=int, default=19)
    swap = sub.add_parser("race", help="swap a directory with a symlink while the tools use it")
    swap.add_argument("--operations", type=int, default=600)
    args = parser.parse_args()
    if args.what == "kills":
        anyio.run(kills, args.trials, args.seed)
    elif args.what == "race":
        race(args.operations)


if __name__ == "__main__":
    main()
