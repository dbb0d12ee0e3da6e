"""The public API: the names code that embeds acp-agent may import, and the only ones it needs.

    from acp_agent.api import AnthropicModel, Limits, VerifyStrategy, CommandEvaluator
    from acp_agent.api import default_registry, run_turn

What it names: one turn run in-process (`run_turn`, with the same driver, runner and meter as a
session, and its `TurnOutcome`, `TurnRecord`, `History`, `Limits`); the model (`AnthropicModel`,
and the `ModelClient` seam with the request and events a client of your own deals in); tools
(`ToolRegistry`, `default_registry`, the `Tool` protocol, and `SandboxPolicy` for the commands
they run); the strategies and their records; and what a turn tells and asks its caller
(`EventSink` and the `TurnEvent`s, with `ToolCallShown`, what a finished tool call shows;
`PermissionAsker`).

Everything else under `acp_agent/` is internal: modules move and names change between releases
without notice, while these keep their meaning (`tests/unit/test_public_api.py` pins the list).
`acp_agent.testing`, the loopback Messages API, is public in its own right (decisions D8), and the
ACP server is the `acp-agent` command, not an import.

Nothing here writes to stdout (an embedder may itself be a stdio server): the agent's log events
go to the stdlib logger of their module (`acp_agent.…`), so your logging decides where they go,
unless structlog was configured, or `configure_logging` sends them as JSON lines to stderr.

Importing this module loads the turn machinery, not the SDK (`AnthropicModel` loads `anthropic`
at its first request); `import acp_agent` alone loads nothing of it, since the editor's cold start
begins there (D4).
"""

from __future__ import annotations

from typing import TextIO

from acp_agent import __version__, logs
from acp_agent.limits import Limits
from acp_agent.model.anthropic import AnthropicModel
from acp_agent.model.base import (
    MessageDone,
    ModelClient,
    ModelEvent,
    ModelRequest,
    RetryScheduled,
    TextDelta,
    ThinkingDelta,
    ToolUseStarted,
    Usage,
)
from acp_agent.permissions.question import PermissionAsker, PermissionDecision, PermissionQuestion
from acp_agent.tools.base import Tool, ToolContext, ToolResult
from acp_agent.tools.registry import ToolRegistry, coding_tools, default_registry
from acp_agent.tools.sandbox.command_sandbox import SandboxPolicy
from acp_agent.turn.context.history import History
from acp_agent.turn.events import (
    EventSink,
    Notice,
    PlanChanged,
    TextChunk,
    ThoughtChunk,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    ToolCallUpdated,
    TurnEvent,
    UsageReported,
)
from acp_agent.turn.inprocess import Status, TurnOutcome, run_turn
from acp_agent.turn.journal.entries import ToolCallShown
from acp_agent.turn.record import TurnRecord
from acp_agent.turn.strategies.base import Strategy
from acp_agent.turn.strategies.judge import JudgeEvaluator
from acp_agent.turn.strategies.phased import PhasedStrategy
from acp_agent.turn.strategies.results import PhasedResult, Transition, Trial, VerifyResult
from acp_agent.turn.strategies.tools import ToolsStrategy
from acp_agent.turn.strategies.verify import CommandEvaluator, Evaluation, Evaluator, VerifyStrategy


def configure_logging(level: str | None = None, stream: TextIO | None = None) -> None:
    """Write acp-agent's log events as JSON lines (plain lines on a TTY) to `stream`, default
    stderr, at `level` ("debug", "info", …; default ACP_AGENT_LOG_LEVEL, else info).

    This configures structlog for the whole process; your stdlib root logger is left alone.

    Raises:
        ValueError: `stream` is stdout, or `level` is not a level name.
    """
    logs.configure(level, stream, embedded=True)


logs.route_to_stdlib()  # structlog's own default would print on stdout

__all__ = [
    "AnthropicModel",
    "CommandEvaluator",
    "Evaluation",
    "Evaluator",
    "EventSink",
    "History",
    "JudgeEvaluator",
    "Limits",
    "MessageDone",
    "ModelClient",
    "ModelEvent",
    "ModelRequest",
    "Notice",
    "PermissionAsker",
    "PermissionDecision",
    "PermissionQuestion",
    "PhasedResult",
    "PhasedStrategy",
    "PlanChanged",
    "RetryScheduled",
    "SandboxPolicy",
    "Status",
    "Strategy",
    "TextChunk",
    "TextDelta",
    "ThinkingDelta",
    "ThoughtChunk",
    "Tool",
    "ToolCallFinished",
    "ToolCallProgress",
    "ToolCallShown",
    "ToolCallStarted",
    "ToolCallUpdated",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "ToolUseStarted",
    "ToolsStrategy",
    "Transition",
    "Trial",
    "TurnEvent",
    "TurnOutcome",
    "TurnRecord",
    "Usage",
    "UsageReported",
    "VerifyResult",
    "VerifyStrategy",
    "__version__",
    "coding_tools",
    "configure_logging",
    "default_registry",
    "run_turn",
]
