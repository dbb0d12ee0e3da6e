"""What a built-in slash command answers, from the session's state and runner (the list of them,
and how a prompt names one, is `claude_code/conventions/builtins.py`).

`/status`, `/permissions`, `/hooks`, `/mcp`, `/cost`, `/context`, `/agents` and `/tasks` answer
without a model request; `/compact` compacts with one counted request; `/rewind` is
`rewinding.py`'s. `/fork` is answered by the handler (`prompting.py`: the manager forks), never
here. `Engine.run_command` sends the answer to the editor as a notice outside the history.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_agent.claude_code.conventions.conventions import Conventions
from acp_agent.claude_code.memory.instructions import Instructions
from acp_agent.model.server_tools import WebTools
from acp_agent.session.mcp_servers import SessionServers
from acp_agent.session.subagents.listing import agents_notice
from acp_agent.session.usage import context_report, usage_status
from acp_agent.turn.context import clearing
from acp_agent.turn.context.attachments import attached
from acp_agent.turn.subagents.task import TaskTool

if TYPE_CHECKING:
    from acp_agent.session.commands.rewinding import Rewinds
    from acp_agent.session.state import Session
    from acp_agent.turn.meter import TurnMeter
    from acp_agent.turn.runner import TurnRunner

__all__ = ["NO_TASKS", "command_answer", "status_report"]

NO_TASKS = "Background commands cannot run in this session (the agent serves no task group)."


async def command_answer(
    name: str,
    arguments: str,
    session: Session,
    runner: TurnRunner,
    meter: TurnMeter,
    rewinds: Rewinds,
    platform: str | None = None,
) -> str:
    """The answer of the built-in command `name` (with its `arguments`) in `session`; a request
    it makes (`/compact`'s) is counted in `meter`. An unknown name answers as `/status`, with
    the `platform`'s lines (`model/cloud/platforms.py:Platform.status`) after the model's."""
    if name == "permissions":
        described = session.permissions.engine.describe(session.mode)
        policy = session.claude.policy_lines() if session.claude is not None else []
        notes = session.claude.permission_notes() if session.claude is not None else []
        return "\n".join([described, *notes, *policy])
    if name == "rewind":
        return await rewinds.command(session, arguments, runner.gate)
    if name == "hooks":
        return _hooks_listing(session)
    if name == "mcp":
        return (session.servers or SessionServers()).listing()
    if name == "cost":
        return session.spend.report()
    if name == "context":
        return context_report(runner, session.history, session.instructions, session.style)
    if name == "compact":
        replaced = await runner._maybe_compact(session.history, meter, force=True)
        return (
            f"Compacted: summarised {replaced} earlier messages."
            if replaced
            else "Nothing to compact yet (or no request allowance left for it)."
        )
    if name == "agents":
        task = runner.tools.get("task")
        return agents_notice(
            await session.conventions.current(), task if isinstance(task, TaskTool) else None
        )
    if name == "tasks":
        return session.tasks.listing() if session.tasks is not None else NO_TASKS
    sandbox = runner.ctx.sandbox
    report = status_report(
        session,
        runner,
        await sandbox.status_line() if sandbox else "none configured",
        await session.conventions.current(),
        rewinds.status(session),
    )
    if platform is None:
        return report
    first, _, rest = report.partition("\n")
    # A file read at start-up and again by the session warns twice with the same words: once here.
    said = set(rest.splitlines())
    platform = "\n".join(line for line in platform.splitlines() if "warning:" not in line or line not in said)
    return f"{first}\n{platform}\n{rest}"


def status_report(
    session: Session, runner: TurnRunner, sandbox: str, conventions: Conventions, checkpoints: str
) -> str:
    """`/status`: the model, mode, limits, context, spend, sandbox, checkpoints and what is loaded."""
    settings = runner.settings
    limits = session.limits.model_dump(by_alias=True)
    used = runner.last_context_tokens
    window = settings.context_window
    shown = ", ".join(
        f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in limits.items() if v is not None
    )
    effort = session.effort or f"model default ({settings.profile.effort_default or 'none'})"
    return (
        f"Model: {settings.model} (effort {effort})\nMode: {session.mode}\n"
        f"Limits per prompt: {shown}\n"
        f"Context used: {used:,} of {window:,} tokens ({used / window:.0%})\n"
        f"{usage_status(runner.usage)}\n"
        f"Messages in history: {len(session.history)}\n"
        f"Old tool results cleared from requests: {clearing.status(session.history, settings)}\n"
        f"Sandbox for commands: {sandbox}\n"
        f"Checkpoints (/rewind): {checkpoints}\n"
        f"Web tools: {_web(settings.web)}\n"
        f"Instructions:{_instructions(session)}\n"
        f"{conventions.status()}"
        + (f"\n{session.claude.describe_files()}" if session.claude is not None else "")
        + f"\n{session.styles.status(session.style)}"
        + (f"\n{session.servers.status()}" if session.servers is not None else "")
        + (f"\n{session.hooks.status()}" if session.hooks is not None else "")
    )


def _hooks_listing(session: Session) -> str:
    """`/hooks`: the hooks in force and those waiting for the project's trust (or declined)."""
    if session.hooks is None:
        return "Hooks: none"
    trust = session.claude.trust if session.claude is not None else None
    state = "declined" if trust is not None and trust.declined else "waiting for trust"
    return session.hooks.hooks.describe(state)


def _web(web: WebTools) -> str:
    """The web tools the session's requests carry, or why none."""
    offered = [t["type"] for t in web.definitions(max_uses=None)]
    if offered:
        return ", ".join(offered)
    return (
        "off"
        if not web.enabled
        else "none (the model has no web tools, or the client's tool set leaves them out)"
    )


def _instructions(session: Session) -> str:
    """The memory files in the system prompt, in order, and those loaded on read (/status)."""
    instructions = session.instructions or Instructions()
    return instructions.status(attached(session.history.messages))
