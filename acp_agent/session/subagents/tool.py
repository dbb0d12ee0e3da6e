"""The session's `task` tool: which tools its subagents get, and their system prompt.

Built with the session's runtime (`engine.py`), once: every subagent of the session then sends the
same tools and system prompt, one cached prefix across its subagents and turns (D14, D27). The
prompt's text is made on the first `task` call, from what the session had when the tool was built.

The session's custom agents (`.claude/agents/`, `claude_code/conventions/agents.py`) are offered by name
as subagent types, decided here once too: each gets its file's body as its prompt, the tools its
`tools` names among the subagents' own (never more: an agent file only narrows), and its `model`
(a family word the catalog resolves, or an id, used as written: the API says if it does not exist;
a word that names no offered family leaves the agent on the session's model, and /agents says so).
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from acp_agent.claude_code.conventions.agents import INHERIT, CustomAgent
from acp_agent.model.pricing import Price
from acp_agent.permissions.tool_names import SERVER_TOOLS
from acp_agent.session.requester import Requester
from acp_agent.session.subagents.sessions import SubagentSessions
from acp_agent.session.system_prompt import build_agent_prompt, build_subagent_prompt
from acp_agent.tools.base import reads_only
from acp_agent.tools.registry import ToolRegistry
from acp_agent.turn.settings import RunnerSettings
from acp_agent.turn.subagents.task import TaskTool
from acp_agent.turn.subagents.types import SubagentType

if TYPE_CHECKING:
    from acp_agent.session.state import Session

__all__ = ["NOT_FOR_SUBAGENTS", "AgentTools", "ModelChoice", "agent_tools", "task_tool"]

log = structlog.get_logger(__name__)

NOT_FOR_SUBAGENTS = frozenset({"task", "ask_user", "update_plan", "command_output", "stop_command"})
"""Never a subagent's: no recursion, no user to ask, and the plan and the background commands
are the session's."""


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """What the session side knows of models, for an agent's `model`: the id a word names here
    (`ModelCatalog.named_model`) and a request's settings on a model (`ModelCatalog.settings_near`:
    the session's effort, or that model's default where it takes no such level)."""

    named: Callable[[str], str | None]
    settings: Callable[[str, str | None, RunnerSettings], RunnerSettings]
    prices: Mapping[str, Price]


@dataclass(frozen=True, slots=True)
class AgentTools:
    """The tools one custom agent gets, among the session's subagent tools."""

    registry: ToolRegistry
    web: frozenset[str] | None
    """The web tools it may use (a subset of the session's at each call); None: the session's."""
    unavailable: tuple[str, ...]
    """The tools its file names that its subagent cannot have here, each with why."""


def agent_tools(agent: CustomAgent, children: ToolRegistry) -> AgentTools:
    """The tools `agent` gets: those its `tools` names (all, without it) among `children`, the
    session's subagent tools, less its `disallowedTools`. Never one outside `children`."""
    dropped = {name for denied in agent.disallowed for name in _matching(denied, children.names)}
    web_dropped = SERVER_TOOLS.intersection(agent.disallowed)
    unavailable: list[str] = []
    if agent.tools is None:
        chosen = set(children.names)
        web = SERVER_TOOLS - web_dropped if web_dropped else None
    else:
        chosen = set()
        for name in agent.tools:
            if name in SERVER_TOOLS:
                continue
            matched = _matching(name, children.names)
            if not matched:
                why = "never a subagent's tool" if name in NOT_FOR_SUBAGENTS else "not a subagent's tool here"
                unavailable.append(f"{name} ({why})")
            chosen.update(matched)
        web = SERVER_TOOLS.intersection(agent.tools) - web_dropped
    tools = (children.get(name) for name in children.names if name in chosen - dropped)
    return AgentTools(ToolRegistry(t for t in tools if t is not None), web, tuple(unavailable))


def _matching(name: str, names: Sequence[str]) -> list[str]:
    """The tools of `names` that `name` means: itself, or all of an MCP server's (`mcp__server`)."""
    if name in names:
        return [name]
    server = name.removesuffix("__*")
    if server.startswith("mcp__") and server.count("__") == 1:
        return [n for n in names if n.startswith(f"{server}__")]
    return []


def task_tool(
    session: Session,
    registry: ToolRegistry,
    requester: Requester,
    *,
    instructions: str,
    skills: str,
    agents: Sequence[CustomAgent] = (),
    models: ModelChoice | None = None,
    today: Callable[[], dt.date] = dt.date.today,
    work_roots: tuple[Path, ...] | None = None,
) -> TaskTool | None:
    """The task tool for a session whose tools are `registry`, or None when it offers none
    (`--subagent-tools off`, or a client's tool set without it). Its subagents are shown as
    child sessions too when the client advertises `subagents` (`sessions.py`). `agents` are
    offered by name, on their own model where `models` resolves it (None: every agent runs on
    the session's). `today` is the clock the subagents' prompts take their date from (a test
    passes its own); `work_roots`, the session's roots besides the cwd as its runtime has them
    (None: as the session has them now)."""
    roots = session.work_roots if work_roots is None else work_roots
    choice = session.subagent_tools
    if choice == "off" or not session.client.offers("task"):
        return None
    offered = [registry.get(name) for name in registry.names if name not in NOT_FOR_SUBAGENTS]
    children = ToolRegistry(t for t in offered if t is not None and (choice == "all" or reads_only(t)))
    date = today()
    system = functools.partial(
        _subagent_prompt,
        children,
        cwd=session.cwd,
        today=date,
        instructions=instructions,
        skills=skills if "skill" in children else "",
        extra_roots=roots,
    )
    types = [_subagent_type(agent, children, session, models, date, skills, roots) for agent in agents]
    caps = session.capabilities
    sessions = (
        SubagentSessions(session.id, requester, caps, session.subagents) if caps.subagent_sessions else None
    )
    prices = models.prices if models is not None else None
    return TaskTool(children, system, changes=choice == "all", sessions=sessions, types=types, prices=prices)


def _subagent_type(
    agent: CustomAgent,
    children: ToolRegistry,
    session: Session,
    models: ModelChoice | None,
    today: dt.date,
    skills: str,
    roots: tuple[Path, ...],
) -> SubagentType:
    """`agent` as a subagent type: its tools among `children`, its model as `models` names it."""
    tools = agent_tools(agent, children)
    model_id = models.named(agent.model) if models is not None and agent.model != INHERIT else None
    if agent.model != INHERIT and model_id is None:  # /agents says it too
        log.warning(
            "subagents.model_not_offered", agent=agent.name, model=agent.model[:80], path=str(agent.path)
        )
    if tools.unavailable:
        log.warning("subagents.tools_left_out", agent=agent.name, tools=list(tools.unavailable))
    system = functools.partial(
        _agent_prompt,
        agent.prompt,
        tools.registry,
        cwd=session.cwd,
        today=today,
        skills=skills if "skill" in tools.registry else "",
        extra_roots=roots,
    )
    if model_id is None and tools.web is None:
        return SubagentType(agent.name, agent.description, tools.registry, system)
    web = tools.web

    def settings(parent: RunnerSettings) -> RunnerSettings:
        """Its model's settings (the session's effort where that model takes it), its web tools."""
        own = models.settings(model_id, session.effort, parent) if models and model_id else parent
        return own if web is None else replace(own, web=replace(own.web, names=own.web.names & web))

    return SubagentType(agent.name, agent.description, tools.registry, system, settings, model_id)


def _subagent_prompt(
    children: ToolRegistry,
    *,
    cwd: Path,
    today: dt.date,
    instructions: str,
    skills: str,
    extra_roots: tuple[Path, ...],
) -> str:
    """The subagents' system prompt, from what the session had when its runtime was built (the
    date too): built on the first `task` call only, as most sessions never make one."""
    return build_subagent_prompt(
        cwd=cwd,
        tools=[(t["name"], t.get("description", "")) for t in children.api_tools()],
        today=today,
        instructions=instructions,
        skills=skills,
        extra_roots=extra_roots,
    )


def _agent_prompt(
    prompt: str,
    tools: ToolRegistry,
    *,
    cwd: Path,
    today: dt.date,
    skills: str,
    extra_roots: tuple[Path, ...],
) -> str:
    """A custom agent's system prompt, built on its first call (as `_subagent_prompt`)."""
    return build_agent_prompt(
        prompt=prompt,
        cwd=cwd,
        tools=[(t["name"], t.get("description", "")) for t in tools.api_tools()],
        today=today,
        skills=skills,
        extra_roots=extra_roots,
    )
