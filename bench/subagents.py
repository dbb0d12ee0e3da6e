"""`python bench/subagents.py [--reps N] [--latency LO-HI] [--seed S]`: three questions, asked of three
subagents at once, against the same three asked in turn by one agent; and a cancel during them.

The agent runs on `claude-sonnet-5-5` over real pipes against the loopback Messages API, which
bills the cache markers it receives as the API does and waits a random 300-800 ms (seeded) before
each reply, as a real API's time to first byte. Each question takes the same work wherever it runs:
a `read_file` of one module (~6 KB), a `search_text` in it, then the answer.
- **parallel:** one prompt; the model's first reply asks three `task` calls, each subagent does its
  question's three requests, and the model answers from the three results (11 requests).
- **in turn:** one agent, no subagents (`--subagent-tools off`), the three questions as three prompts
  in one session, each answered by the same three requests (9 requests).
Figures (medians over `--reps` runs, each with a fresh agent and fake): wall time from the first
prompt sent to the last answer, the turns' `costUsd` (the built-in price table), model requests,
and the share of input tokens read from the cache. Then the cancel: three subagents whose requests
never answer, `session/cancel` sent once all three wait, timed to the prompt's `cancelled` answer.
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `acp_agent` and `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp_agent.session.system_prompt import SUBAGENT_MARKER
from acp_agent.testing import FakeMessagesAPI, replies, routes
from bench.common import AGENT, BenchError, Scratch, median, spawn

MODEL = "claude-sonnet-5-5"
QUESTIONS = {
    "retry": "Where is the retry policy configured, and what are its defaults?",
    "cache": "How does the cache decide when an entry expires?",
    "auth": "Which function checks the API token, and what does it do on failure?",
}
CANCEL_GOAL_MS = 500.0


def module_text(topic: str) -> str:
    """A ~6 KB module about `topic`: what `read_file` returns for the question."""
    lines = [f'"""The {topic} module."""', ""]
    for i in range(60):
        lines += [f"def {topic}_step_{i}(value: int) -> int:", f"    return value * {i} + len({topic!r})", ""]
    return "\n".join(lines) + "\n"


def question_of(body: dict[str, Any]) -> str:
    """Which question a conversation is on: its last prompt text (a task or the user's)."""
    for message in reversed(body["messages"]):
        if message["role"] != "user":
            continue
        for block in message["content"]:
            text = block.get("text", "") if isinstance(block, dict) else ""
            for topic, question in QUESTIONS.items():
                if question in text:
                    return topic
    raise BenchError("a request on no known question")


def step(body: dict[str, Any]) -> replies.Message:
    """The work of one question: read its module, search it, answer (by the last tool called)."""
    topic = question_of(body)
    last = body["messages"][-1]["content"]
    if not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in last):
        return replies.tool_use("read_file", {"path": f"src/{topic}.py"})
    calls = [b for b in body["messages"][-2]["content"] if b.get("type") == "tool_use"]
    if calls and calls[-1]["name"] == "read_file":
        return replies.tool_use("search_text", {"pattern": f"def {topic}_step_1", "path": "src"})
    return replies.text(f"The {topic} logic is in src/{topic}.py, in {topic}_step_1 … {topic}_step_59.")


def parent(body: dict[str, Any]) -> replies.Message:
    """The parallel run's own loop: three tasks, then one answer from their results."""
    last = body["messages"][-1]["content"]
    if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in last):
        return replies.text("All three answered: see the results above.")
    tasks = [
        replies.tool_use_block("task", {"description": f"Find the {topic} logic", "prompt": question})
        for topic, question in QUESTIONS.items()
    ]
    return replies.message(tasks, stop_reason="tool_use")


def latent(
    answer: Any, rng: random.Random, low: float, high: float, lock: threading.Lock
) -> replies.ReplyFactory:
    def serve(body: dict[str, Any], attempt: int) -> replies.Reply:
        with lock:
            delay = rng.uniform(low, high)
        return replace(answer(body), delay=delay)

    return serve


def run(
    scratch: Scratch, parallel: bool, rng: random.Random, latency: tuple[float, float]
) -> dict[str, float]:
    """One run on a fresh agent and fake: wall time, cost, requests, cache read share."""
    lock = threading.Lock()
    with FakeMessagesAPI() as api:
        api.route(routes.system_has(SUBAGENT_MARKER), otherwise=latent(step, rng, *latency, lock))
        api.set_fallback(latent(parent if parallel else step, rng, *latency, lock))
        env = scratch.env(api.base_url, ACP_AGENT_MODEL=MODEL)
        if not parallel:
            env["ACP_AGENT_SUBAGENT_TOOLS"] = "off"
        with spawn(AGENT, scratch, env, "subagents") as peer:
            peer.initialize()
            _, session = peer.new_session(scratch.workspace)
            prompts = ["\n".join(QUESTIONS.values())] if parallel else list(QUESTIONS.values())
            started = time.perf_counter()
            records = []
            for text in prompts:
                _, answered, result = peer.prompt(session, text)
                if result.get("stopReason") != "end_turn":
                    raise BenchError(f"unexpected turn: {result}")
                records.append(result["_meta"]["acp-agent"]["turn"])
            wall = answered - started
        usage = [s.usage for s in api.served if s.usage is not None]
    sent = sum(
        u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"] for u in usage
    )
    return {
        "wall": wall,
        "cost": sum(r["costUsd"] for r in records),
        "requests": sum(r["modelRequests"] for r in records),
        "read": sum(u["cache_read_input_tokens"] for u in usage) / sent,
    }


def cancel_time(scratch: Scratch) -> float:
    """Seconds from `session/cancel` to the `cancelled` answer, with three subagents waiting."""
    with FakeMessagesAPI() as api:
        api.route(routes.system_has(SUBAGENT_MARKER), otherwise=replies.stall())
        api.set_fallback(lambda body, attempt: parent(body))
        with spawn(AGENT, scratch, scratch.env(api.base_url, ACP_AGENT_MODEL=MODEL), "cancel") as peer:
            peer.initialize()
            _, session = peer.new_session(scratch.workspace)
            rid, _ = peer.start_prompt(session, "\n".join(QUESTIONS.values()))
            api.wait_for_attempts(4, timeout=30)  # the prompt's request and the three subagents'
            time.sleep(0.1)  # they are waiting on their replies
            sent = peer.notify("session/cancel", {"sessionId": session})
            answered, message = peer.wait(rid, timeout=10)
            if message.get("result", {}).get("stopReason") != "cancelled":
                raise BenchError(f"not cancelled: {message}")
            return answered - sent


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--latency", default="300-800", help="per-request delay range, ms")
    parser.add_argument("--seed", type=int, default=26)
    opts = parser.parse_args()
    low, high = (float(x) / 1000 for x in opts.latency.split("-"))
    rng = random.Random(opts.seed)
    figures: dict[str, list[dict[str, float]]] = {"parallel": [], "in turn": []}
    cancels: list[float] = []
    with Scratch() as scratch:
        (scratch.workspace / "src").mkdir()
        for topic in QUESTIONS:
            (scratch.workspace / "src" / f"{topic}.py").write_text(module_text(topic))
        for _ in range(opts.reps):
            figures["parallel"].append(run(scratch, True, rng, (low, high)))
            figures["in turn"].append(run(scratch, False, rng, (low, high)))
            cancels.append(cancel_time(scratch))
    print(
        f"3 questions on {MODEL}, each a read, a search and an answer; the fake waits "
        f"{opts.latency} ms before each reply; medians of {opts.reps} runs"
    )
    print(f"| {'run':<36} | {'requests':>8} | {'wall':>9} | {'cost':>9} | {'read from cache':>15} |")
    print(f"|{'-' * 38}|{'-' * 10}|{'-' * 11}|{'-' * 11}|{'-' * 17}|")
    labels = {"parallel": "3 subagents at once (one prompt)", "in turn": "one agent, 3 prompts in turn"}
    for name, runs in figures.items():
        wall = median([r["wall"] for r in runs])
        cost = median([r["cost"] for r in runs])
        read = median([r["read"] for r in runs])
        requests = median([r["requests"] for r in runs])
        print(f"| {labels[name]:<36} | {requests:>8g} | {wall:>7.2f} s | ${cost:>8.4f} | {read:>14.0%} |")
    cancel = median(cancels) * 1000
    met = "yes" if cancel <= CANCEL_GOAL_MS else "NO"
    print(f"\ncancel during 3 subagents → `cancelled`: {cancel:.0f} ms (goal ≤ {CANCEL_GOAL_MS:g} ms: {met})")


if __name__ == "__main__":
    main()
