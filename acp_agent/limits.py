"""The per-turn budgets a session runs under, and how `_meta` overrides them.

`Config.limits` (`config.py`) holds the process's own; `session/new` `_meta["acp-agent"]` may
override them for one session (`Limits.with_overrides`). Each field carries its `Setting`, like
`Config`'s, so the flags, the environment and the configuration page's table come from here too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from acp_agent.errors import LimitsError
from acp_agent.settings import GROUPS, Setting

__all__ = ["Limits", "fields_by_name"]

_LIMITS = GROUPS[1]  # the help group "per-turn limits"


class Limits(BaseModel):
    """The per-turn budgets (docs/decisions.md C4). `None` turns a budget off."""

    model_config = ConfigDict(defer_build=True, frozen=True, alias_generator=to_camel, populate_by_name=True)

    max_turn_requests: Annotated[
        int, Setting("model requests allowed per prompt turn", "ACP_AGENT_MAX_TURN_REQUESTS", _LIMITS)
    ] = Field(50, ge=1)
    """Model requests allowed in one prompt turn; the N+1st is never sent."""
    max_tool_calls: Annotated[
        int | None, Setting("tool calls allowed per prompt turn", "ACP_AGENT_MAX_TOOL_CALLS", _LIMITS)
    ] = Field(200, ge=0)
    """Tool calls started in one prompt turn."""
    max_turn_seconds: Annotated[
        float | None, Setting("wall clock per prompt turn, in seconds", "ACP_AGENT_MAX_TURN_SECONDS", _LIMITS)
    ] = Field(3600.0, gt=0)
    """Wall clock for one prompt turn (a backstop; the editor's cancel is the real control)."""
    max_turn_output_tokens: Annotated[
        int | None, Setting("output tokens per prompt turn", "ACP_AGENT_MAX_TURN_OUTPUT_TOKENS", _LIMITS)
    ] = Field(None, ge=1)
    """Output tokens summed over the turn's requests."""
    max_turn_input_tokens: Annotated[
        int | None, Setting("input tokens per prompt turn", "ACP_AGENT_MAX_TURN_INPUT_TOKENS", _LIMITS)
    ] = Field(None, ge=1)
    """Input tokens summed over the turn's requests."""
    max_turn_cost_usd: Annotated[
        float | None,
        Setting("spend per prompt turn in USD (needs a known price)", "ACP_AGENT_MAX_TURN_COST_USD", _LIMITS),
    ] = Field(None, gt=0)
    """Spend per turn in USD (needs a known price for the model; reported as costUsd)."""
    max_web_searches: Annotated[
        int | None,
        Setting(
            "web searches per prompt turn (the search tool's max_uses carries what is left)",
            "ACP_AGENT_MAX_WEB_SEARCHES",
            _LIMITS,
        ),
    ] = Field(10, ge=0)
    """Web searches the API may run in one prompt turn ($10 per 1,000, in costUsd); 0 offers no
    search tool, None leaves `max_uses` out."""
    repeat_limit: Annotated[
        int,
        Setting(
            "the Nth identical tool call with an identical result ends the turn; a note goes to the "
            "model at the 3rd; 0 = off",
            "ACP_AGENT_REPEAT_LIMIT",
            _LIMITS,
        ),
    ] = Field(5, ge=0)
    """The Nth identical tool call with an identical result ends the turn (nudge at 3; 0 = off)."""

    def with_overrides(self, overrides: Mapping[str, Any]) -> Limits:
        """Apply `_meta["acp-agent"]` overrides (camelCase keys); unknown keys are ignored.

        Raises:
            LimitsError: a value is not valid for its limit (`maxTurnRequests` may not be null).
        """
        fields = {f.alias: name for name, f in type(self).model_fields.items() if f.alias}
        if not any(key in fields for key in overrides):
            return self  # frozen: every session without overrides shares the configured limits
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
