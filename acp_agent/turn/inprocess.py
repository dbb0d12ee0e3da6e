"""Run a turn from Python, without ACP: a model client, tools, limits and a strategy in; a result out.

    from acp_agent.api import AnthropicModel, CommandEvaluator, Limits, VerifyStrategy
    from acp_agent.api import default_registry, run_turn   # the public names (acp_agent/api.py)

    result = await run_turn(
        "Make the tests pass", model=AnthropicModel(streaming=True), tools=default_registry(),
        cwd="path/to/project", limits=Limits(max_turn_requests=20),
        strategy=VerifyStrategy(CommandEvaluator("pytest -q"), max_trials=3))
    print(result.status, result.output)           # completed|limited|cancelled|failed
    for trial in result.record.trials:            # VerifyResult: the strategy's own type
        print(trial.trial, trial.passed, trial.score, trial.feedback)

The same driver, runner, meter and rule engine as a session (without settings rules, in the
default mode): every budget holds, a file tool's path outside `cwd` is refused unasked, and what a
session would ask goes to `permissions`. With no `permissions`, every such call is allowed (there
is nobody to ask), so choose the tools accordingly.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import anyio

from acp_agent.config import DEFAULT_MODEL
from acp_agent.limits import Limits
from acp_agent.model.base import ModelClient
from acp_agent.model.profiles import builtin_profile, thinking_param
from acp_agent.permissions.gate import PermissionGate
from acp_agent.permissions.question import ALLOW_ALL, PermissionAsker, question_asker
from acp_agent.tools.base import Tool, ToolContext
from acp_agent.tools.hidden import HiddenPaths, agent_hidden_paths
from acp_agent.tools.registry import ToolRegistry
from acp_agent.tools.sandbox.command_sandbox import CommandSandbox, SandboxPolicy
from acp_agent.turn.context.history import History
from acp_agent.turn.driver import drive_turn
from acp_agent.turn.events import EventSink, TurnEvent
from acp_agent.turn.meter import TurnMeter
from acp_agent.turn.record import Step, TurnRecord
from acp_agent.turn.runner import RunnerSettings, TurnRunner
from acp_agent.turn.spec import TurnSpec
from acp_agent.turn.stop import TurnStop
from acp_agent.turn.strategies.base import Strategy
from acp_agent.turn.strategies.tools import ToolsStrategy

__all__ = ["Status", "TurnOutcome", "run_turn"]

Status = Literal["completed", "limited", "cancelled", "failed"]

_STATUS: dict[TurnStop, Status] = {
    TurnStop.END_TURN: "completed",
    TurnStop.REFUSAL: "completed",
    TurnStop.MAX_TOKENS: "limited",
    TurnStop.LIMIT: "limited",
    TurnStop.CANCELLED: "cancelled",
}


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    """One in-process turn: the typed record (the strategy's result type) and what `_meta` omits."""

    record: TurnRecord
    """`TurnRecord`, `VerifyResult`, `PhasedResult`, …: the same object the `_meta` record dumps."""
    output: str
    """The final text, or the partial text when a limit or cancel ended the turn."""
    status: Status
    steps: tuple[Step, ...]
    """One per model request (judge requests included), in order."""
    history: History
    """The conversation so far: pass it to the next `run_turn` to go on."""
    error: str | None = None

    @property
    def stop_reason(self) -> str:
        return self.record.stop_reason


def _hidden(sandbox: SandboxPolicy | None) -> HiddenPaths:
    given = sandbox.hidden.paths if sandbox is not None else ()
    return HiddenPaths.of([*given, *agent_hidden_paths(None).paths])


class _Discard:
    async def emit(self, event: TurnEvent) -> None:
        return None


async def run_turn(
    prompt: str | list[dict[str, Any]],
    *,
    model: ModelClient,
    tools: ToolRegistry | Iterable[Tool] = (),
    limits: Limits | None = None,
    strategy: Strategy | None = None,
    cwd: str | Path = ".",
    model_id: str = DEFAULT_MODEL,
    max_tokens: int = 16_000,
    system: str | None = None,
    thinking: dict[str, Any] | None = None,
    history: History | None = None,
    permissions: PermissionAsker | None = None,
    sink: EventSink | None = None,
    cancel: anyio.CancelScope | None = None,
    sandbox: SandboxPolicy | None = None,
) -> TurnOutcome:
    """Run one prompt turn with `strategy` (default: the plain tool loop) and return its result.

    `sandbox`: the commands of the turn (`run_command`, a verify check) run under it, as in a
    session (`SandboxPolicy()`: bubblewrap where it works); None runs them unconfined. Either way
    the agent's own paths (journals, the stored key, the SDK's profiles) are hidden from the tools
    and the sandbox, as in a session, with the policy's own `hidden` paths.

    Requests follow `model_id`'s profile (adaptive thinking where the model has it); an explicit
    `thinking` is sent as given.

    `sink` receives the same events an editor would see; `cancel`, cancelled from another task,
    ends the turn `cancelled`. A failing model (auth, API down) ends it `failed`, with `error`.
    """
    registry = tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools)
    history = history if history is not None else History()
    steps: list[Step] = []
    root = Path(await anyio.Path(cwd).resolve())
    profile = builtin_profile(model_id)
    settings = RunnerSettings(
        model=model_id,
        max_tokens=min(max_tokens, profile.max_output),
        system=system,
        thinking=thinking if thinking is not None else thinking_param(profile, budget=None),
        context_window=profile.context_window,
        profile=profile,
    )
    spec = TurnSpec(
        model,
        registry,
        sink or _Discard(),
        ToolContext(
            cwd=root,
            hidden=(hidden := _hidden(sandbox)),
            sandbox=CommandSandbox(replace(sandbox, hidden=hidden)) if sandbox is not None else None,
        ),
        settings,
        PermissionGate.without_rules(
            (root,), question_asker(permissions) if permissions is not None else ALLOW_ALL, hidden
        ),
        on_step=steps.append,
    )
    runner = TurnRunner(spec)
    blocks = [{"type": "text", "text": prompt}] if isinstance(prompt, str) else prompt
    result = await drive_turn(
        strategy=strategy or ToolsStrategy(),
        runner=runner,
        history=history,
        meter=TurnMeter(limits or Limits()),
        prompt=blocks,
        sink=runner.sink,
        scope=cancel or anyio.CancelScope(),
        turn_id=f"t_{uuid.uuid4().hex[:16]}",
        streaming=model.streaming,
    )
    status: Status = "failed" if result.failure else _STATUS[result.stop]
    return TurnOutcome(
        result.record,
        result.output,
        status,
        tuple(steps),
        history,
        str(result.failure) if result.failure else None,
    )
