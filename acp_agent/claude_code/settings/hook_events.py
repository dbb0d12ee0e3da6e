"""The hook events this agent fires, and what their matchers select: one table for the hooks'
reader (`hook_config.py`) and the trust question's list of what a project's hooks would run
(`widenings.py`), which must agree on which handlers ever run.
"""

from __future__ import annotations

__all__ = ["EVENTS", "NO_MATCHER", "TOOL_EVENTS"]

EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
)
"""The events this agent fires (Claude Code's classic set)."""
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})
"""The events whose matcher is the tool's name and whose handlers may have an `if`."""
NO_MATCHER = frozenset({"UserPromptSubmit", "Stop"})
"""Events without matcher support: a matcher there is ignored (as Claude Code does)."""
