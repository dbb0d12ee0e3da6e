"""A session's MCP servers: the editor's, and Claude Code's (`claude_code/setup/mcp_files.py`),
which start when, and what `/mcp` says of each.

The editor's servers (session/new's `mcpServers`) win a name clash: a Claude Code server of the
same name is listed as replaced and never started. The editor's, the user's (`~/.claude.json`)
and the project servers the user's own settings approve start at session/new, before its answer
(each within `MCP_START_SECONDS`, `mcp_startup.py:connect_mcp`). A project server that waits for
trust is one of the things the trust question lists, and starts at the first prompt, once the
question is settled and before the first request (`Engine.runtime`): the tool list is a cached
prefix, so it is fixed before the session's first request and holds for the session. A server
that fails to start, or never answers within the bound, is named with why, and the session goes
on without it.

The managed policy has the last word (`claude/managed.py`, `claude/mcp_policy.py`): with its
`managed-mcp.json` only the servers it lists start, the editor's too are left out; and every
server is checked against the settings' `deniedMcpServers` and `allowedMcpServers`. A server
they keep out is listed as blocked, with the file that says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from acp_agent.claude_code.settings.mcp_policy import McpPolicy
from acp_agent.claude_code.setup.mcp_files import ClaudeServers
from acp_agent.claude_code.setup.trust import ProjectTrust, Widening
from acp_agent.tools.printable import printable

if TYPE_CHECKING:
    from acp_agent.tools.mcp.connections import McpConnections
    from acp_agent.tools.mcp.tool import McpTool

__all__ = ["MCP_START_SECONDS", "ServerRow", "SessionServers"]

MCP_START_SECONDS = 15.0
"""How long session/new (or the first prompt, for a server that waited for trust) waits for a
server to start (editors give up on session/new at about 20 s)."""

State = Literal["starting", "connected", "failed", "waiting", "declined", "disabled", "replaced", "blocked"]


@dataclass(slots=True)
class ServerRow:
    """One server of the session, as `/mcp` lists it."""

    name: str
    origin: str
    """"editor", or the scope and file it comes from ("project: .mcp.json")."""
    state: State
    detail: str = ""
    tools: int = 0
    spec: dict[str, Any] = field(default_factory=dict)
    trust_item: Widening | None = None

    def line(self) -> str:
        if self.state == "connected":
            what = f"connected, {self.tools} tool{'' if self.tools == 1 else 's'}"
        else:
            what = {
                "starting": "starting",
                "failed": "failed",
                "waiting": "waiting for the project's trust (asked at the first prompt)",
                "declined": "not started: the project is not trusted",
                "disabled": "disabled",
                "replaced": "not started: the editor's server of that name is used",
                "blocked": "not started (MCP server policy)",
            }[self.state]
        return f"- {self.name} ({self.origin}): {what}{': ' + self.detail if self.detail else ''}"


@dataclass(slots=True)
class SessionServers:
    """The session's servers in the order `/mcp` lists them: the editor's, then Claude Code's."""

    rows: list[ServerRow] = field(default_factory=list)
    warnings: tuple[str, ...] = ()

    @classmethod
    def plan(
        cls,
        editor: list[dict[str, Any]],
        claude: ClaudeServers,
        trust: ProjectTrust | None,
        policy: McpPolicy | None = None,
        exclusive: str | None = None,
    ) -> SessionServers:
        """Which server starts now and which waits, before anything starts. What waits for trust
        is expected by `trust` now, so the first prompt's question lists it. `policy` says which
        servers may start at all; `exclusive` names the managed-mcp.json that leaves the editor's
        servers out."""
        rows = [ServerRow(str(s.get("name") or "?"), "editor", "starting", spec=s) for s in editor]
        for row in rows:
            blocked = (
                f"{exclusive} has exclusive control" if exclusive else policy and policy.blocked(row.spec)
            )
            if blocked:
                row.state, row.detail = "blocked", blocked
        editors = {row.name for row in rows if row.state != "blocked"}
        for server in claude.servers:
            row = ServerRow(server.name, f"{server.scope}: {server.source}", "starting", spec=server.spec)
            blocked = policy.blocked(server.spec) if policy is not None and not server.problem else None
            if server.name in editors:
                row.state = "replaced"
            elif blocked:
                row.state, row.detail = "blocked", blocked
            elif server.disabled_by:
                row.state, row.detail = "disabled", f"disabledMcpjsonServers in {server.disabled_by}"
            elif server.problem:
                row.state, row.detail = "failed", server.problem
            elif server.trust_item is not None:
                row.state, row.trust_item = "waiting", server.trust_item
                if trust is not None:
                    trust.expect(server.trust_item)
            rows.append(row)
        return cls(rows, claude.warnings)

    @property
    def any_to_start(self) -> bool:
        return any(row.state in ("starting", "waiting") for row in self.rows)

    def starting(self) -> list[ServerRow]:
        """The servers that start at session/new."""
        return [row for row in self.rows if row.state == "starting"]

    def trusted(self, trust: ProjectTrust | None) -> list[ServerRow]:
        """The waiting servers the project's trust now lets start; the others are marked declined."""
        allowed = []
        for row in self.rows:
            if row.state != "waiting" or row.trust_item is None:
                continue
            if trust is not None and trust.allows(row.trust_item):
                row.state = "starting"
                allowed.append(row)
            elif trust is not None and trust.settled:
                row.state = "declined"
        return allowed

    async def start(
        self, rows: list[ServerRow], connections: McpConnections, *, cwd: Path, timeout: float
    ) -> list[McpTool]:
        """Start `rows` on `connections` (each within `timeout`); each row says how it went."""
        if not rows:
            return []
        before = len(connections.failures)
        try:
            tools = await connections.start([r.spec for r in rows], cwd=cwd, allow_http=True, timeout=timeout)
        except BaseException:  # cancelled (session/cancel during the first prompt's set-up)
            for row in rows:
                if row.state == "starting":
                    row.state, row.detail = "failed", "its start was cancelled; a new session starts it"
            raise
        failed = {f.server: f.reason for f in connections.failures[before:]}
        for row in rows:
            if row.name in failed:
                row.state, row.detail = "failed", failed[row.name]
            else:
                row.state, row.tools = "connected", sum(1 for t in tools if t.server == row.name)
        return tools

    def listing(self) -> str:
        """`/mcp`'s answer."""
        if not self.rows and not self.warnings:
            return (
                "No MCP servers: none from the editor, and none in .mcp.json or ~/.claude.json "
                "(docs/claude-code-files.md says where they are read)."
            )
        lines = ["MCP servers:", *(row.line() for row in self.rows)]
        lines += [f"  - warning: {w}" for w in self.warnings]
        return printable("\n".join(lines))  # names and reasons a repository chose

    def status(self) -> str:
        """One line for /status, and the reading's warnings."""
        counts: dict[str, int] = {}
        for row in self.rows:
            counts[row.state] = counts.get(row.state, 0) + 1
        shown = ", ".join(f"{n} {s}" for s, n in counts.items()) or "none"
        text = f"MCP servers: {shown} (/mcp lists them)"
        return printable(text + "".join(f"\n  - warning: {w}" for w in self.warnings))
