"""The session's `task` tool: which tools its subagents get, and their system prompt.

Built with the session's runner (`engine.py`), once: every subagent of the session then sends the
same tools and system prompt, one cached prefix across its subagents and turns (D14, D27). The
prompt's text is made on the first `task` call, from what the session had when the tool was built.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from acp_agent.session.requester import Requester
from acp_agent.session.subagents.sessions import SubagentSessions
from acp_agent.session.system_prompt import build_subagent_prompt
from acp_agent.tools.base import reads_only
from acp_agent.tools.registry import ToolRegistry
from acp_agent.turn.subagents.task import TaskTool

if TYPE_CHECKING:
    from acp_agent.session.state import Session

__all__ = ["CHANGING_MODES", "NOT_FOR_SUBAGENTS", "task_tool"]

NOT_FOR_SUBAGENTS = frozenset({"task", "ask_user", "update_plan"})
"""Never a subagent's: no recursion, no user to ask, and the plan is the session's."""
CHANGING_MODES = frozenset({"acceptEdits", "bypassPermissions"})
"""The modes in which a subagent with `--subagent-tools all` may edit and run commands."""


def task_tool(
    session: Session,
    registry: ToolRegistry,
    requester: Requester,
    *,
    instructions: str,
    skills: str,
    today: Callable[[], dt.date] = dt.date.today,
) -> TaskTool | None:
    """The task tool for a session whose tools are `registry`, or None when it offers none
    (`--subagent-tools off`, or a client's tool set without it). Its subagents are shown as
    child sessions too when the client advertises `subagents` (`sessions.py`).
    `today` is the clock the subagents' prompt takes its date from (a test passes its own)."""
    choice = session.subagent_tools
    if choice == "off" or not session.client.offers("task"):
        return None
    offered = [registry.get(name) for name in registry.names if name not in NOT_FOR_SUBAGENTS]
    children = ToolRegistry(t for t in offered if t is not None and (choice == "all" or reads_only(t)))
    system = functools.partial(
        _subagent_prompt,
        children,
        cwd=session.cwd,
        today=today(),
        instructions=instructions,
        skills=skills if "skill" in children else "",
        extra_roots=tuple(session.extra_roots),
    )
    caps = session.capabilities
    sessions = (
        SubagentSessions(session.id, requester, caps, session.subagents) if caps.subagent_sessions else None
    )
    if choice == "read":
        return TaskTool(children, system, sessions=sessions)
    permissions = session.permissions
    return TaskTool(
        children, system, may_change=lambda: permissions.mode in CHANGING_MODES, sessions=sessions
    )


def _subagent_prompt(
    children: ToolRegistry,
    *,
    cwd: Path,
    today: dt.date,
    instructions: str,
    skills: str,
    extra_roots: tuple[Path, ...],
) -> str:
    """The subagents' system prompt, from what the session had when its runner was built (the
    date too): built on the first `task` call only, as most sessions never make one."""
    return build_subagent_prompt(
        cwd=cwd,
        tools=[(t["name"], t.get("description", "")) for t in children.api_tools()],
        today=today,
        instructions=instructions,
        skills=skills,
        extra_roots=extra_roots,
    )
