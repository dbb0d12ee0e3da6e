"""All settings and their defaults, in one place: flags > environment > defaults.

`Config` is what the process was started with; `Limits` is the per-turn allowance a session runs
under, which a session may override through `session/new` `_meta["acp-agent"]`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from acp_agent.errors import LimitsError  # raised by Limits.with_overrides; importers may take it from here

__all__ = ["BUILTIN_MODELS", "DEFAULT_MODEL", "Config", "Limits", "LimitsError", "user_config_dir"]

DEFAULT_MODEL = "claude-sonnet-5-5"
"""The model used when none is configured (docs/decisions.md D2)."""

BUILTIN_MODELS = ("claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5")
"""Models offered when the Models API cannot be asked; a unit test keeps them off the SDK's
deprecation list."""


def user_config_dir() -> Path:
    """The user's config dir for acp-agent (the stored key, user-level instructions)."""
    import platformdirs  # only when asked: module import stays free of work

    return Path(platformdirs.user_config_dir("acp-agent"))


class Limits(BaseModel):
    """The per-turn budgets (docs/decisions.md C4). `None` turns a budget off."""

    model_config = ConfigDict(defer_build=True, frozen=True, alias_generator=to_camel, populate_by_name=True)

    max_turn_requests: int = Field(50, ge=1)
    """Model requests allowed in one prompt turn; the N+1st is never sent."""
    max_tool_calls: int | None = Field(200, ge=0)
    """Tool calls started in one prompt turn."""
    max_turn_seconds: float | None = Field(3600.0, gt=0)
    """Wall clock for one prompt turn (a backstop; the editor's cancel is the real control)."""
    max_turn_output_tokens: int | None = Field(None, ge=1)
    """Output tokens summed over the turn's requests."""
    max_turn_input_tokens: int | None = Field(None, ge=1)
    """Input tokens summed over the turn's requests."""
    max_turn_cost_usd: float | None = Field(None, gt=0)
    """Spend per turn in USD (needs a known price for the model; reported as costUsd)."""
    repeat_limit: int = Field(5, ge=0)
    """The Nth identical tool call with an identical result ends the turn (nudge at 3; 0 = off)."""

    def with_overrides(self, overrides: Mapping[str, Any]) -> Limits:
        """Apply `_meta["acp-agent"]` overrides (camelCase keys); unknown keys are ignored.

        Raises:
            LimitsError: a value is not valid for its limit (`maxTurnRequests` may not be null).
        """
        fields = {f.alias: name for name, f in type(self).model_fields.items() if f.alias}
        data = self.model_dump()
        for key, value in overrides.items():
            name = fields.get(key)
            if name is None:
                continue
            if value is None and name in {"max_turn_requests", "repeat_limit"}:
                raise LimitsError(key, "must be an integer (it cannot be null)")
            if isinstance(value, bool) or not (value is None or isinstance(value, int | float)):
                raise LimitsError(key, "must be a number or null")
            data[name] = value
        try:
            return type(self).model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = fields_by_name(type(self)).get(str(err["loc"][0]), str(err["loc"][0]))
            raise LimitsError(field, err["msg"]) from None


def fields_by_name(model: type[BaseModel]) -> dict[str, str]:
    """Field name → its camelCase alias."""
    return {name: f.alias or name for name, f in model.model_fields.items()}


class Config(BaseModel):
    """How the agent was started. Built once by the CLI from flags, environment and defaults."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    model: str = DEFAULT_MODEL
    """Model id sent to the Messages API."""
    max_tokens: int = Field(16_000, ge=1)
    """max_tokens of each model request (below the SDK's non-streaming guard)."""
    streaming: bool = True
    """Stream replies (SSE) or make one non-streaming request per model call."""
    base_url: str | None = None
    """Messages API base URL (no /v1); None lets the SDK read ANTHROPIC_BASE_URL."""
    max_retries: int = Field(2, ge=0)
    """Retries of one model request, only while nothing of it was relayed."""
    stall_seconds: float = Field(120.0, gt=0)
    """A stream that yields no event for this long has stalled."""
    request_timeout: float = Field(600.0, gt=0)
    """Read timeout of a non-streaming request (not retried)."""
    context_window: int | None = Field(None, ge=1)
    """Context window (usage_update.size, compaction); None → the model's own (its profile)."""
    compact_at: float = Field(0.8, ge=0, le=1)
    """Compact older turns when a request's context passes this fraction of the window (0 = off)."""
    thinking_budget: int | None = Field(None, ge=1024)
    """A thinking budget in tokens, only for models that take one (Haiku 4.5); None: the model's
    own thinking (adaptive on the 5.x models)."""
    effort: str | None = Field(None, pattern="^(low|medium|high|xhigh|max)$")
    """output_config.effort of every request; None: the model's default."""
    prompt_cache: bool = True
    """Mark cache breakpoints on every request (some gateways reject cache_control)."""
    cache_ttl: str = Field("5m", pattern="^(5m|1h)$")
    """TTL of the fixed breakpoints (tools, system); the sliding ones always use 5m."""
    max_line_bytes: int = Field(50 * 1024 * 1024, ge=1024)
    """Longest JSON-RPC line accepted on stdin."""
    state_dir: Path | None = None
    """Where session journals live; None → the user data dir (XDG) + /sessions."""
    journal: bool = True
    """Keep a journal per session (enables session/load, list, resume, close, delete)."""
    keep_days: float = Field(30, ge=0)
    """Journals untouched this long are removed at start-up (0 keeps them all)."""
    loop: str = "tools"
    """The turn strategy: tools (the plain loop), verify (check and retry), phased (plan → act)."""
    verify_cmd: str | None = None
    """verify/phased: a shell command whose exit 0 means the work passes (e.g. "pytest -q")."""
    verify_rubric: str | None = None
    """verify/phased without a command: the rubric a model judge scores the work against."""
    verify_threshold: float = Field(0.8, ge=0, le=1)
    """The judge's score needed to pass (with its `passed` verdict)."""
    max_trials: int = Field(3, ge=1)
    """Failed verifications allowed before the turn ends with limit maxTrials."""
    on_limit: str = Field("stop", pattern="^(stop|wrap_up)$")
    """stop: a budget ends the turn as it is; wrap_up: the last allowed request asks for a summary."""
    prices: Path | None = None
    """JSON price table (USD per million tokens by model) over the built-in one."""
    record: Path | None = None
    """Save every Messages API exchange of the run to this JSON-lines cassette."""
    replay_strict: bool = False
    """With --model replay:FILE, also compare model, tool names and last user message."""
    limits: Limits = Limits()
    """Per-turn budgets; sessions may override them."""

    @classmethod
    def from_sources(cls, flags: Mapping[str, Any], env: Mapping[str, str] | None = None) -> Config:
        """Flags (None = not given) over environment over defaults.

        Raises:
            ValueError: an environment value does not parse; the message names the variable.
        """
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        limits: dict[str, Any] = {}
        for name, var, target in _ENV_MAP:
            raw = flags.get(name)
            if raw is None and env.get(var, "") != "":
                raw = _parse_env(var, env[var], name)
            if raw is not None:
                (limits if target == "limits" else values)[name] = raw
        mapped = {name for name, _, _ in _ENV_MAP}
        values.update(
            {
                name: value
                for name, value in flags.items()
                if name not in mapped and name in cls.model_fields and value is not None
            }
        )
        if limits:
            values["limits"] = Limits(**limits)
        return cls(**values)


_ENV_MAP: tuple[tuple[str, str, str], ...] = (
    ("model", "ACP_AGENT_MODEL", "config"),
    ("max_tokens", "ACP_AGENT_MAX_TOKENS", "config"),
    ("streaming", "ACP_AGENT_STREAMING", "config"),
    ("base_url", "ANTHROPIC_BASE_URL", "config"),
    ("max_retries", "ACP_AGENT_MAX_RETRIES", "config"),
    ("stall_seconds", "ACP_AGENT_STALL_SECONDS", "config"),
    ("request_timeout", "ACP_AGENT_REQUEST_TIMEOUT", "config"),
    ("context_window", "ACP_AGENT_CONTEXT_WINDOW", "config"),
    ("thinking_budget", "ACP_AGENT_THINKING_BUDGET", "config"),
    ("effort", "ACP_AGENT_EFFORT", "config"),
    ("prompt_cache", "ACP_AGENT_PROMPT_CACHE", "config"),
    ("cache_ttl", "ACP_AGENT_CACHE_TTL", "config"),
    ("compact_at", "ACP_AGENT_COMPACT_AT", "config"),
    ("loop", "ACP_AGENT_LOOP", "config"),
    ("verify_cmd", "ACP_AGENT_VERIFY_CMD", "config"),
    ("verify_rubric", "ACP_AGENT_VERIFY_RUBRIC", "config"),
    ("verify_threshold", "ACP_AGENT_VERIFY_THRESHOLD", "config"),
    ("max_trials", "ACP_AGENT_MAX_TRIALS", "config"),
    ("max_line_bytes", "ACP_AGENT_MAX_LINE_BYTES", "config"),
    ("state_dir", "ACP_AGENT_STATE_DIR", "config"),
    ("keep_days", "ACP_AGENT_KEEP_DAYS", "config"),
    ("max_turn_requests", "ACP_AGENT_MAX_TURN_REQUESTS", "limits"),
    ("max_tool_calls", "ACP_AGENT_MAX_TOOL_CALLS", "limits"),
    ("max_turn_seconds", "ACP_AGENT_MAX_TURN_SECONDS", "limits"),
    ("max_turn_output_tokens", "ACP_AGENT_MAX_TURN_OUTPUT_TOKENS", "limits"),
    ("max_turn_input_tokens", "ACP_AGENT_MAX_TURN_INPUT_TOKENS", "limits"),
    ("repeat_limit", "ACP_AGENT_REPEAT_LIMIT", "limits"),
    ("max_turn_cost_usd", "ACP_AGENT_MAX_TURN_COST_USD", "limits"),
    ("on_limit", "ACP_AGENT_ON_LIMIT", "config"),
    ("prices", "ACP_AGENT_PRICES", "config"),
)
"""(setting, environment variable, where it lives). The CLI's flags use the same setting names."""

ENV_VARS: dict[str, str] = {name: var for name, var, _ in _ENV_MAP}


def _parse_env(var: str, raw: str, name: str) -> Any:
    if name in {"streaming", "prompt_cache"}:
        if raw.strip().lower() in {"1", "true", "yes", "on"}:
            return True
        if raw.strip().lower() in {"0", "false", "no", "off"}:
            return False
        raise ValueError(f"{var} must be on or off (1 or 0), not {raw!r}")
    if name in {
        "model",
        "base_url",
        "state_dir",
        "loop",
        "verify_cmd",
        "verify_rubric",
        "on_limit",
        "prices",
        "effort",
        "cache_ttl",
    }:
        return raw
    try:
        return (
            float(raw)
            if name
            in {
                "stall_seconds",
                "request_timeout",
                "max_turn_seconds",
                "keep_days",
                "compact_at",
                "verify_threshold",
                "max_turn_cost_usd",
            }
            else int(raw)
        )
    except ValueError:
        raise ValueError(f"{var} must be a number, not {raw!r}") from None
