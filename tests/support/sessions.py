"""A `Session` built by hand, for unit tests of what reads one (its basis, choices, runtime slot)."""

from __future__ import annotations

from pathlib import Path

from acp_agent.claude_code.conventions.output_styles import OutputStyles
from acp_agent.claude_code.setup.setup import ClaudeSetup
from acp_agent.limits import Limits
from acp_agent.protocol.lifecycle import ClientCapabilities
from acp_agent.session.editor.permissions import SessionPermissions
from acp_agent.session.requester import Requester
from acp_agent.session.runtime import Choices, RuntimeSlot, SessionBasis
from acp_agent.session.state import Session
from acp_agent.turn.context.history import History
from acp_agent.turn.settings import RunnerSettings
from acp_agent.turn.strategies.loops import LoopChoice

__all__ = ["make_session"]


def make_session(
    session_id: str,
    cwd: Path,
    requester: Requester,
    *,
    settings: RunnerSettings | None = None,
    extra_roots: tuple[Path, ...] = (),
    capabilities: ClientCapabilities | None = None,
) -> Session:
    """A session at `cwd` with no Claude Code settings, the default loop and no journal."""
    basis = SessionBasis(
        cwd,
        Limits(),
        capabilities or ClientCapabilities(),
        ClaudeSetup(cwd, cwd),
        OutputStyles(),
        extra_roots=extra_roots,
    )
    return Session(
        session_id,
        basis,
        History(),
        SessionPermissions(session_id, requester),
        Choices(settings or RunnerSettings(model="m", max_tokens=100, system=""), LoopChoice()),
        RuntimeSlot(),
    )
