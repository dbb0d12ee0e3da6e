"""Re-record the offline demo cassette (acp_agent/demo/demo.jsonl).

The turn is scripted on the loopback Messages API and recorded through the real agent and SDK with
`--record`, so the cassette holds exactly the exchanges a real run produces. Run it after changing
the sample project, the tools or the wire format:

    .venv/bin/python scripts/record_demo.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from acp_agent.demo.workspace import DEMO_PROMPT, cassette_path, make_workspace
from acp_agent.testing import FakeMessagesAPI, replies

MODEL = "claude-sonnet-5-5"


def script() -> list[replies.Message]:
    return [
        replies.tool_use(
            "list_files", {}, text="I'll start by looking at the project layout.", usage=(1850, 60)
        ),
        replies.tool_use(
            "read_file",
            {"path": "calc.py"},
            text="There is one module and its tests. Let me read the module.",
            usage=(2010, 55),
        ),
        replies.message(
            [
                replies.text_block(
                    "Found it: `average()` adds 1 to the mean, so `average([1, 2, 3])` "
                    "returns 3 instead of 2. Here is the plan.",
                    chunks=4,
                ),
                replies.tool_use_block(
                    "update_plan",
                    {
                        "entries": [
                            {
                                "content": "Remove the stray `+ 1` from average() in calc.py",
                                "priority": "high",
                                "status": "in_progress",
                            },
                            {
                                "content": "Tell the user how to run the tests",
                                "priority": "medium",
                                "status": "pending",
                            },
                        ]
                    },
                ),
            ],
            stop_reason="tool_use",
            usage=(2240, 140),
        ),
        replies.tool_use(
            "edit_file",
            {
                "path": "calc.py",
                "old_string": "return sum(values) / len(values) + 1",
                "new_string": "return sum(values) / len(values)",
            },
            usage=(2420, 90),
        ),
        replies.tool_use("update_plan", {"index": 1, "status": "completed"}, usage=(2560, 40)),
        replies.text(
            "Fixed: `average()` in `calc.py` no longer adds 1 to the mean, so "
            "`test_average` now expects and gets 2. Run `python test_calc.py` (or "
            "`python -m pytest -q`) to check.",
            chunks=12,
            usage=(2650, 70),
        ),
    ]


def main() -> int:
    target = cassette_path()
    with FakeMessagesAPI() as api, tempfile.TemporaryDirectory() as home:
        api.script(*script())
        workspace = make_workspace(Path(home))
        recording = Path(home) / "demo.jsonl"
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": home,
            "ANTHROPIC_API_KEY": "record",
            "ANTHROPIC_BASE_URL": api.base_url,
            "NO_PROXY": "127.0.0.1,localhost",
            "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
            "ACP_AGENT_LOG_LEVEL": "warning",
        }
        agent = f"{sys.executable} -m acp_agent --model {MODEL} --record {recording}"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "acp_agent",
                "smoke",
                DEMO_PROMPT,
                "--cwd",
                str(workspace),
                "--agent",
                agent,
                "--yes",
                *[f"--env={k}={v}" for k, v in env.items()],
            ],
            env=env,
            check=False,
        )
        if done.returncode != 0:
            print(f"recording failed: smoke exited {done.returncode}", file=sys.stderr)
            return done.returncode
        shutil.copyfile(recording, target)
    print(f"wrote {target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
