"""Run one governed turn from Python, without ACP: the public API (`acp_agent.api`) in one file.

    ANTHROPIC_API_KEY=sk-ant-… python examples/embed.py path/to/project "Make the tests pass" \\
        --check "python -m pytest -q"

It writes nothing on stdout, so the same code can live inside a stdio server (an MCP server,
another ACP agent): the result goes to stderr, and so do the agent's log lines (warnings only,
through `logging`; `configure_logging()` gives every line as JSON on stderr instead).

What you must supply, because `run_turn` has no editor and no person to ask:
- permissions: with no `permissions`, EVERY tool call runs, edits and commands included. Pass a
  `PermissionAsker` (below: edits and commands allowed, an edit of a file that makes tools run
  code, such as `.envrc` or a git hook, refused).
- a sandbox: commands (the model's and the `--check`) run unconfined unless you pass
  `sandbox=SandboxPolicy()`: bubblewrap, as a session uses; where it cannot run, commands run
  unconfined and the turn says so.
- limits: `Limits(...)` bounds the turn (model requests, tool calls, time); all of them hold.
"""

from __future__ import annotations

import argparse
import logging
import sys

import anyio

from acp_agent.api import (
    AnthropicModel,
    CommandEvaluator,
    Limits,
    PermissionDecision,
    PermissionQuestion,
    SandboxPolicy,
    VerifyStrategy,
    default_registry,
    run_turn,
)


class EditsAndCommands:
    """A `PermissionAsker` for a run with nobody to ask: edits and (sandboxed) commands only."""

    async def ask(self, question: PermissionQuestion) -> PermissionDecision:
        if question.permission in ("edit", "execute"):
            return PermissionDecision(True)
        return PermissionDecision(False, message=f"{question.title}: refused, nobody is here to approve it")


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run one governed turn in a project.")
    parser.add_argument("project", help="the project's directory (the turn's cwd)")
    parser.add_argument("prompt", nargs="?", default="Make the tests pass")
    parser.add_argument("--check", default="python -m pytest -q", help="the command that must pass")
    parser.add_argument("--model", default=None, help="the model id (default: the agent's)")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)  # your logging, your choice

    model = AnthropicModel(streaming=True)  # the key and base URL come from the environment
    chosen = {"model_id": args.model} if args.model else {}  # else the agent's default model
    try:
        result = await run_turn(
            args.prompt,
            model=model,
            tools=default_registry(),
            cwd=args.project,
            limits=Limits(max_turn_requests=20),
            strategy=VerifyStrategy(CommandEvaluator(args.check), max_trials=3),
            permissions=EditsAndCommands(),
            sandbox=SandboxPolicy(),
            **chosen,
        )
    finally:
        await model.aclose()
    trials = ", ".join("passed" if t.passed else "failed" for t in result.record.trials)
    sys.stderr.write(f"{result.status} ({result.stop_reason}); checks: {trials or 'none'}\n")
    sys.stderr.write(f"{result.output}\n" if result.output else "")
    if result.error:
        sys.stderr.write(f"error: {result.error}\n")
    return 0 if result.status == "completed" else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main))
