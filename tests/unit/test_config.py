"""Configuration: flags over environment over defaults, and per-session overrides."""

from __future__ import annotations

import pytest

from acp_agent.cli import build_parser
from acp_agent.config import BUILTIN_MODELS, DEFAULT_MODEL, ENV_VARS, Config, Limits, LimitsError


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


@pytest.mark.parametrize("bad", [None, 0, -1, "3", True, 2.5])
def test_max_turn_requests_override_must_be_a_positive_integer(bad: object) -> None:
    with pytest.raises(LimitsError) as caught:
        Limits().with_overrides({"maxTurnRequests": bad})
    assert caught.value.field == "maxTurnRequests"


def test_every_setting_has_a_flag_and_appears_in_the_readme() -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    help_text = build_parser().format_help()
    for name, var in ENV_VARS.items():
        flag = "--" + name.replace("_", "-")
        if name == "streaming":
            flag = "--stream"
        assert flag in help_text, flag
        assert f"`{flag}" in readme, flag
        assert var in readme, var


def test_built_in_models_are_not_deprecated_in_the_installed_sdk() -> None:
    deprecated = pytest.importorskip("anthropic._data").DEPRECATED_MODELS
    assert not set(BUILTIN_MODELS) & set(deprecated), "update BUILTIN_MODELS (decisions D2)"
    assert DEFAULT_MODEL in BUILTIN_MODELS
