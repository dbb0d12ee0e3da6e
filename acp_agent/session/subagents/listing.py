"""`/agents`: the session's custom agents as the `task` tool offers them, answered without a request.

Each agent with its description, the model it runs on (and what its file asked for), the tools it
gets (and what its file names that it cannot have), and its file; then the agent files left out,
with why. It reads what the session holds (its conventions and its task tool), so what it lists
is what a `task` call runs.
"""

from __future__ import annotations

from acp_agent.claude_code.conventions.agents import INHERIT, CustomAgent
from acp_agent.claude_code.conventions.conventions import Conventions
from acp_agent.session.subagents.tool import agent_tools
from acp_agent.tools.printable import one_line, printable
from acp_agent.turn.subagents.task import TaskTool

__all__ = ["DESCRIPTION_SHOWN", "agents_notice"]

DESCRIPTION_SHOWN = 200
"""Characters of an agent's description shown (the model is offered up to the task tool's cut)."""
WHERE = (
    "`.claude/agents/*.md` in the project (from the cwd up to the repository root), `~/.claude/agents/*.md` "
    "or an enabled plugin's `agents/`"
)


def agents_notice(conventions: Conventions, task: TaskTool | None) -> str:
    """The /agents answer for a session holding `conventions`, whose task tool is `task` (None:
    the session offers no subagents)."""
    agents = conventions.agents
    if not agents:
        parts = [f"No custom agents: none found in {WHERE}."]
    else:
        parts = [
            f"Custom agents: {len(agents)}, offered to the model as the task tool's `subagent_type` "
            "(a project's agent wins over the user's of the same name)."
        ]
        if task is None:
            parts.append(
                "Subagents are off in this session (--subagent-tools off, or the client's tool set "
                "leaves out the task tool): none of these runs."
            )
        for agent in agents:
            parts += _agent_lines(agent, task)
    if conventions.agents_skipped:
        parts.append("Not loaded:")
        parts += [f"- {line}" for line in conventions.agents_skipped]
    return printable("\n".join(parts))  # names, descriptions and paths a repository chose


def _agent_lines(agent: CustomAgent, task: TaskTool | None) -> list[str]:
    description = one_line(agent.description)
    if len(description) > DESCRIPTION_SHOWN:
        description = description[: DESCRIPTION_SHOWN - 1] + "…"
    head = f"- {agent.name} ({agent.source}): {description}"
    if task is None:
        return [head, f"  file: {agent.path}"]
    kind = task.types.get(agent.name)
    if kind is None:
        head += " (not offered: the task tool's list of agents is full)"
    if agent.model == INHERIT:
        model = "the session's (inherit)"
    elif kind is not None and kind.model is not None:
        model = kind.model if kind.model == agent.model else f"{kind.model} ({agent.model})"
    else:
        model = f"the session's: {agent.model!r} is not offered here"
    tools = agent_tools(agent, task.tools)
    names = list(tools.registry.names)
    names += ["web tools (when on)"] if tools.web is None else sorted(tools.web)
    line = f"  tools: {', '.join(names) or 'none'}"
    if tools.unavailable:
        line += f"; left out: {', '.join(tools.unavailable)}"
    if agent.ignored:
        line += f"; ignored: {', '.join(agent.ignored)}"
    return [head, f"  model: {model}", line, f"  file: {agent.path}"]
