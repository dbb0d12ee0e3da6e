"""`acp-agent harness SCRIPT`: run a scripted JSON-RPC conversation against a spawned agent.

Each step is reported PASS or FAIL (with a diff of what differed); the run stops at the first
failure. The step models live in `harness/steps.py`, the runner in `harness/runner.py`, the
pattern language in `harness/pattern.py`; the format is documented in `examples/README.md`. This
is a tool for a person at a terminal, so it writes its report to stdout; the agent's stderr goes
to ours (or to `--agent-stderr FILE`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, TextIO

import anyio

from acp_agent.harness.client import AgentSpawnError, spawn_agent
from acp_agent.harness.fake_model import FakeModelError, fake_model
from acp_agent.harness.runner import ScriptRunner
from acp_agent.harness.steps import ModelStep, Step, load_script

__all__ = [
    "DEFAULT_AGENT",
    "EXIT_FAILED",
    "EXIT_PASSED",
    "EXIT_USAGE",
    "harness_main",
    "key_values",
    "open_stderr_sink",
    "quiet_stdout",
    "run_harness",
]

EXIT_PASSED, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_AGENT = (sys.executable, "-P", "-m", "acp_agent")
"""This agent, with `-P`: never importing from the directory it is run in (`process/import_path.py`)."""


def key_values(items: Sequence[str] | None, what: str) -> dict[str, str]:
    """`KEY=VALUE` options into a dict (shared with the smoke runner)."""
    pairs: dict[str, str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"{what} wants KEY=VALUE, got {item!r}")
        pairs[key] = value
    return pairs


def open_stderr_sink(path: str | None) -> IO[bytes] | None:
    """Where the agent's stderr goes: a file, or our own stderr ("-", the default)."""
    if path and path != "-":
        return open(path, "ab")
    return getattr(sys.stderr, "buffer", None)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-agent harness",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a scripted JSON-RPC conversation (a JSON-lines file of steps: request, "
        "notify, expect, answer, respond, wait, cancel, close) against a spawned ACP "
        "agent and report each step PASS or FAIL, with a diff on a mismatch.",
        epilog="exit codes:\n  0  every step passed\n  1  a step failed (or the agent could not "
        "be started)\n  2  usage error, or the script is not valid\n\n"
        "The format, the pattern language and examples: examples/README.md.",
    )
    parser.add_argument("script", help="the script file (.jsonl, or a .json array of steps)")
    parser.add_argument(
        "--agent",
        metavar='"CMD ..."',
        help="the agent command line (default: this agent, python -P -m acp_agent)",
    )
    parser.add_argument(
        "--env",
        action="append",
        metavar="KEY=VALUE",
        help="set a variable in the agent's environment (repeatable)",
    )
    parser.add_argument(
        "--var",
        action="append",
        metavar="NAME=VALUE",
        help="bind $NAME before the first step; VALUE is JSON when it parses as "
        "JSON, else a string (repeatable)",
    )
    parser.add_argument(
        "--cwd", metavar="DIR", help="the value of $cwd (default: a new empty temporary directory)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="default wait of request, expect and close steps (default 30)",
    )
    parser.add_argument(
        "--agent-stderr", metavar="FILE", help="append the agent's stderr to FILE (default: our stderr)"
    )
    parser.add_argument("--check", action="store_true", help="only validate the script, do not run it")
    return parser


async def run_harness(
    steps: Sequence[Step],
    command: Sequence[str],
    *,
    env: dict[str, str],
    variables: dict[str, Any],
    timeout: float,
    out: TextIO,
    stderr: IO[bytes] | None,
    overrides: dict[str, str] | None = None,
) -> int:
    """Start the model the script names (a first `model` step), spawn the agent, run the steps,
    and return the exit code. `overrides` (the --env options) win over the model's variables."""
    model = steps[0] if steps and isinstance(steps[0], ModelStep) else None
    runner = ScriptRunner(out=out, variables=variables, timeout=timeout)
    try:
        async with contextlib.AsyncExitStack() as stack:
            if model is not None:
                for_model = await stack.enter_async_context(fake_model(model))
                out.write(f"model: {model.fake} --reply {model.reply} at {for_model['ANTHROPIC_BASE_URL']}\n")
                env = {**env, **for_model}
            env = {**env, **(overrides or {})}
            client = await stack.enter_async_context(
                spawn_agent(command, env=env, stderr=stderr, on_request=runner.on_request)
            )
            passed = await runner.run(client, steps[1:] if model is not None else steps)
    except FakeModelError as exc:
        out.write(f"cannot start the model: {exc}\n")
        return EXIT_FAILED
    except AgentSpawnError as exc:
        out.write(f"cannot start the agent: {exc}\n")
        return EXIT_FAILED
    return EXIT_PASSED if passed else EXIT_FAILED


def quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _json_or_text(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value


def harness_main(argv: list[str] | None = None) -> int:
    """`acp-agent harness SCRIPT [--agent "CMD ..."] …`; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2)
        return int(exc.code or 0)
    try:
        steps = load_script(args.script)
        env = key_values(args.env, "--env")
        variables = {k: _json_or_text(v) for k, v in key_values(args.var, "--var").items()}
        command = shlex.split(args.agent) if args.agent else list(DEFAULT_AGENT)
        if not command:
            raise ValueError("--agent is empty")
        if args.check:
            sys.stdout.write(f"{args.script}: {len(steps)} valid steps\n")
            return EXIT_PASSED
        sink = open_stderr_sink(args.agent_stderr)
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"acp-agent harness: {exc}\n")
        return EXIT_USAGE
    try:
        with tempfile.TemporaryDirectory(prefix="acp-harness-") as scratch:
            variables.setdefault("cwd", str(Path(args.cwd or scratch).resolve()))
            sys.stdout.write(f"harness: {args.script} against {shlex.join(command)}\n")
            return anyio.run(
                lambda: run_harness(
                    steps,
                    command,
                    env=dict(os.environ),
                    overrides=env,
                    variables=variables,
                    timeout=args.timeout,
                    out=sys.stdout,
                    stderr=sink,
                )
            )
    except KeyboardInterrupt:
        sys.stdout.write("\ninterrupted\n")
        return EXIT_FAILED
    except BrokenPipeError:  # stdout went away (`| head`): leave quietly, as Unix tools do
        quiet_stdout()
        return EXIT_FAILED
    finally:
        if sink is not None and args.agent_stderr not in (None, "-"):
            sink.close()


if __name__ == "__main__":
    sys.exit(harness_main())
