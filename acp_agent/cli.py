"""Command line: `governed-acp-agent` (or `acp-agent`) serves ACP on stdin/stdout until stdin closes.

Flags win over environment variables, which win over the defaults (see `config.py`). The
environment is the process's with the `env` of the managed policy and of the user's own settings
files laid over it, as Claude Code lays them over the shell's; the model's choice and the
managed `availableModels` are `claude_code/settings/agent_settings.py:start_model`'s.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from acp_agent import __version__
from acp_agent.claude_code.settings.agent_settings import read_start_settings, start_model
from acp_agent.config import DEFAULT_MODEL, Config, settings
from acp_agent.demo.workspace import DEMO_MODEL
from acp_agent.model.spec import replay_path
from acp_agent.process.hardening import make_undumpable
from acp_agent.settings import GROUPS, Setting
from acp_agent.startup import collector

__all__ = ["DISTRIBUTION", "build_parser", "flag_values", "main", "settings_table"]

DISTRIBUTION = "governed-acp-agent"
"""The name on PyPI (`uvx governed-acp-agent`): `--version` says it, whichever command name ran."""


def build_parser() -> argparse.ArgumentParser:
    """The parser of `acp-agent [serve]`: one flag per `Setting` of `config.py`, help included."""
    parser = argparse.ArgumentParser(
        prog="acp-agent",
        description="A governed Claude coding agent speaking the Agent Client Protocol (ACP) over "
        "stdio. With no sub-command it serves ACP on stdin/stdout until stdin closes.",
        epilog="Credentials come from ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN). Logs go to stderr.",
    )
    parser.add_argument("--version", action="version", version=f"{DISTRIBUTION} {__version__}")
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
    groups = {title: parser.add_argument_group(title) for title in GROUPS}
    for setting in settings():
        groups[setting.group].add_argument(setting.flag_name, **_flag(setting))
    return parser


def _flag(setting: Setting) -> dict[str, Any]:
    """argparse's keywords for one setting; a flag not given is None (the environment decides)."""
    text = (
        setting.help
        if setting.kind in ("set", "unset")
        else f"{setting.help} (default: {setting.default_text})"
    )
    text += f" [env {setting.env}]" if setting.env else ""
    keywords: dict[str, Any] = {"dest": setting.name, "default": None, "help": text.replace("%", "%%")}
    if setting.kind == "both":
        return keywords | {"action": argparse.BooleanOptionalAction}
    if setting.kind in ("set", "unset"):
        return keywords | {"action": "store_true" if setting.kind == "set" else "store_false"}
    if setting.kind == "on_off":
        return keywords | {"choices": ["on", "off"]}
    if setting.choices:
        keywords["choices"] = list(setting.choices)
    if setting.metavar:
        keywords["metavar"] = setting.metavar
    if setting.value_type is not str:
        keywords["type"] = setting.value_type
    return keywords


def flag_values(args: argparse.Namespace) -> dict[str, Any]:
    """The parsed flags by setting name, each as its field takes it (`on`/`off` → bool)."""
    flags: dict[str, Any] = {s.name: getattr(args, s.name) for s in settings()}
    for setting in settings():
        if setting.kind == "on_off" and flags[setting.name] is not None:
            flags[setting.name] = flags[setting.name] == "on"
    return flags


def settings_table() -> str:
    """The table of docs/configuration.md (markdown), from the same settings as the flags."""
    rows = ["| flag | environment | default | what it sets |", "|---|---|---|---|"]
    for setting in settings():
        flag = f"`{setting.flag_name}`"
        if setting.kind == "both":
            flag += f" / `--no-{setting.flag_name.removeprefix('--')}`"
        elif setting.metavar and setting.kind == "value":
            flag = f"`{setting.flag_name} {setting.metavar}`"
        env = f"`{setting.env}`" if setting.env else "—"
        env += " (on/off)" if setting.env and setting.value_type is bool else ""
        literal = setting.default is not None and setting.kind == "value" and setting.value_type is not bool
        default = f"`{setting.default_text}`" if literal else setting.default_text
        what = setting.help.replace("|", r"\|")
        if setting.choices and not all(choice in what for choice in setting.choices):
            what += f"; one of {', '.join(setting.choices)}"
        rows.append(f"| {flag} | {env} | {default} | {what} |")
    return "\n".join(rows) + "\n"


def main(argv: Sequence[str] | None = None) -> int:

    make_undumpable()  # first: no other process of this user may read our memory or our stdin
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("smoke", "login", "harness"):
        collector.resume()  # only serving resumes it later, once its session layer is built
    if argv and argv[0] == "smoke":
        from acp_agent.harness.smoke import smoke_main

        return smoke_main(argv[1:])
    if argv and argv[0] == "login":
        from acp_agent.session.auth.keys import login_main

        return login_main(argv[1:])
    if argv and argv[0] == "harness":
        from acp_agent.harness.script import harness_main

        return harness_main(argv[1:])
    args = build_parser().parse_args(argv)
    flags = flag_values(args)
    agent_settings = read_start_settings()  # before the configuration: their `env` reaches it
    env = agent_settings.environment(os.environ)  # the user's and the managed settings' env over it
    try:
        config = Config.from_sources(flags, env)
    except ValueError as exc:
        sys.stderr.write(f"acp-agent: invalid configuration: {exc}\n")
        return 2
    replaying = config.model == DEMO_MODEL or replay_path(config.model) is not None
    model, agent_settings = start_model(
        agent_settings, flag=flags.get("model"), env=env, default=DEFAULT_MODEL, checked=not replaying
    )
    config = config.model_copy(update={"model": model})
    from acp_agent import logs

    logs.configure(config.log_level)
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
    from acp_agent.turn.strategies.loops import LoopChoice

    try:  # refuse a strategy that cannot work (verify with nothing to check) before serving
        LoopChoice(
            config.loop, config.verify_cmd, config.verify_rubric, config.verify_threshold, config.max_trials
        ).check()
    except ValueError as exc:
        sys.stderr.write(f"acp-agent: invalid configuration: {exc}\n")
        return 2

    try:
        return run(config, agent_settings)
    except CassetteError as exc:
        sys.stderr.write(f"acp-agent: {exc}\n")
        return 2
