"""Show an ACP turn the way a person wants to read it: text as it streams, tool calls with their
status, diffs, plans, and at the end the stop reason and a summary of the turn record (the whole
record when verbose). Values are shown as text (`k=v`), never as raw JSON, and a missing one is
left out rather than printed as `None`.

It reads plain JSON (any agent's `session/update` payloads), never this agent's own types, so
the smoke runner works against every agent.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, TextIO

from acp_agent.harness.agent_log import flat

__all__ = ["TurnPrinter", "block_text"]

_STYLES = {"dim": "2", "bold": "1", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}
_PLAN_MARKS = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}


def block_text(block: Any) -> str:
    """One ACP content block as text (a placeholder for what a terminal cannot show)."""
    if not isinstance(block, Mapping):
        return f"[{block!r}]"
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "resource_link":
        return f"[link {block.get('name', '')} {block.get('uri', '')}]"
    if kind == "resource":
        resource = block.get("resource") or {}
        return str(resource.get("text") or f"[resource {resource.get('uri', '')}]")
    return f"[{kind} {block.get('mimeType', '')}]".replace(" ]", "]")


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


class TurnPrinter:
    """Writes one session's updates to `out`; keeps streamed text on its line until something else."""

    def __init__(
        self, out: TextIO, *, color: bool = False, max_lines: int = 30, verbose: bool = False
    ) -> None:
        self.out, self.color, self.max_lines, self.verbose = out, color, max_lines, verbose
        self._stream: tuple[str, Any] | None = None  # (kind, messageId) of the open text stream
        self._tools: dict[str, dict[str, Any]] = {}
        self.usage: Mapping[str, Any] | None = None

    # --- output primitives -------------------------------------------------------------------

    def paint(self, text: str, style: str | None) -> str:
        if not self.color or style is None:
            return text
        return f"\x1b[{_STYLES[style]}m{text}\x1b[0m"

    def end_stream(self) -> None:
        if self._stream is not None:
            self.out.write("\n")
            self._stream = None

    def line(self, text: str = "", style: str | None = None) -> None:
        self.end_stream()
        self.out.write(self.paint(text, style) + "\n")
        self.out.flush()

    def _lines(self, text: str, prefix: str, style: str | None = None) -> None:
        lines = text.splitlines() or [""]
        for item in lines[: self.max_lines]:
            self.line(f"{prefix}{item}", style)
        if len(lines) > self.max_lines:
            self.line(f"{prefix}… {len(lines) - self.max_lines} more lines", "dim")

    # --- session/update ------------------------------------------------------------------------

    def update(self, update: Mapping[str, Any]) -> None:
        """Show one `session/update` payload's `update` object."""
        kind = update.get("sessionUpdate")
        if kind in ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk"):
            self._chunk(str(kind), update)
        elif kind in ("tool_call", "tool_call_update"):
            self._tool(update, new=kind == "tool_call")
        elif kind == "plan":
            self.line("plan:", "bold")
            for entry in update.get("entries") or []:
                mark = _PLAN_MARKS.get(entry.get("status"), "[?]")
                priority = f"  ({entry['priority']})" if entry.get("priority") == "high" else ""
                self.line(f"  {mark} {entry.get('content', '')}{priority}")
        elif kind == "usage_update":
            self.usage = update
        elif kind == "available_commands_update":
            names = [f"/{c.get('name')}" for c in update.get("availableCommands") or []]
            self.line(f"commands: {' '.join(names) or '(none)'}", "dim")
        elif kind == "current_mode_update":
            if update.get("currentModeId"):
                self.line(f"mode: {update['currentModeId']}", "dim")
        elif kind == "session_info_update":
            if isinstance(update.get("title"), str) and update["title"].strip():
                self.line(f"session title: {update['title']}", "dim")  # a cleared title is not shown
        elif kind == "config_option_update":
            self.line(f"config options: {len(update.get('configOptions') or [])}", "dim")
        else:
            self.line(f"(update {kind}: {flat(update, 120)})", "dim")

    def _chunk(self, kind: str, update: Mapping[str, Any]) -> None:
        key = (kind, update.get("messageId"))
        text = block_text(update.get("content"))
        if self._stream != key:
            self.end_stream()
            if kind == "agent_thought_chunk":
                self.out.write(self.paint("(thinking) ", "dim"))
            elif kind == "user_message_chunk":
                self.out.write(self.paint("you: ", "bold"))
            self._stream = key
        self.out.write(self.paint(text, "dim") if kind == "agent_thought_chunk" else text)
        self.out.flush()

    def _tool(self, update: Mapping[str, Any], *, new: bool) -> None:
        tool_id = str(update.get("toolCallId"))
        known = self._tools.setdefault(tool_id, {})
        status_changed = "status" in update and update["status"] != known.get("status")
        known.update({k: v for k, v in update.items() if k in ("title", "kind", "status")})
        title = known.get("title") or tool_id
        status = known.get("status") or "pending"
        style = {"failed": "red", "completed": "green"}.get(status)
        if new:
            kind = f" ({known['kind']})" if known.get("kind") else ""
            self.line(f"-> tool {title}{kind}: {status}", "bold")
            if update.get("rawInput"):
                self.line(f"   input: {flat(update['rawInput'], 120)}", "dim")
            for place in update.get("locations") or []:
                at = f":{place['line']}" if place.get("line") else ""
                self.line(f"   at {place.get('path')}{at}", "dim")
        elif status_changed:
            self.line(f"   {title}: {status}", style)
        elif "title" in update:
            self.line(f"   renamed: {title}", "dim")
        # Progress updates replace their content often: show it when the call settles, and diffs always.
        content = update.get("content") or []
        final = new or status in ("completed", "failed")
        for item in content:
            if item.get("type") == "diff":
                self._diff(item)
            elif final and item.get("type") == "content":
                self._lines(block_text(item.get("content")), "   | ")
            elif final and item.get("type") == "terminal":
                self.line(f"   (terminal {item.get('terminalId')})", "dim")

    def _diff(self, item: Mapping[str, Any]) -> None:
        path = str(item.get("path", "?"))
        old, new = item.get("oldText"), str(item.get("newText") or "")
        self.line(f"   diff {path}{' (new file)' if old is None else ''}", "cyan")
        lines = list(
            difflib.unified_diff(
                (old or "").splitlines(),
                new.splitlines(),
                "/dev/null" if old is None else f"a{path}",
                f"b{path}",
                lineterm="",
            )
        )
        for text in lines[: self.max_lines]:
            if text.startswith(("---", "+++", "@@")):
                style: str | None = "bold"
            else:
                style = "green" if text.startswith("+") else "red" if text.startswith("-") else None
            self.line(f"   {text}", style)
        if len(lines) > self.max_lines:
            self.line(f"   … {len(lines) - self.max_lines} more diff lines", "dim")

    # --- the end of a turn ---------------------------------------------------------------------

    def _strategy(self, turn: Mapping[str, Any]) -> None:
        """A loop strategy's own story: each phase change, then each verification trial."""
        for step in turn.get("transitions") or []:
            if isinstance(step, Mapping):
                self.line(
                    f"phase {step.get('from')} → {step.get('to')}: {step.get('reason', '')} "
                    f"(at request {step.get('atRequest')})",
                    "cyan",
                )
        for trial in turn.get("trials") or []:
            if not isinstance(trial, Mapping):
                continue
            verdict = "passed" if trial.get("passed") else "failed"
            feedback = str(trial.get("feedback") or "").strip().splitlines()
            self.line(
                f"trial {trial.get('trial')}: {verdict}, score {trial.get('score')} "
                f"({trial.get('evaluator')}){' - ' + feedback[0][:100] if feedback else ''}",
                "green" if trial.get("passed") else "red",
            )

    def finish(self, result: Mapping[str, Any]) -> None:
        """The stop reason, then a summary of the turn record (this agent's `_meta`), or all of it
        when verbose; from another agent, what it sent."""
        self.line()
        self.line(f"stop reason: {result.get('stopReason')}", "bold")
        meta = result.get("_meta")
        turn = meta.get("acp-agent", {}).get("turn") if isinstance(meta, Mapping) else None
        if isinstance(turn, Mapping):
            self._strategy(turn)
            if self.verbose:
                self.line("turn record:")
                for key, value in turn.items():
                    if key not in {"trials", "transitions"}:  # shown readably above
                        self.line(f"  {key}: {flat(value, 200)}")
            else:
                self._summary(turn)
        elif meta:
            self.line(f"_meta: {flat(meta, 400 if self.verbose else 120)}")
        if isinstance(result.get("usage"), Mapping):
            self.line(f"usage: {flat(result['usage'], 200)}")
        if self.usage is not None and self.usage.get("used") is not None:
            size = f" of {_count(self.usage['size'])}" if self.usage.get("size") is not None else ""
            cost = self.usage.get("cost")
            money = (
                f", cost {cost['amount']} {cost.get('currency') or ''}".rstrip()
                if isinstance(cost, Mapping)
                and cost.get("amount") is not None
                and not isinstance(turn, Mapping)
                else ""
            )
            self.line(f"context: {_count(self.usage['used'])}{size} tokens{money}", "dim")
        if isinstance(turn, Mapping) and not self.verbose:
            self.line("(the whole turn record: --verbose, or --json)", "dim")

    def _summary(self, turn: Mapping[str, Any]) -> None:
        """A few lines of the turn record: why it stopped, requests of the limit, tool calls,
        tokens, cost. A figure the record does not have is left out."""
        if turn.get("limit"):
            self.line(f"limit: {turn['limit']}", "yellow")
        if turn.get("error"):
            self.line(f"error: {flat(turn['error'], 200)}", "red")
        if turn.get("modelRequests") is not None:
            limit = f" of {_count(turn['maxTurnRequests'])}" if turn.get("maxTurnRequests") else ""
            retries = turn.get("retries") or 0
            retries_text = f" ({retries} {'retry' if retries == 1 else 'retries'})" if retries else ""
            self.line(f"requests: {_count(turn['modelRequests'])}{limit}{retries_text}")
        if turn.get("toolCalls") is not None:
            outcomes = [
                f"{_count(turn[key])} {word}"
                for key, word in (
                    ("toolCallsFailed", "failed"),
                    ("toolCallsDenied", "denied"),
                    ("toolCallsSkipped", "skipped"),
                )
                if turn.get(key)
            ]
            more = f" ({', '.join(outcomes)})" if outcomes else ""
            self.line(f"tool calls: {_count(turn['toolCalls'])}{more}")
        if turn.get("inputTokens") is not None and turn.get("outputTokens") is not None:
            cached = (
                f" ({_count(turn['cacheReadInputTokens'])} read from the cache)"
                if turn.get("cacheReadInputTokens")
                else ""
            )
            self.line(f"tokens: {_count(turn['inputTokens'])} in{cached}, {_count(turn['outputTokens'])} out")
        if isinstance(turn.get("costUsd"), int | float):
            self.line(f"cost: ${turn['costUsd']:.4f}")
        if turn.get("subagents"):
            self.line(f"subagents: {len(turn['subagents'])}")
