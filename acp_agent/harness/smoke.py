"""`acp-agent smoke [PROMPT]`: run one prompt turn against an ACP agent and show it as it happens.

It spawns the agent (by default this one), runs initialize → session/new → session/prompt, and
prints the turn for a person: streamed text, tool calls, diffs, plans, permission questions, then
the stop reason and a summary of the turn record (`-v`: all of it, and the agent's log lines each
on a line of its own). It speaks plain ACP, so it works against any agent. The exit code says how
the turn ended (see `--help`).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import anyio

from acp_agent import __version__
from acp_agent.harness.agent_log import AgentLog, log_line
from acp_agent.harness.client import (
    AgentClient,
    AgentExitedError,
    AgentRpcError,
    AgentSpawnError,
    spawn_agent,
)
from acp_agent.harness.editor import Editor, Policy
from acp_agent.harness.process import ByteSink
from acp_agent.harness.render import TurnPrinter
from acp_agent.harness.script import DEFAULT_AGENT, key_values, open_stderr_sink, quiet_stdout

__all__ = [
    "EXIT_AGENT_FAILED",
    "EXIT_RPC_ERROR",
    "EXIT_USAGE",
    "STOP_EXIT_CODES",
    "SmokeOptions",
    "run_smoke",
    "smoke_main",
]

STOP_EXIT_CODES = {"end_turn": 0, "max_tokens": 3, "max_turn_requests": 4, "refusal": 5, "cancelled": 6}
EXIT_USAGE, EXIT_RPC_ERROR, EXIT_AGENT_FAILED = 2, 7, 8
DEFAULT_PROMPT = "Say hello, then list the files in this directory."
_EPILOG = """\
permissions: --yes allows every request, --no rejects every request; otherwise you are asked
at the terminal. When stdin is not a terminal nobody is asked: requests are rejected, with a line
saying so.

exit codes:
  0  the turn ended with end_turn
  2  usage error
  3  max_tokens
  4  max_turn_requests
  5  refusal
  6  cancelled (Ctrl-C sends session/cancel; a second Ctrl-C kills the agent)
  7  the agent answered with a JSON-RPC error (or an answer that is not valid ACP)
  8  the agent could not start, crashed, exited, or did not answer within --timeout
"""


@dataclasses.dataclass(frozen=True, slots=True)
class SmokeOptions:
    """One smoke run, as parsed from the command line."""

    prompt: str
    cwd: Path
    command: Sequence[str]
    env: Mapping[str, str]
    policy: Policy
    fs: bool = True
    timeout: float = 600.0
    color: bool = False
    stdin_fd: int | None = None
    stderr: ByteSink | None = None  # gets the agent's stderr as it comes (None: shown only if it fails)
    verbose: bool = False  # the agent's log lines, rendered, and the whole turn record
    json_out: TextIO | None = None  # where `--json` writes the turn's result, one JSON object


def _story(args: argparse.Namespace) -> TextIO:
    return sys.stderr if args.json else sys.stdout  # stdout carries `--json`'s result alone


class _InvalidAnswer(Exception):
    """The agent answered, but not with what ACP says it must."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-agent smoke",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Spawn an ACP agent, run one prompt turn and show it as it happens: text as it "
        "streams, tool calls and their status, diffs, plans, permission questions, then "
        "the stop reason and a summary of the turn record.",
    )
    parser.add_argument(
        "prompt",
        nargs="?",
        default=None,
        help=f"what to ask (default: {DEFAULT_PROMPT!r}, or the demo's task)",
    )
    parser.add_argument(
        "--cwd",
        metavar="DIR",
        default=None,
        help="the session's working directory (default: the current directory; "
        "for the demo, a scratch copy of its sample project)",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="run this agent on the offline demo model (the default when no "
        "ANTHROPIC_API_KEY is set and no --agent is given)",
    )
    parser.add_argument(
        "--agent",
        metavar='"CMD ..."',
        help="the agent command line (default: this agent, python -P -m acp_agent)",
    )
    answer = parser.add_mutually_exclusive_group()
    answer.add_argument("--yes", action="store_true", help="allow every permission request")
    answer.add_argument("--no", action="store_true", help="reject every permission request")
    parser.add_argument(
        "--env",
        action="append",
        metavar="KEY=VALUE",
        help="set a variable in the agent's environment (repeatable)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="give up on the agent after this long (default 600)",
    )
    parser.add_argument(
        "--no-fs",
        dest="fs",
        action="store_false",
        help="do not offer the agent file reads and writes through us",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also show the agent's log lines (its stderr, rendered) and the whole turn record",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the turn's result (stop reason and turn record) as one JSON object on stdout; "
        "the rest goes to stderr",
    )
    parser.add_argument(
        "--agent-stderr",
        metavar="FILE",
        help="append the agent's stderr (its logs, as written) to FILE, or to our stderr with '-' "
        "(default: shown only with -v, or when the agent fails)",
    )
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the output (default: auto, when stdout is a terminal)",
    )
    return parser


def _auth_help(init: Mapping[str, Any], printer: TurnPrinter) -> None:
    methods = [m for m in init.get("authMethods") or [] if isinstance(m, Mapping)]
    if methods:
        printer.line("the agent offers these ways to authenticate:")
    for method in methods:
        args = f" (run the agent with: {' '.join(method.get('args') or [])})" if method.get("args") else ""
        printer.line(f"  - {method.get('name')}: {method.get('description') or ''}{args}")


async def _turn(client: AgentClient, options: SmokeOptions, printer: TurnPrinter, editor: Editor) -> int:
    init = await client.call(
        "initialize",
        {
            "protocolVersion": 1,
            "clientCapabilities": {
                "fs": {"readTextFile": options.fs, "writeTextFile": options.fs},
                "terminal": False,
            },
            "clientInfo": {"name": "acp-agent-smoke", "version": __version__},
        },
    )
    if not isinstance(init, dict):
        raise _InvalidAnswer(f"initialize answered {init!r}, not an object")
    info = init.get("agentInfo") or {}
    name = " ".join(str(info[key]) for key in ("name", "version") if info.get(key)) or "?"
    printer.line(f"agent: {name} (protocol {init.get('protocolVersion', '?')})", "dim")
    try:
        new = await client.call("session/new", {"cwd": str(options.cwd), "mcpServers": []})
    except AgentRpcError as exc:
        if exc.code != -32000:
            raise
        printer.line(f"the agent needs authentication: session/new answered -32000: {exc.message}", "red")
        _auth_help(init, printer)
        return EXIT_RPC_ERROR
    session_id = new.get("sessionId") if isinstance(new, dict) else None
    if not isinstance(session_id, str):
        raise _InvalidAnswer(f"session/new answered {new!r}, without a sessionId")
    printer.line(f"session {session_id} in {options.cwd}", "dim")
    printer.line(f"> {options.prompt}", "bold")
    rid = await client.send_request(
        "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": options.prompt}]}
    )
    failure: Exception | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(editor.watch_interrupts, client, session_id)
        try:
            answer = await client.response(rid, timeout=None)
        except Exception as exc:  # re-raised below, so no exception group wraps it
            failure = exc
        tg.cancel_scope.cancel()
    if failure is not None:
        raise failure
    if "error" in answer:
        error = answer["error"]
        raise AgentRpcError("session/prompt", error if isinstance(error, dict) else {"message": repr(error)})
    result = answer.get("result")
    if not isinstance(result, dict):
        raise _InvalidAnswer(f"session/prompt answered {result!r}, not an object")
    printer.finish(result)
    if options.json_out is not None:
        options.json_out.write(json.dumps(result, ensure_ascii=False, indent=2) + "\n")
        options.json_out.flush()
    reason = result.get("stopReason")
    code = STOP_EXIT_CODES.get(reason) if isinstance(reason, str) else None
    if code is None:
        printer.line(f"{reason!r} is not an ACP stop reason", "red")
        return EXIT_RPC_ERROR
    return code


async def run_smoke(options: SmokeOptions, out: TextIO) -> int:
    """Run one smoke turn, writing what happens to `out`; return the exit code."""
    printer = TurnPrinter(out, color=options.color, verbose=options.verbose)
    agent_log = AgentLog(lambda text: printer.line(text, "dim")) if options.verbose else None
    stderr = options.stderr or agent_log
    editor = Editor(printer, policy=options.policy, cwd=options.cwd, fs=options.fs, stdin_fd=options.stdin_fd)

    def on_notification(message: dict[str, Any]) -> None:
        params = message.get("params")
        if message.get("method") == "session/update" and isinstance(params, dict):
            printer.update(params.get("update") or {})
        else:
            printer.line(f"(notification {message.get('method')})", "dim")

    client: AgentClient | None = None
    try:
        with anyio.fail_after(options.timeout):
            async with spawn_agent(
                options.command,
                env=options.env,
                cwd=options.cwd,
                stderr=stderr,
                on_request=editor.handle,
                on_notification=on_notification,
            ) as client:
                return await _turn(client, options, printer, editor)
    except AgentSpawnError as exc:
        printer.line(f"cannot start the agent: {exc}", "red")
        return EXIT_AGENT_FAILED
    except AgentRpcError as exc:
        data = f" {json.dumps(exc.data, ensure_ascii=False)}" if exc.data is not None else ""
        printer.line(f"error from the agent: {exc}{data}", "red")
        return EXIT_RPC_ERROR
    except _InvalidAnswer as exc:
        printer.line(f"invalid answer from the agent: {exc}", "red")
        return EXIT_RPC_ERROR
    except AgentExitedError as exc:
        printer.line(str(exc), "red")
        seen = stderr is not None and stderr in (agent_log, getattr(sys.stderr, "buffer", None))
        if not seen:  # its last lines, for a person
            tail = "\n".join(log_line(line) for line in exc.stderr_tail.rstrip().splitlines())
            printer.line(f"its stderr ended with:\n{tail}", "dim")
        return EXIT_AGENT_FAILED
    except TimeoutError:
        printer.line(f"the agent did not finish within {options.timeout} s", "red")
        return EXIT_AGENT_FAILED
    finally:
        if agent_log is not None:
            agent_log.close()
        if client is not None:
            for line in client.invalid_lines[:5]:
                printer.line(f"warning: the agent wrote a line that is not JSON-RPC: {line}", "red")
            for line in client.handler_errors:
                printer.line(f"warning: {line}", "red")


def _options(args: argparse.Namespace) -> SmokeOptions:
    env = {**os.environ, **key_values(args.env, "--env")}
    demo = args.demo or (
        not args.agent and not any(env.get(k) for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"))
    )
    if demo and args.agent:
        raise ValueError("--demo runs this agent; it cannot be combined with --agent")
    if demo:
        from acp_agent.demo.workspace import DEMO_PROMPT, make_workspace

        sys.stderr.write(
            "No ANTHROPIC_API_KEY: running the offline demo (a recorded turn, "
            "replayed through the real agent and SDK).\n"
            if not args.demo
            else ""
        )
        cwd = Path(args.cwd).resolve() if args.cwd else make_workspace()
        args.prompt = args.prompt or DEMO_PROMPT
    else:
        cwd = Path(args.cwd or ".").resolve()
    args.prompt = args.prompt or DEFAULT_PROMPT
    if not cwd.is_dir():
        raise ValueError(f"--cwd {args.cwd}: not a directory")
    command = shlex.split(args.agent) if args.agent else list(DEFAULT_AGENT)
    if demo:
        command += ["--model", "demo"]
    if not command:
        raise ValueError("--agent is empty")
    tty = sys.stdin is not None and sys.stdin.isatty()
    policy: Policy = "allow" if args.yes else "reject" if args.no else "ask" if tty else "no-tty"
    color = args.color == "always" or (
        args.color == "auto" and _story(args).isatty() and "NO_COLOR" not in os.environ
    )
    return SmokeOptions(
        prompt=args.prompt,
        cwd=cwd,
        command=command,
        env=env,
        policy=policy,
        fs=args.fs,
        timeout=args.timeout,
        color=color,
        stdin_fd=sys.stdin.fileno() if tty else None,
        verbose=args.verbose,
        json_out=sys.stdout if args.json else None,
    )


def smoke_main(argv: list[str] | None = None) -> int:
    """`acp-agent smoke [PROMPT] [--cwd DIR] [--agent "CMD ..."] [--yes|--no] [-v] [--json]`; returns
    the exit code."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2)
        return int(exc.code or 0)
    try:
        options = _options(args)
        sink = open_stderr_sink(args.agent_stderr) if args.agent_stderr else None
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"acp-agent smoke: {exc}\n")
        return EXIT_USAGE
    try:
        return anyio.run(run_smoke, dataclasses.replace(options, stderr=sink), _story(args))
    except KeyboardInterrupt:
        sys.stdout.write("\ninterrupted\n")
        return STOP_EXIT_CODES["cancelled"]
    except BrokenPipeError:  # stdout went away (`| head`): leave quietly, as Unix tools do
        quiet_stdout()
        return 1
    finally:
        if sink is not None and args.agent_stderr not in (None, "-"):
            with contextlib.suppress(OSError):
                sink.close()


if __name__ == "__main__":
    sys.exit(smoke_main())
