"""update_plan: the model's to-do list, kept per session and shown to the editor as ACP `plan` updates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from acp_agent.errors import ToolError
from acp_agent.tools.base import PlanEntry, ToolContext, ToolResult
from acp_agent.tools.printable import one_line

__all__ = ["UpdatePlan"]

STATUSES = ("pending", "in_progress", "completed")
PRIORITIES = ("high", "medium", "low")
MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
MAX_ENTRIES = 100
MAX_ENTRY_CHARS = 1000
"""A plan is one `plan` update to the editor, sent whole on every change: both bound its size
(checked in `run`, not in the schema: the tool list is the head of every request's cached prefix)."""


@dataclass(slots=True)
class UpdatePlan:
    """Replace the whole plan, or change one entry's status. One instance per session."""

    entries: list[PlanEntry] = field(default_factory=list)

    name = "update_plan"
    kind = "think"
    permission = None
    description = (
        "Keep a short plan (a to-do list) for multi-step work, shown to the user. Either pass "
        "`entries` to create or replace the whole list (each with `content`, optional `priority` "
        "high|medium|low and `status` pending|in_progress|completed), or pass `index` (1-based) and "
        "`status` to update one entry. Keep exactly one entry in_progress while working."
    )
    input_schema = {
        "type": "object",
        "properties": {
            "entries": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string"},
                        "priority": {"type": "string", "enum": list(PRIORITIES)},
                        "status": {"type": "string", "enum": list(STATUSES)},
                    },
                    "required": ["content"],
                    "additionalProperties": False,
                },
            },
            "index": {"type": "integer", "minimum": 1},
            "status": {"type": "string", "enum": list(STATUSES)},
        },
        "additionalProperties": False,
    }

    def title(self, args: dict[str, Any]) -> str:
        return "Update plan" if "entries" in args else f"Plan step {args.get('index', '?')}"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if "entries" in args:
            entries = args["entries"]
            if len(entries) > MAX_ENTRIES or any(len(e["content"]) > MAX_ENTRY_CHARS for e in entries):
                raise ToolError(
                    f"update_plan: at most {MAX_ENTRIES} entries of at most {MAX_ENTRY_CHARS} "
                    "characters each; keep the plan short"
                )
            self.entries = [  # each entry one printable line: the editor shows the plan as a list
                PlanEntry(one_line(e["content"]), e.get("priority", "medium"), e.get("status", "pending"))
                for e in entries
            ]
        elif "index" in args and "status" in args:
            index = args["index"]
            if not 1 <= index <= len(self.entries):
                raise ToolError(f"update_plan: no entry {index}; the plan has {len(self.entries)}")
            old = self.entries[index - 1]
            self.entries[index - 1] = PlanEntry(old.content, old.priority, args["status"])
        else:
            raise ToolError("update_plan: pass `entries`, or `index` with `status`")
        text = (
            "\n".join(f"{n}. {MARKS[e.status]} {e.content}" for n, e in enumerate(self.entries, 1))
            or "(empty plan)"
        )
        return ToolResult(f"Plan updated:\n{text}", plan=tuple(self.entries))
