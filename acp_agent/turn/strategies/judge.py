"""The model judge: one request that scores the attempt by a rubric, without forcing a tool.

Forced `tool_choice` is a 400 on Sonnet/Opus 5.5 and Fable, so the verdict comes two ways:
- where the model takes structured output, the judge is the session's own request (same tools,
  system, thinking and messages, so the conversation is read from the prompt cache and thinking
  blocks replay behind an unchanged prefix) with the rubric appended as the last user block and a
  JSON-schema `output_config.format` for the verdict;
- elsewhere (unknown models), a separate request reads the conversation as a transcript (no tool
  blocks or thinking signatures to keep valid) and is asked to call a `strict` `submit_verdict`
  tool, with `tool_choice: auto`.
A malformed or missing verdict is a failed check with a clear reason, never a crash. The request
goes through the turn's meter like every other (so "exactly N requests" holds), and its exchange
stays out of the history. The editor sees it as a tool call of kind `think`.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import structlog

from acp_agent.errors import StreamBroken
from acp_agent.model.base import MessageDone, ModelRequest, RetryScheduled, Usage
from acp_agent.turn.context.history import History, with_user_block
from acp_agent.turn.events import ToolCallFinished, ToolCallStarted, ToolCallUpdated
from acp_agent.turn.meter import TurnMeter
from acp_agent.turn.record import step_of
from acp_agent.turn.runner import TurnRunner
from acp_agent.turn.strategies.verify import Evaluation

__all__ = ["SUBMIT_VERDICT", "VERDICT_SCHEMA", "JudgeEvaluator", "parse_verdict", "transcript"]

log = structlog.get_logger(__name__)

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "number", "description": "How well the attempt meets the rubric, from 0 to 1."},
        "passed": {"type": "boolean", "description": "Whether the attempt meets the rubric."},
        "feedback": {
            "type": "string",
            "description": "What is wrong or missing, concretely enough to act on.",
        },
    },
    "required": ["score", "passed", "feedback"],
    "additionalProperties": False,
}
"""The verdict: structured outputs allow no numeric constraints, so the score is clamped here."""
SUBMIT_VERDICT: dict[str, Any] = {
    "name": "submit_verdict",
    "strict": True,
    "description": "Record your verdict on the assistant's latest attempt.",
    "input_schema": VERDICT_SCHEMA,
}
SYSTEM = (
    "You review an AI assistant's work. Read the conversation and judge the assistant's latest "
    "attempt against the rubric only. Call submit_verdict exactly once."
)
ASK = (
    "Score the assistant's latest attempt from 0 to 1 against the rubric, say whether it passes, "
    "and give feedback it can act on."
)
ASK_IN_SESSION = (
    "[Review] Stop working on the task now: review your latest attempt instead, as a "
    "strict reviewer would. Do not call tools. Answer only with the JSON verdict "
    "(score from 0 to 1, passed, feedback)."
)
JUDGE_MAX_TOKENS = 2048
TRANSCRIPT_CHARS = 120_000
BLOCK_CHARS = 2_000


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit // 3
    return f"{text[:head]}\n[… {len(text) - limit:,} characters cut …]\n{text[-(limit - head) :]}"


def _result_text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(b.get("text", f"[{b.get('type')}]") for b in content if isinstance(b, dict))
    return str(content)


def transcript(messages: list[dict[str, Any]], limit: int = TRANSCRIPT_CHARS) -> str:
    """The conversation as plain text: what was said, which tools ran, what they returned."""
    parts: list[str] = []
    for message in messages:
        role = "User" if message["role"] == "user" else "Assistant"
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks:
            kind = block.get("type")
            if kind == "text" and block.get("text"):
                parts.append(f"{role}: {_clip(block['text'], 4 * BLOCK_CHARS)}")
            elif kind == "tool_use":
                args = json.dumps(block.get("input") or {}, ensure_ascii=False)
                parts.append(f"Assistant called {block.get('name')}: {_clip(args, BLOCK_CHARS)}")
            elif kind == "tool_result":
                error = " (error)" if block.get("is_error") else ""
                text = _clip(_result_text(block.get("content", "")), BLOCK_CHARS)
                parts.append(f"Tool result{error}: {text}")
            elif kind in ("image", "document"):
                parts.append(f"{role}: [{kind}]")
    return _clip("\n\n".join(parts), limit)


def _verdict(args: Any) -> tuple[float, bool, str] | None:
    if not isinstance(args, dict) or not {"score", "passed"} <= args.keys():
        return None
    score = args.get("score")
    if not isinstance(score, int | float) or isinstance(score, bool):
        return None
    return (
        min(1.0, max(0.0, float(score))),
        args.get("passed") is True,
        str(args.get("feedback") or "").strip(),
    )


def parse_verdict(content: list[dict[str, Any]]) -> tuple[float, bool, str]:
    """(score, passed, feedback) from the judge's reply: a `submit_verdict` call, or the JSON text
    of a structured output. No usable verdict is a failing one that says why."""
    text = "".join(b.get("text", "") for b in content if b.get("type") == "text").strip()
    for block in content:
        if block.get("type") == "tool_use" and block.get("name") == "submit_verdict":
            found = _verdict(block.get("input"))
            if found is not None:
                return found
            return 0.0, False, "The judge's verdict was malformed (submit_verdict without a score)."
    if text:
        try:
            found = _verdict(json.loads(text))
        except ValueError:
            found = None
        if found is not None:
            return found
        return 0.0, False, f"The judge's verdict was malformed (not the verdict JSON): {_clip(text, 200)}"
    return 0.0, False, "The judge gave no verdict."


@dataclass(frozen=True, slots=True)
class JudgeEvaluator:
    """Scores the attempt with one forced model request; passed = `passed` and score ≥ threshold."""

    rubric: str
    threshold: float = 0.8
    kind: Literal["command", "judge"] = "judge"

    def build_request(self, runner: TurnRunner, history: History, meter: TurnMeter) -> ModelRequest:
        settings = runner.settings
        if settings.profile.structured_outputs:
            ask = {"type": "text", "text": f"<rubric>\n{self.rubric}\n</rubric>\n\n{ASK_IN_SESSION}"}
            messages = with_user_block(history.for_request(), ask)
            output = {
                **(settings.output_config or {}),
                "format": {"type": "json_schema", "schema": VERDICT_SCHEMA},
            }
            return runner.build_request(messages, meter, output_config=output)
        text = (
            f"<conversation>\n{transcript(history.for_request())}\n</conversation>\n\n"
            f"<rubric>\n{self.rubric}\n</rubric>\n\n{ASK}"
        )
        return runner.build_request(
            [{"role": "user", "content": [{"type": "text", "text": text}]}],
            meter,
            max_tokens=min(settings.max_tokens, JUDGE_MAX_TOKENS),
            system=SYSTEM,
            tools=[SUBMIT_VERDICT],
            tool_choice={"type": "auto"},
            thinking=None,
            output_config=None,
        )

    async def evaluate(
        self, runner: TurnRunner, history: History, meter: TurnMeter, *, trial: int
    ) -> Evaluation:
        number = meter.start_request(runner.settings.model)  # raises LimitReached past the budget
        meter.verifying()
        sink, call_id = runner.sink, f"judge_{runner.new_id()}"
        await sink.emit(
            ToolCallStarted(
                call_id,
                f"Review attempt {trial} against the rubric",
                "think",
                {"rubric": self.rubric, "threshold": self.threshold},
            )
        )
        await sink.emit(ToolCallUpdated(call_id))
        done = await self._ask(runner, meter, call_id, number, self.build_request(runner, history, meter))
        if runner.spec.on_step is not None:
            runner.spec.on_step(step_of(number, done, [], [], kind="judge"))
        score, said_passed, feedback = parse_verdict(done.content)
        passed = said_passed and score >= self.threshold
        shown = f"score {score:.2f} (needs {self.threshold:.2f}), {'passed' if passed else 'failed'}"
        await sink.emit(
            ToolCallFinished.of(
                call_id,
                "completed" if passed else "failed",
                f"{shown}: {feedback}",
                raw_output={"score": score, "passed": said_passed, "feedback": feedback},
            )
        )
        if said_passed and not passed:
            feedback = f"(marked passed, but the score is below {self.threshold:.2f}) {feedback}"
        return Evaluation(passed, score, f"the reviewer scored it {score:.2f}: {feedback}")

    async def _ask(
        self, runner: TurnRunner, meter: TurnMeter, call_id: str, number: int, request: ModelRequest
    ) -> MessageDone:
        usage, done = Usage(), None
        started = time.monotonic()
        try:
            async for event in runner.model.respond(request):
                if isinstance(event, Usage):
                    usage = event
                elif isinstance(event, RetryScheduled):
                    meter.retry_scheduled()
                    log.info("judge.retry", attempt=event.attempt, reason=event.reason)
                elif isinstance(event, MessageDone):
                    done = event
            if done is None:
                raise StreamBroken("the judge's reply ended without a stop_reason")
        except BaseException:
            meter.tokens_used(usage)
            with anyio.move_on_after(2, shield=True):
                await runner.sink.emit(ToolCallFinished.of(call_id, "failed", "The review was interrupted."))
            raise
        finally:
            meter.model_time_spent(time.monotonic() - started)
        runner.finished(done, meter, number)
        return done
