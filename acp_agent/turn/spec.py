"""What one turn runs with: a frozen `TurnSpec`, given to the runner when the turn starts.

A session's turns, a command file's, a phase of the phased strategy and a subagent are all the
one loop (`runner.py`); what differs between them is their spec, never a field swapped on a shared
runner and put back afterwards: a command's turn runs its own spec (its model, its grants), a
phase derives one with its tools (`phase`), a subagent one with its own tools, sink and settings
(`child`). So what a turn runs with depends on what it was started with, never on what ran
before it.

What the loop keeps from one turn to the next (what the session's requests spent, the last
context size, what the replies were signed to) is the session's `LoopMemory`
(`session_usage.py`), beside the spec.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace

from acp_agent.model.base import ModelClient
from acp_agent.permissions.gate import PermissionGate
from acp_agent.tools.base import ToolContext
from acp_agent.tools.registry import ToolRegistry
from acp_agent.turn.context.attachments import ReadAttachments
from acp_agent.turn.events import EventSink
from acp_agent.turn.hooks import NO_HOOKS, TurnHooks
from acp_agent.turn.record import Step
from acp_agent.turn.settings import RunnerSettings
from acp_agent.turn.steering import Steering

__all__ = ["TurnSpec", "new_message_id"]


def new_message_id() -> str:
    return str(uuid.uuid4())


@dataclass(frozen=True, slots=True)
class TurnSpec:
    """The model, tools, sink, context, settings, permission gate and hooks of one turn."""

    model: ModelClient
    tools: ToolRegistry
    sink: EventSink
    ctx: ToolContext
    settings: RunnerSettings
    """What its requests carry (unless `follow` gives them)."""
    gate: PermissionGate
    """Where each of its calls is decided (`permissions/gate.py`), with what the turn binds."""
    hooks: TurnHooks = NO_HOOKS
    """The user's hooks (`hooks.py`): before and after tools, at the reply's end, before a
    compaction; never a model request."""
    attachments: ReadAttachments | None = None
    """Instructions scoped to the files its tools read (`context/attachments.py`)."""
    steering: Steering | None = None
    """The session's messages for its running turn (`steering.py`); None: nobody steers."""
    new_id: Callable[[], str] = new_message_id
    on_step: Callable[[Step], None] | None = None
    """Called once per model request (in-process callers keep the steps)."""
    follow: Callable[[], RunnerSettings] | None = None
    """The session's settings as they are at each request: a prompt's turn follows a model,
    effort, web or style change made while it runs (None: `settings`, fixed for the turn)."""

    def request_settings(self) -> RunnerSettings:
        """What the turn's next request carries."""
        return self.follow() if self.follow is not None else self.settings

    def fixed(self, settings: RunnerSettings) -> TurnSpec:
        """This spec with `settings` for the whole turn (a command file's own model)."""
        return replace(self, settings=settings, follow=None)

    def phase(self, tools: ToolRegistry, read_only: str | None = None) -> TurnSpec:
        """A phase of the turn with `tools` instead (the phased strategy's); `read_only`: what a
        call that changes something is told in it (the plan phase's refusal, the engine's)."""
        gate = self.gate if read_only is None else self.gate.bound(read_only=read_only)
        return replace(self, tools=tools, gate=gate)

    def child(
        self,
        tools: ToolRegistry,
        sink: EventSink,
        ctx: ToolContext,
        settings: RunnerSettings,
        gate: PermissionGate,
        hooks: TurnHooks,
    ) -> TurnSpec:
        """A subagent's spec: its own tools, sink, context, settings, gate and hooks, the parent's
        model, attachments and ids; nobody steers it, and its requests are no steps of the parent's."""
        return replace(
            self,
            tools=tools,
            sink=sink,
            ctx=ctx,
            settings=settings,
            gate=gate,
            hooks=hooks,
            steering=None,
            on_step=None,
            follow=None,
        )
