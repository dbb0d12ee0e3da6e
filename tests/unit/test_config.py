"""Configuration: flags over environment over defaults, and per-session overrides."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Annotated

import pytest
from pydantic import BaseModel

from acp_agent.cli import build_parser, flag_values, settings_table
from acp_agent.config import BUILTIN_MODELS, DEFAULT_MODEL, Config, how_to_set, settings
from acp_agent.errors import LimitsError
from acp_agent.limits import Limits
from acp_agent.settings import GROUPS, Setting, declared_in, in_help_order
from acp_agent.turn.strategies.loops import LOOPS, LoopChoice
from scripts.config_table import PAGE, with_table


def test_defaults_hold_without_flags_or_environment() -> None:
    config = Config.from_sources({}, {})
    assert config.model == DEFAULT_MODEL
    assert config.streaming is True
    assert config.limits.max_turn_requests == 50
    assert config.max_tokens == 16_000


def test_environment_overrides_defaults_and_flags_override_environment() -> None:
    env = {"ACP_AGENT_MAX_TURN_REQUESTS": "3", "ACP_AGENT_STREAMING": "0", "ACP_AGENT_MODEL": "claude-test-1"}
    assert Config.from_sources({}, env).limits.max_turn_requests == 3
    assert Config.from_sources({}, env).streaming is False
    flags = {"max_turn_requests": 7, "streaming": True, "model": None}
    config = Config.from_sources(flags, env)
    assert config.limits.max_turn_requests == 7
    assert config.streaming is True
    assert config.model == "claude-test-1"


@pytest.mark.parametrize(
    ("var", "value"),
    [
        ("ACP_AGENT_STREAMING", "maybe"),
        ("ACP_AGENT_MAX_TURN_REQUESTS", "lots"),
        ("ACP_AGENT_MAX_TURN_REQUESTS", "0"),
    ],
)
def test_bad_environment_values_are_refused_with_a_clear_message(var: str, value: str) -> None:
    with pytest.raises(ValueError, match=var if value != "0" else "max_turn_requests"):
        Config.from_sources({}, {var: value})


def test_session_overrides_may_raise_lower_or_turn_off_budgets() -> None:
    limits = Limits().with_overrides(
        {"maxTurnRequests": 80, "maxToolCalls": None, "maxTurnSeconds": 5, "unknownKey": 1}
    )
    assert limits.max_turn_requests == 80
    assert limits.max_tool_calls is None
    assert limits.max_turn_seconds == 5


def test_a_session_without_limit_overrides_shares_the_configured_limits() -> None:
    configured = Limits(max_turn_requests=7)
    assert configured.with_overrides({}) is configured
    assert configured.with_overrides({"subagentTools": "all", "unknownKey": 1}) is configured
    same_values = configured.with_overrides({"maxTurnRequests": 7})
    assert same_values is not configured and same_values == configured  # an override is validated


@pytest.mark.parametrize("bad", [None, 0, -1, "3", True, 2.5])
def test_max_turn_requests_override_must_be_a_positive_integer(bad: object) -> None:
    with pytest.raises(LimitsError) as caught:
        Limits().with_overrides({"maxTurnRequests": bad})
    assert caught.value.field == "maxTurnRequests"


def test_every_field_is_declared_once_as_a_setting() -> None:
    declared = {s.name for s in settings()}
    assert declared == (set(Config.model_fields) - {"limits"}) | set(Limits.model_fields)
    assert len(declared) == len(settings())
    envs = [s.env for s in settings() if s.env]
    assert len(envs) == len(set(envs)) and all(e.startswith(("ACP_AGENT_", "ANTHROPIC_")) for e in envs)
    flags = [s.flag_name for s in settings()]
    assert len(flags) == len(set(flags))
    assert tuple(LOOPS) == _setting("loop").choices


class _Sample(BaseModel):
    plain: int = 1
    late: Annotated[float | None, Setting("late help", "SAMPLE_LATE", GROUPS[-1])] = None
    early: Annotated[bool, Setting("early help", kind="both")] = True


def test_a_declared_setting_is_bound_to_its_field_and_ordered_by_group() -> None:
    bound = in_help_order(declared_in(_Sample, per_turn=True))
    assert [s.name for s in bound] == ["early", "late"]  # `plain` carries no Setting
    early, late = bound
    assert (early.default, early.value_type, early.flag_name, early.per_turn) == (True, bool, "--early", True)
    assert (late.default, late.value_type, late.default_text, late.env) == (None, float, "off", "SAMPLE_LATE")
    assert late.parse("2.5") == 2.5
    assert not declared_in(_Sample)[0].per_turn


def _setting(name: str) -> Setting:
    return next(s for s in settings() if s.name == name)


def _sample(setting: Setting) -> tuple[str, object]:
    """A valid non-default value for the setting, as text and as the field holds it."""
    if setting.value_type is bool:
        return ("off" if setting.default else "on"), not setting.default
    if setting.choices:
        return setting.choices[-1], setting.choices[-1]
    if setting.value_type is int:
        return "2048", 2048
    if setting.value_type is float:
        return "0.5", 0.5
    if setting.value_type is Path:
        return "some/file", Path("some/file")
    return "some-text", "some-text"


def _other(setting: Setting) -> str:
    """Another valid value, different from `_sample`'s, for the environment to lose with."""
    if setting.value_type is bool:
        return "on" if setting.default else "off"
    if setting.choices:
        return setting.choices[0]
    return "1111" if setting.value_type in (int, float) else "from-env"


def _value(config: Config, setting: Setting) -> object:
    return getattr(config.limits if setting.per_turn else config, setting.name)


@pytest.mark.parametrize("setting", [s for s in settings() if s.env], ids=lambda s: s.env)
def test_each_variable_sets_its_field(setting: Setting) -> None:
    text, value = _sample(setting)
    assert setting.env is not None
    assert _value(Config.from_sources({}, {setting.env: text}), setting) == value


@pytest.mark.parametrize("setting", settings(), ids=lambda s: s.flag_name)
def test_each_flag_sets_its_field_over_the_variable(setting: Setting) -> None:
    text, value = _sample(setting)
    argv = [setting.flag_name] if setting.kind in ("set", "unset") else [setting.flag_name, text]
    if setting.kind == "both":
        argv = [setting.flag_name if value else "--no-" + setting.flag_name.removeprefix("--")]
    env = {setting.env: _other(setting)} if setting.env else {}
    config = Config.from_sources(flag_values(build_parser().parse_args(argv)), env)
    assert _value(config, setting) == value
    assert (
        _value(Config.from_sources(flag_values(build_parser().parse_args([])), {}), setting)
        == setting.default
    )


def test_the_help_shows_each_default_and_variable_from_config() -> None:
    help_text = " ".join(build_parser().format_help().split())
    assert (
        "model requests allowed per prompt turn (default: 50) [env ACP_AGENT_MAX_TURN_REQUESTS]" in help_text
    )
    assert f"(default: {DEFAULT_MODEL}) [env ACP_AGENT_MODEL]" in help_text
    assert "(default: 52428800) [env ACP_AGENT_MAX_LINE_BYTES]" in help_text
    for setting in settings():
        assert setting.flag_name in help_text
        assert setting.env is None or f"[env {setting.env}]" in help_text


def test_messages_name_the_flag_and_variable_of_a_setting() -> None:
    assert how_to_set("max_trials") == "--max-trials / ACP_AGENT_MAX_TRIALS"
    assert how_to_set("replay_strict") == "--replay-strict"
    with pytest.raises(ValueError, match="--verify-cmd / ACP_AGENT_VERIFY_CMD"):
        LoopChoice("verify").check()


@pytest.mark.parametrize(
    ("choice", "field"),
    [
        (LoopChoice("loops"), "loop"),
        (LoopChoice("verify"), "loop"),
        (LoopChoice("tools", max_trials=0), "maxTrials"),
        (LoopChoice("tools", verify_threshold=1.5), "verifyThreshold"),
        (LoopChoice("maxTrials"), "loop"),  # named by the check that failed, never by the message's words
    ],
)
def test_a_loop_problem_names_its_field(choice: LoopChoice, field: str) -> None:
    problem = choice.problem()
    assert problem is not None and problem.field == field
    with pytest.raises(ValueError, match="^" + problem.message[:20]):
        choice.check()


def test_the_configuration_page_table_is_the_generated_one() -> None:
    page = PAGE.read_text(encoding="utf-8")
    assert with_table(page) == page, "docs/configuration.md's table is stale: run scripts/config_table.py"
    assert settings_table() in page


def test_built_in_models_are_not_deprecated_in_the_installed_sdk() -> None:
    deprecated = importlib.import_module("anthropic._data").DEPRECATED_MODELS  # fails, not skips, if moved
    assert not set(BUILTIN_MODELS) & set(deprecated), "update BUILTIN_MODELS (decisions D2)"
    assert DEFAULT_MODEL in BUILTIN_MODELS
