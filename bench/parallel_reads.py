"""`python bench/parallel_reads.py [--delay MS] [--reps N]`: 5 read_file calls of one reply.

The agent runs over real pipes against the loopback Messages API, with an editor (this script)
that offers `fs.readTextFile` and answers every `fs/read_text_file` after `--delay` ms (100 by
default), as an editor reading a slow network drive or a busy buffer would. The model's first
reply holds 5 `read_file` calls; its second ends the turn. Figures (medians over `--reps`
prompts in one agent): the batch, from the first `tool_call` to the last call's `completed`
update, and the whole prompt. One at a time, the batch could not take less than 5 delays.
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `acp_agent` and `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp_agent.testing import FakeMessagesAPI, replies
from bench.common import AGENT, BenchError, Peer, Scratch, median

FILES = tuple(f"part{i}.txt" for i in range(5))
GOAL_MS = 250.0


class SlowEditor(Peer):
    """A client whose fs/read_text_file answers after `delay` seconds (each on its own timer)."""

    delay = 0.1

    def answer_request(self, message: dict[str, Any]) -> None:
        if message.get("method") != "fs/read_text_file":
            super().answer_request(message)
            return
        text = Path(message["params"]["path"]).read_text()
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"content": text}}
        threading.Timer(self.delay, self._send, (reply,)).start()


def model(body: dict[str, Any], attempt: int) -> replies.Message:
    """Five reads for a prompt; a short answer once their results are in."""
    last = body["messages"][-1]["content"]
    if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in last):
        return replies.text("read them")
    return replies.message(
        [replies.tool_use_block("read_file", {"path": name}) for name in FILES], stop_reason="tool_use"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--delay", type=float, default=100.0, help="editor answer time, ms")
    parser.add_argument("--reps", type=int, default=10)
    opts = parser.parse_args()
    batches: list[float] = []
    prompts: list[float] = []
    with Scratch() as scratch, FakeMessagesAPI() as api:
        api.set_fallback(model)
        for name in FILES:
            (scratch.workspace / name).write_text(f"the text of {name}\n" * 50)
        calls: dict[str, float] = {}
        done: dict[str, float] = {}

        def watch(message: dict[str, Any], now: float) -> None:
            update = (message.get("params") or {}).get("update") or {}
            if update.get("sessionUpdate") == "tool_call":
                calls[update["toolCallId"]] = now
            elif update.get("status") in ("completed", "failed"):
                done[update["toolCallId"]] = now

        SlowEditor.delay = opts.delay / 1000
        peer = SlowEditor(
            AGENT, scratch.env(api.base_url), scratch.workspace, scratch.stderr_path("parallel-reads")
        )
        peer.on_message = watch
        try:
            peer.call(
                "initialize",
                {
                    "protocolVersion": 1,
                    "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": False}},
                },
            )
            _, session = peer.new_session(scratch.workspace)
            peer.prompt(session, "warm up")  # the SDK import and the first connection
            for _ in range(opts.reps):
                calls.clear()
                done.clear()
                sent, answered, result = peer.prompt(session, "read the five parts")
                if result.get("stopReason") != "end_turn" or len(done) != 5:
                    raise BenchError(f"unexpected turn: {result}, {len(done)} calls ended")
                if set(done) - set(calls):
                    raise BenchError("a call ended that never started")
                batches.append(max(done.values()) - min(calls.values()))
                prompts.append(answered - sent)
        finally:
            peer.close()
    batch, prompt = median(batches) * 1000, median(prompts) * 1000
    print(
        f"5 read_file calls, editor answers fs/read_text_file after {opts.delay:g} ms; "
        f"medians of {opts.reps} prompts"
    )
    print(f"| {'figure':<44} | {'agent':>9} | {'goal':>9} | met? |")
    print(f"|{'-' * 46}|{'-' * 11}|{'-' * 11}|------|")
    print(
        f"| {'batch: first tool_call → last completed':<44} | {batch:>6.1f} ms | "
        f"{'≤ ' + format(GOAL_MS, 'g') + ' ms':>9} | {'yes' if batch <= GOAL_MS else 'NO':<4} |"
    )
    print(f"| {'whole prompt (2 model requests + batch)':<44} | {prompt:>6.1f} ms | {'':>9} | {'':<4} |")
    print(f"| {'one at a time, at least (5 × delay)':<44} | {5 * opts.delay:>6.1f} ms | {'':>9} | {'':<4} |")


if __name__ == "__main__":
    main()
