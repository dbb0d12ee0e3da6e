"""Command line: `acp-agent` serves ACP on stdin/stdout until stdin closes.

Flags win over environment variables, which win over the defaults (see `config.py`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp_agent import __version__
from acp_agent.config import ENV_VARS, Config

__all__ = ["build_parser", "main"]


def _env(name: str) -> str:
    return f" [env {ENV_VARS[name]}]" if name in ENV_VARS else ""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-agent",
        description="A governed Claude coding agent speaking the Agent Client Protocol (ACP) over "
        "stdio. With no sub-command it serves ACP on stdin/stdout until stdin closes.",
        epilog="Credentials come from ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN). Logs go to "
        "stderr; set ACP_AGENT_LOG_LEVEL=debug|info|warning|error.",
    )
    parser.add_argument("--version", action="version", version=f"acp-agent {__version__}")
    parser.add_argument(
        "command",
        nargs="?",
        choices=["serve", "smoke", "harness", "login"],
        default="serve",
        help="serve (default): serve ACP on stdin/stdout; smoke [PROMPT]: run one "
        "prompt against an agent and show the turn (see `acp-agent smoke --help`); "
        "harness SCRIPT: run a scripted JSON-RPC conversation (see `acp-agent "
        "harness --help`); login: store an Anthropic API key for the agent",
    )
    model = parser.add_argument_group("model")
    model.add_argument(
        "--model",
        help=f"model id, or replay:FILE to serve a recorded cassette "
        f"(default {Config().model}){_env('model')}",
    )
    model.add_argument(
        "--max-tokens",
        type=int,
        help=f"max_tokens per model request (default {Config().max_tokens}){_env('max_tokens')}",
    )
    model.add_argument(
        "--stream",
        dest="streaming",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="stream replies over SSE, or make one non-streaming "
        f"request per model call (default: stream){_env('streaming')}",
    )
    model.add_argument("--base-url", help=f"Messages API base URL, without /v1{_env('base_url')}")
    model.add_argument(
        "--max-retries",
        type=int,
        help="retries per model request, only before "
        f"any output was relayed (default 2){_env('max_retries')}",
    )
    model.add_argument(
        "--stall-seconds",
        type=float,
        help=f"a stream silent this long has stalled (default 120){_env('stall_seconds')}",
    )
    model.add_argument(
        "--request-timeout",
        type=float,
        help=f"read timeout of a non-streaming request in seconds (default 600){_env('request_timeout')}",
    )
    model.add_argument(
        "--context-window",
        type=int,
        help="context window for usage_update and "
        "compaction (default: the model's, e.g. 1000000 on the 5.x models)"
        f"{_env('context_window')}",
    )
    model.add_argument(
        "--effort",
        choices=["low", "medium", "high", "xhigh", "max"],
        help=f"output_config.effort of every request (default: the model's own){_env('effort')}",
    )
    model.add_argument(
        "--thinking-budget",
        type=int,
        help="a thinking budget in tokens (≥ 1024), "
        "only for models that take one, such as claude-haiku-4-5; the 5.x models "
        f"think adaptively: use --effort{_env('thinking_budget')}",
    )
    model.add_argument(
        "--prompt-cache",
        choices=["on", "off"],
        help="mark prompt-cache "
        "breakpoints on every request (default on; some gateways reject "
        f"cache_control){_env('prompt_cache')}",
    )
    model.add_argument(
        "--cache-ttl",
        choices=["5m", "1h"],
        help=f"TTL of the fixed cache breakpoints on tools and system (default 5m){_env('cache_ttl')}",
    )
    model.add_argument(
        "--record",
        type=Path,
        metavar="FILE",
        help="save every Messages API "
        "exchange to this JSON-lines cassette (replay it with --model replay:FILE)",
    )
    model.add_argument(
        "--replay-strict",
        action="store_true",
        default=None,
        help="with --model replay:FILE, fail when the model, the tool names or the "
        "last user message differ from the recording",
    )
    model.add_argument(
        "--compact-at",
        type=float,
        help="summarise older turns when a request's "
        "context passes this fraction of the context window (default 0.8, 0 = "
        f"never){_env('compact_at')}",
    )
    limits = parser.add_argument_group("per-turn limits")
    limits.add_argument(
        "--max-turn-requests",
        type=int,
        help=f"model requests allowed per prompt turn (default 50){_env('max_turn_requests')}",
    )
    limits.add_argument(
        "--max-tool-calls",
        type=int,
        help=f"tool calls allowed per prompt turn (default 200){_env('max_tool_calls')}",
    )
    limits.add_argument(
        "--max-turn-seconds",
        type=float,
        help=f"wall clock per prompt turn (default 3600){_env('max_turn_seconds')}",
    )
    limits.add_argument(
        "--max-turn-output-tokens",
        type=int,
        help=f"output tokens per prompt turn (default off){_env('max_turn_output_tokens')}",
    )
    limits.add_argument(
        "--max-turn-input-tokens",
        type=int,
        help=f"input tokens per prompt turn (default off){_env('max_turn_input_tokens')}",
    )
    limits.add_argument(
        "--max-turn-cost-usd",
        type=float,
        help=f"spend per prompt turn in USD (default off; needs a known price){_env('max_turn_cost_usd')}",
    )
    limits.add_argument(
        "--on-limit",
        choices=["stop", "wrap_up"],
        help="stop: a budget ends the "
        "turn as it is; wrap_up: the last allowed request has no tools and asks "
        f"for a summary (default stop){_env('on_limit')}",
    )
    limits.add_argument(
        "--prices",
        type=Path,
        metavar="FILE",
        help=f"JSON price table (USD per million tokens by model) over the built-in one{_env('prices')}",
    )
    limits.add_argument(
        "--repeat-limit",
        type=int,
        help="the Nth identical tool call with an "
        "identical result ends the turn; a note goes to the model at the 3rd "
        f"(default 5, 0 = off){_env('repeat_limit')}",
    )
    loop = parser.add_argument_group("turn strategy")
    loop.add_argument(
        "--loop",
        choices=["tools", "verify", "phased"],
        help="tools: the plain "
        "tool loop; verify: check each finished attempt and retry on a fail; phased: "
        f"plan (read-only) → approve → act → verify (default tools){_env('loop')}",
    )
    loop.add_argument(
        "--verify-cmd",
        metavar="CMD",
        help="the check for verify/phased: a shell "
        f'command, exit 0 = pass (e.g. "pytest -q"){_env("verify_cmd")}',
    )
    loop.add_argument(
        "--verify-rubric",
        metavar="TEXT",
        help=f"without a command: the rubric a model judge scores the work against{_env('verify_rubric')}",
    )
    loop.add_argument(
        "--verify-threshold",
        type=float,
        help=f"the judge's score needed to pass (default 0.8){_env('verify_threshold')}",
    )
    loop.add_argument(
        "--max-trials",
        type=int,
        help="failed verifications before the turn ends "
        f"with limit maxTrials (default 3){_env('max_trials')}",
    )
    state = parser.add_argument_group("sessions")
    state.add_argument(
        "--state-dir",
        type=Path,
        help="where session journals live (default: the "
        f"user data dir, e.g. ~/.local/share/acp-agent/sessions){_env('state_dir')}",
    )
    state.add_argument(
        "--no-journal",
        dest="journal",
        action="store_false",
        default=None,
        help="keep no session journal (session/load, list, resume, close and delete are then not offered)",
    )
    state.add_argument(
        "--keep-days",
        type=float,
        help="remove journals untouched this many days "
        f"at start-up (default 30, 0 = keep){_env('keep_days')}",
    )
    protocol = parser.add_argument_group("protocol")
    protocol.add_argument(
        "--max-line-bytes",
        type=int,
        help=f"longest JSON-RPC line accepted (default 50 MiB){_env('max_line_bytes')}",
    )
    protocol.add_argument(
        "--log-level",
        choices=["debug", "info", "warning", "error"],
        help="stderr log level (default info) [env ACP_AGENT_LOG_LEVEL]",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "smoke":
        from acp_agent.harness.smoke import smoke_main

        return smoke_main(argv[1:])
    if argv and argv[0] == "login":
        from acp_agent.credentials import login_main

        return login_main(argv[1:])
    if argv and argv[0] == "harness":
        from acp_agent.harness.script import harness_main

        return harness_main(argv[1:])
    args = build_parser().parse_args(argv)
    from acp_agent import logs

    logs.configure(args.log_level)
    flags: dict[str, Any] = {k: v for k, v in vars(args).items() if k not in {"command", "log_level"}}
    if flags.get("prompt_cache") is not None:
        flags["prompt_cache"] = flags["prompt_cache"] == "on"
    try:
        config = Config.from_sources(flags)
    except ValueError as exc:
        sys.stderr.write(f"acp-agent: invalid configuration: {exc}\n")
        return 2
    from acp_agent.model.profiles import builtin_profile, load_prices, output_config, thinking_param

    try:  # a setting the model refuses is refused here, never sent (a 400 on every request)
        load_prices(config.prices)
        profile = builtin_profile(config.model)
        thinking_param(profile, budget=config.thinking_budget)
        output_config(profile, effort=config.effort)
    except ValueError as exc:
        sys.stderr.write(f"acp-agent: invalid configuration: {exc}\n")
        return 2
    from acp_agent.app import run
    from acp_agent.errors import CassetteError
    from acp_agent.turn.loops import LoopChoice

    try:  # refuse a strategy that cannot work (verify with nothing to check) before serving
        LoopChoice(
            config.loop, config.verify_cmd, config.verify_rubric, config.verify_threshold, config.max_trials
        ).check()
    except ValueError as exc:
        sys.stderr.write(f"acp-agent: invalid configuration: {exc}\n")
        return 2

    try:
        return run(config)
    except CassetteError as exc:
        sys.stderr.write(f"acp-agent: {exc}\n")
        return 2
