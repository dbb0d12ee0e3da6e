"""A session's MCP servers started, and their prompts followed.

`mcp_servers.py` plans which of a session's servers start when (and what `/mcp` says); here they
start. Those that need no trust start at session/new, load, resume and fork, before the answer
(`connect_mcp`); a project server that waited for the trust question starts once it is settled,
before the first request (`start_trusted_servers`, from `Engine.runtime`): the tool list is a
cached prefix, fixed for the session from then on. A server's changed prompt list changes the
session's commands, and the editor's menu when it differs. The `mcp` SDK is imported only for a
session that starts a server (`mcp_connections`, D4).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import structlog

from acp_agent.claude_code.setup.mcp_files import ClaudeServers, read_claude_servers
from acp_agent.lazy import deferred
from acp_agent.session.editor.announce import announce_commands
from acp_agent.session.editor.elicitation import editor_elicitation
from acp_agent.session.mcp_servers import MCP_START_SECONDS, SessionServers
from acp_agent.user_dirs import user_home

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from acp_agent.session.requester import Requester
    from acp_agent.session.state import Session
    from acp_agent.tools.mcp.connections import McpConnections

__all__ = ["connect_mcp", "mcp_connections", "start_trusted_servers"]

log = structlog.get_logger(__name__)


@deferred
def mcp_connections() -> type[McpConnections]:
    """MCP connections, imported when a session has servers."""
    from acp_agent.tools.mcp.connections import McpConnections

    return McpConnections


async def connect_mcp(
    session: Session, servers: list[dict[str, Any]], requester: Requester, task_group: TaskGroup | None
) -> list[str]:
    """Plan the session's MCP servers (the editor's `servers` and Claude Code's files', the
    editor's winning a name clash), start those that need no trust in `task_group` and offer their
    tools; returns the failures to report. Called by session/new and session/load before they
    answer, so before the first prompt (a project server that waits for trust starts then,
    `start_trusted_servers`)."""
    setup = session.claude
    claude = read_claude_servers(setup, home=user_home()) if setup is not None else ClaudeServers()
    policy = setup.mcp_policy(os.environ) if setup is not None else None
    managed = setup.policy if setup is not None else None
    exclusive = (
        str(managed.directory / "managed-mcp.json") if managed and managed.mcp_servers is not None else None
    )
    services = session.services
    services.servers = plan = SessionServers.plan(
        servers, claude, setup.trust if setup else None, policy, exclusive
    )
    if not plan.any_to_start:
        return []
    connections_class = await mcp_connections()  # under the deferred-import lock, off the loop
    connections = connections_class(
        task_group,
        elicitation=editor_elicitation(session.id, requester, session.capabilities),
    )
    services.mcp = connections
    connections.on_prompts_changed = lambda: _prompts_changed(session, requester)
    starting = plan.starting()
    tools = await plan.start(starting, connections, cwd=session.cwd, timeout=MCP_START_SECONDS)
    services.tools.extend(tools)  # the runtime, built on the first prompt, offers them
    session.conventions.set_prompts(connections.prompts)  # and its prompts are commands
    failures = [f"{row.name}: {row.detail}" for row in starting if row.state == "failed"]
    if failures:
        log.warning("session.mcp_failed", session_id=session.id, failures=failures)
    log.info("session.mcp_connected", session_id=session.id, tools=len(tools))
    return failures


async def start_trusted_servers(session: Session, requester: Requester) -> None:
    """The project's MCP servers that waited for its trust, started once it is settled (before
    the first request: their tools join the tool list the whole session keeps)."""
    servers, setup = session.servers, session.claude
    if servers is None or session.mcp is None:
        return
    rows = servers.trusted(setup.trust if setup is not None else None)
    tools = await servers.start(rows, session.mcp, cwd=session.cwd, timeout=MCP_START_SECONDS)
    if rows:
        session.services.tools.extend(tools)
        session.conventions.set_prompts(session.mcp.prompts)
        await announce_commands(session.id, session.conventions, requester, first=False)
        log.info("session.project_mcp_started", session_id=session.id, tools=len(tools))


async def _prompts_changed(session: Session, requester: Requester) -> None:
    """An MCP server's prompts changed (`McpConnections.on_prompts_changed`): offer the new ones,
    and tell the editor if its menu changed."""
    if session.mcp is None or session.closing:
        return
    session.conventions.set_prompts(session.mcp.prompts)
    await announce_commands(session.id, session.conventions, requester, first=False)
