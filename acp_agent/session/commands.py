"""Slash commands: `/status` (answered without a model request) and `/compact` (one counted request).

Announced with `available_commands_update` after session/new and session/load (decisions D7).
"""

from __future__ import annotations

import uuid
from typing import Any

from acp_agent.turn.governor import TurnMeter
from acp_agent.turn.record import TurnRecord

__all__ = ["COMMANDS", "command_of", "run_command"]

COMMANDS = [
    {"name": "status", "description": "Show the model, the mode, the limits in force and the "
                                      "context used (no model request)."},
    {"name": "compact", "description": "Summarise the earlier conversation now to free context "
                                       "(one model request)."},
]


def command_of(prompt: list[dict[str, Any]]) -> str | None:
    """The slash command a prompt is, if its text is exactly `/status` or `/compact`."""
    texts = [b.get("text", "") for b in prompt if b.get("type") == "text"]
    if len(texts) != 1 or len(prompt) != 1:
        return None
    word = texts[0].strip().split(maxsplit=1)[0] if texts[0].strip() else ""
    return word[1:] if word in {"/status", "/compact"} else None


async def run_command(name: str, session: Any) -> TurnRecord:
    """Run a slash command in `session`; its answer goes to the editor as an agent message."""
    runner = session.runner
    meter = TurnMeter(session.limits)
    if name == "compact":
        meter.phase = "model"
        replaced = await runner._maybe_compact(session.history, meter, force=True)
        text = (f"Compacted: summarised {replaced} earlier messages." if replaced
                else "Nothing to compact yet (or no request allowance left for it).")
    else:
        text = _status(session)
    await runner.sink.emit_text(text)
    return TurnRecord.from_meter(meter, turn_id=f"t_{uuid.uuid4().hex[:16]}",
                                 stop_reason="end_turn", streaming=runner.model.streaming)


def _status(session: Any) -> str:
    settings = session.runner.settings
    limits = session.limits.model_dump(by_alias=True)
    used = session.runner.last_context_tokens
    window = settings.context_window
    shown = ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}"
                      for k, v in limits.items() if v is not None)
    return (f"Model: {settings.model}\nMode: {session.mode}\nLimits per prompt: {shown}\n"
            f"Context used: {used:,} of {window:,} tokens ({used / window:.0%})\n"
            f"Messages in history: {len(session.history)}")
