"""The `task` tool: a subagent, one child loop with a fresh context, inside the turn's budgets.

The model hands a self-contained question to a helper ("find where the retry policy is
configured") and gets back only the answer. The child is the one loop (`TurnRunner`) over a fresh
`History` that is never journaled and never enters the parent's: its own system prompt (built by
the session, the same for every child of the session, so they share one cached prefix), the task
prompt, and the children's tools (read-only by default). Its events become progress lines of the
parent's call (`progress.py`); its final text is the call's result.

One meter for the tree (docs/decisions.md D27): the child counts with `TurnMeter.child`, so every
request, tool call and token of it is the turn's, and with `maxTurnRequests` N exactly N requests
reach the API across the parent and its children. A child that hits a limit ends, and its partial
answer goes back with the limit named; the turn's next request then meets the same meter. Several
`task` calls of one reply run at once (`ToolBatch`: the tool runs beside itself); a cancel ends
them all, and the tool batch answers the parent's calls as for any tool.

The tool lives here, in `turn/`, because it runs the loop: the tool batch hands it the turn's meter,
spec (its model, settings, sink, asker, hooks) and the session's loop memory (`InTurn`), which a
tool in `tools/` never sees; the child's spec derives from the turn's (`TurnSpec.child`).

Besides the general-purpose subagent, the session may offer subagent types by name (custom agents,
`SubagentType`): the call's `subagent_type` picks one, and its child runs with that type's own
system prompt, tools (a subset of the subagents') and model, under the same meter; a child on
another model is priced at its model's price. Whether a child may start at all is decided before
the call runs, as for any tool: the tool batch puts the `task` call, its `subagent_type` with it,
to the turn's gate, where the rule engine weighs `Agent(name)` rules (no rule: it runs, unasked);
what a subagent's own calls may do is the engine's too, through the turn's gate bound to its
questions (a subagent may change something only in acceptEdits and bypassPermissions).

Where the client shows subagents as sessions of their own (`sessions`, ACP's unstable
`subagents` capability), each run is announced first and its live traffic goes to its own
session as well; how it ended is told there once it has, even from a cancelled scope. Such a
client may cancel one subagent alone: it stops as in a turn cancel, and its partial answer goes
back to the parent's call with a note saying so; the parent's turn goes on.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import anyio
import anyio.lowlevel
import structlog

from acp_agent.errors import PermissionCancelled, ToolError, TurnFailed
from acp_agent.model.pricing import Price
from acp_agent.tools.base import Progress, ToolContext, ToolResult
from acp_agent.tools.printable import one_line
from acp_agent.tools.registry import ToolRegistry
from acp_agent.turn.context.history import History
from acp_agent.turn.events import EventSink
from acp_agent.turn.meter import Limit, LimitReached, Subagent
from acp_agent.turn.runner import TurnRunner
from acp_agent.turn.stop import TurnStop
from acp_agent.turn.subagents.progress import (
    Both,
    ChildAsker,
    ChildProgress,
    ChildSession,
    ChildSessions,
)
from acp_agent.turn.subagents.types import GENERAL, SubagentType, listed_types, types_schema, types_text
from acp_agent.turn.tool_batch import InTurn

__all__ = ["NOT_RUN", "TaskTool"]

log = structlog.get_logger(__name__)

NOT_RUN = (
    "not run: the turn has no model request to spare for a subagent (its last one is kept for "
    "your answer); answer with what you have"
)
NO_ANSWER = "(the subagent ended without an answer)"
CANCELLED_ALONE = "[the user cancelled this subagent before it finished: above is what it had so far]"
ENDED_SECONDS = 2.0
"""Bound on telling a child session how its subagent ended (it may be told from a cancelled scope)."""


class TaskTool:
    """Runs a subagent on a task and returns its final answer."""

    name = "task"
    permission = None
    beside_itself = True
    """Several `task` calls of one reply run at once (`ToolBatch`)."""
    description = (
        "Hand a self-contained task to a subagent: a helper with a fresh context and its own tools, "
        "which works on it alone and returns only its final answer (its steps never enter your "
        "context). Use it for searches and questions that need many reads, and call it several "
        "times in one reply to run independent tasks at once. The subagent cannot see this "
        "conversation: put everything it needs in the prompt (what to find, where to look, what "
        "to report back). Its requests and tool calls count against this turn's budgets."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "description": {
                "type": "string",
                "minLength": 1,
                "description": "A short (3-6 words) title for the task, shown to the user.",
            },
            "prompt": {
                "type": "string",
                "minLength": 1,
                "description": "The task, complete and self-contained, and what the answer should contain.",
            },
        },
        "required": ["description", "prompt"],
        "additionalProperties": False,
    }

    def __init__(
        self,
        tools: ToolRegistry,
        system: str | Callable[[], str],
        *,
        changes: bool = False,
        sessions: ChildSessions | None = None,
        types: Sequence[SubagentType] = (),
        prices: Mapping[str, Price] | None = None,
    ) -> None:
        """`tools` are the subagents' tools and `system` their system prompt, the same for every
        subagent of the session (a cached prefix), or the function that builds it on the first call
        (most sessions never call `task`). `changes`: those tools edit or run commands (whether
        a subagent may use them is the engine's, in the session's mode); without, they only look,
        so the call is read-only and runs beside other read-only calls. `sessions` is
        given when the client shows each subagent as a child session too. `types` are the
        subagents offered by name (each with tools among `tools`), listed in the tool's
        description as far as `LISTED_CHARS` allows; `prices` price a type's other model."""
        self.tools = tools
        self._system = system
        self.sessions = sessions
        self.read_only = not changes
        self.kind = "other" if changes else "think"
        self.prices = prices or {}
        self.types, self.left_out = listed_types(types)
        """The types offered, by name, and the names left out (the list's cap)."""
        self._prompts: dict[str, str] = {}
        if self.types:  # the schema is decided here, once: the tool list is a cached prefix
            self.description = TaskTool.description + types_text(self.types, self.left_out)
            self.input_schema = types_schema(TaskTool.input_schema, self.types)

    @property
    def system(self) -> str:
        """The subagents' system prompt, built once, on first use when it was given as a function."""
        if not isinstance(self._system, str):
            self._system = self._system()
        return self._system

    def _prompt_of(self, kind: SubagentType) -> str:
        """A type's system prompt, built on its first call and kept (a cached prefix)."""
        prompt = self._prompts.get(kind.name)
        if prompt is None:
            prompt = self._prompts[kind.name] = kind.system()
        return prompt

    def title(self, args: dict[str, Any]) -> str:
        description = args.get("description")
        kind = args.get("subagent_type")
        named = f"Subagent ({one_line(kind)})" if isinstance(kind, str) and kind in self.types else "Subagent"
        return f"{named}: {description}" if isinstance(description, str) and description else named

    def time_allowance(self, args: dict[str, Any]) -> float:
        """No timeout of its own: the turn's wall clock and the editor's cancel bound it."""
        return math.inf

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise ToolError("the task tool runs only inside a turn")

    async def run_in_turn(self, args: dict[str, Any], ctx: ToolContext, turn: InTurn) -> ToolResult:
        """Run one subagent under the turn's meter, on the turn's model and settings (and its hooks
        and identity); its answer (or partial answer) is the result."""
        if ctx.call_id is None:
            raise ToolError("the task tool runs only as a call of a turn")
        parent = turn.spec
        parent_settings = parent.request_settings()
        description = one_line(str(args["description"]))  # its name wherever the editor shows it
        kind = self.types.get(str(args.get("subagent_type") or GENERAL))
        if kind is None:
            settings = replace(parent_settings, system=self.system)
        else:  # its own model, thinking, effort and web tools, and its own prompt
            own = kind.settings(parent_settings) if kind.settings is not None else parent_settings
            settings = replace(own, system=self._prompt_of(kind))
        other = settings.model if settings.model != parent_settings.model else None  # its own price
        subagent = turn.meter.child(
            description,
            turn.together,
            agent=None if kind is None else kind.name,
            model=other,
            price=None if other is None else self.prices.get(other),
        )
        if subagent.meter.share == 0:
            subagent.ended(TurnStop.LIMIT, Limit.REQUESTS)
            return ToolResult(NOT_RUN, is_error=True)
        progress = ChildProgress(turn.sink, ctx.call_id)
        gate = parent.gate.bound(subagent=True, asker=ChildAsker(parent.gate.asker, progress, description))
        shown: ChildSession | None = None
        sink: EventSink = progress
        alone = anyio.CancelScope()  # cancelled when the client cancels this subagent alone
        if self.sessions is not None:  # announced before any of its traffic
            shown = await self.sessions.open(description, str(args["prompt"]), alone.cancel)
            sink = Both(progress, shown.sink)
        child = TurnRunner(
            parent.child(
                self.tools if kind is None else kind.tools,
                sink,
                replace(ctx, background=None),  # its commands end with it: none in the background
                settings,
                gate,
                parent.hooks.for_subagent(str(args.get("subagent_type") or "general-purpose")),
            )
        )
        history = History()
        history.add_prompt([{"type": "text", "text": str(args["prompt"])}])
        try:
            with alone:
                try:
                    return await self._run_child(child, history, subagent, progress)
                except PermissionCancelled:
                    if not alone.cancel_called:  # its question was cancelled: the turn is
                        raise
            await anyio.lowlevel.checkpoint_if_cancelled()  # the whole turn too: answered as below
            subagent.ended(TurnStop.CANCELLED)
            log.info("subagent.cancelled", description=subagent.description)
            text = f"{_last_text(history) or NO_ANSWER}\n\n{CANCELLED_ALONE}"
            return ToolResult(text, steps=tuple(progress.lines))
        except (anyio.get_cancelled_exc_class(), PermissionCancelled):
            subagent.ended(TurnStop.CANCELLED)
            # The parent's call is answered with what the subagent had done (no checkpoint here).
            await ctx.report(Progress(text=_cancelled(progress), cancelled=True))
            raise
        finally:
            turn.memory.usage.absorb(child.usage)
            if shown is not None:
                with anyio.move_on_after(ENDED_SECONDS, shield=True):
                    await shown.ended(subagent)

    async def _run_child(
        self, child: TurnRunner, history: History, subagent: Subagent, progress: ChildProgress
    ) -> ToolResult:
        meter = subagent.meter
        log.info("subagent.started", description=subagent.description, share=meter.share)
        try:
            outcome = await child.run(history, meter)
        except LimitReached as reached:
            subagent.ended(reached.limit.stop, reached.limit)
            note = _limit_note(reached.limit, subagent)
            return ToolResult(f"{_last_text(history) or NO_ANSWER}\n\n{note}", steps=tuple(progress.lines))
        except TurnFailed as exc:
            subagent.ended(TurnStop.END_TURN, error=str(exc))
            log.warning("subagent.failed", description=subagent.description, error=str(exc))
            text = f"the subagent failed: {exc}"
            if subagent.model is not None and subagent.agent is not None:  # the agent file's `model`
                text += (
                    f" (the agent {subagent.agent!r} runs on {subagent.model!r}, as its file's `model` says)"
                )
            return ToolResult(text, is_error=True, steps=tuple(progress.lines))
        finally:
            log.info("subagent.ended", description=subagent.description, requests=meter.model_requests)
        subagent.ended(outcome.stop)
        text = outcome.final_text or NO_ANSWER
        if outcome.stop is TurnStop.MAX_TOKENS:
            text += "\n\n[the subagent's answer was cut off: it reached max_tokens]"
        elif outcome.stop is TurnStop.REFUSAL:
            text = "[the model refused this task]"
        return ToolResult(text, steps=tuple(progress.lines))


def _last_text(history: History) -> str:
    """The text of the subagent's last reply (its partial answer when a limit stopped it)."""
    for message in reversed(history.messages):
        if message["role"] == "assistant":
            return "".join(b.get("text", "") for b in message["content"] if b.get("type") == "text")
    return ""


def _limit_note(limit: Limit, subagent: Subagent) -> str:
    """ "[subagent stopped at its limit: …]", naming the budget (the turn's, or its own share)."""
    meter = subagent.meter
    name = limit.record_name
    if limit is Limit.REQUESTS and meter.parent is not None:
        if meter.share_spent():
            detail = f"its share of the turn's requests, {meter.share}"
        elif meter.parent.requests_left() <= 1:
            detail = f"the turn's {meter.limits.max_turn_requests} model requests are spent or kept for you"
        else:
            detail = "the turn's budget"
        return f"[subagent stopped at its limit: {name} ({detail})]"
    return f"[subagent stopped at its limit: {name}]"


def _cancelled(progress: ChildProgress) -> str:
    done = progress.text()
    return "the user cancelled the turn while the subagent ran" + (
        f"; it had made these tool calls:\n{done}" if done else ""
    )
