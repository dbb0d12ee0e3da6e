"""The hooks seam: the loop tells the user's hooks what it is about to do, and what it did, and
obeys their answers.

The loop calls a `TurnHooks` at five points: before a tool call runs (`before_tool`: a hook may
block it, answer allow / deny / ask, which the rule engine weighs with the rules, or rewrite
its input), after it succeeded (`after_tool`: feedback for the model), when a prompt arrives
(`prompt_submitted`: block it, or add context), when the model ends its reply (`stopping`: a hook
may keep the turn going, each continuation one more counted request under the same meter), and
before a compaction (`compacting`: a hook may block it). Any answer may also end the turn
(`halt`: the turn ends `end_turn`, with a notice saying why).

A hook never counts as a model request; its runs are counted in the turn record's `hooks`
figure (`TurnMeter.hook_ran`). Implemented in `claude_code/hooks/hooks.py` (the user's Claude Code
hooks); `NO_HOOKS` is the loop's default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from acp_agent.errors import AgentError
from acp_agent.permissions.question import HookVerdict

if TYPE_CHECKING:
    from acp_agent.tools.base import ToolResult
    from acp_agent.turn.meter import TurnMeter

__all__ = [
    "NO_HOOKS",
    "AfterTool",
    "BeforeTool",
    "HookCall",
    "HookVerdict",
    "NoHooks",
    "PromptHooked",
    "StopHooked",
    "TurnHalted",
    "TurnHooks",
]


class TurnHalted(AgentError):
    """A hook answered `continue: false`: the turn ends (`end_turn`), its reason told the user."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class HookCall:
    """A tool call as the hooks are told of it: the agent's tool name and validated arguments."""

    call_id: str
    tool_name: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class BeforeTool:
    verdict: HookVerdict | None = None
    updated_input: dict[str, Any] | None = None
    """The input a hook gave instead (the whole object), checked again before the call runs."""
    context: str = ""
    """Added after the call's result, for the model (`additionalContext`)."""
    halt: str | None = None


@dataclass(frozen=True, slots=True)
class AfterTool:
    feedback: str = ""
    """What the model is told after the result (a hook's exit 2 or `decision: block`)."""
    context: str = ""
    halt: str | None = None


@dataclass(frozen=True, slots=True)
class PromptHooked:
    blocked: str | None = None
    """The prompt was blocked: why, for the user only (the model never sees the prompt)."""
    context: str = ""
    """Added beside the prompt, for the model."""
    halt: str | None = None


@dataclass(frozen=True, slots=True)
class StopHooked:
    go_on: str | None = None
    """The turn goes on, with this text as the user's next message (a Stop hook's block)."""
    halt: str | None = None


class TurnHooks(Protocol):
    """The hooks of a session (or of its subagents, `for_subagent`), asked by the loop."""

    async def before_tool(self, call: HookCall, meter: TurnMeter) -> BeforeTool: ...

    async def after_tool(self, call: HookCall, result: ToolResult, meter: TurnMeter) -> AfterTool: ...

    async def prompt_submitted(self, text: str, meter: TurnMeter) -> PromptHooked: ...

    async def stopping(self, last_text: str, again: bool, meter: TurnMeter) -> StopHooked:
        """The model ended its reply; `again`: it did so after a Stop hook kept the turn going."""
        ...

    async def compacting(self, trigger: Literal["manual", "auto"], meter: TurnMeter) -> str | None:
        """None lets the compaction run; a text blocks it (why)."""
        ...

    def for_subagent(self, agent_type: str) -> TurnHooks:
        """The hooks as a subagent's loop asks them (its Stop is `SubagentStop`)."""
        ...


class NoHooks:
    """No hooks: every answer lets the loop go on as it would."""

    async def before_tool(self, call: HookCall, meter: TurnMeter) -> BeforeTool:
        return _NOTHING_BEFORE

    async def after_tool(self, call: HookCall, result: ToolResult, meter: TurnMeter) -> AfterTool:
        return _NOTHING_AFTER

    async def prompt_submitted(self, text: str, meter: TurnMeter) -> PromptHooked:
        return _NOTHING_PROMPT

    async def stopping(self, last_text: str, again: bool, meter: TurnMeter) -> StopHooked:
        return _NOTHING_STOP

    async def compacting(self, trigger: Literal["manual", "auto"], meter: TurnMeter) -> str | None:
        return None

    def for_subagent(self, agent_type: str) -> TurnHooks:
        return self


_NOTHING_BEFORE = BeforeTool()
_NOTHING_AFTER = AfterTool()
_NOTHING_PROMPT = PromptHooked()
_NOTHING_STOP = StopHooked()
NO_HOOKS = NoHooks()
