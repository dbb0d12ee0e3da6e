"""The project's trust, settled before a session's first request, and what its answer enables.

A repository's settings can widen what the agent does (a `defaultMode`, `additionalDirectories`,
its `.mcp.json` servers, hooks, memory imports from outside the workspace: `claude/trust.py`).
Before the session's runtime is built (`Engine.runtime`), the memory files are read (an import
outside the workspace waits for the trust, and is listed in its question), the question is asked
unless a remembered answer covers all it lists, and once it is granted the mode and the memory's
imports follow, and the project's MCP servers that waited start; the runtime built then reads the
roots in force (`engine.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from acp_agent.claude_code.memory.instructions import Instructions, load_instructions
from acp_agent.claude_code.memory.memory_files import ImportTrust, may_import_outside
from acp_agent.claude_code.setup.trust import Widening
from acp_agent.session.editor.announce import announce_commands
from acp_agent.session.editor.trust_question import ask_trust
from acp_agent.session.options.config_options import DEFAULT_MODE
from acp_agent.tools.hidden import NOTHING_HIDDEN, HiddenPaths
from acp_agent.user_dirs import user_config_dir, user_home

if TYPE_CHECKING:
    from acp_agent.session.requester import Requester
    from acp_agent.session.state import Session

__all__ = ["read_instructions", "session_instructions", "settle_trust"]

log = structlog.get_logger(__name__)


async def read_instructions(session: Session, hidden: HiddenPaths) -> Instructions:
    """The session's memory files, read with the settings' `claudeMdExcludes`; an import
    outside the workspace is read once the project's trust covers it, and otherwise becomes
    one of the things the trust question lists (`claude/trust.py`)."""
    setup = session.claude
    trust = setup.trust if setup is not None else None
    excludes = [e for e, _ in setup.listed("claudeMdExcludes")] if setup is not None else []

    def may_import(folder: Path, target: Path) -> bool:
        return trust is not None and trust.allows(_import_item(target))

    found = await session_instructions(session.cwd, hidden=hidden, excludes=excludes, trust=may_import)
    if trust is not None:
        for _, imported in found.untrusted_imports:
            trust.expect(_import_item(imported))
    return found


async def settle_trust(session: Session, requester: Requester) -> bool:
    """Before the session's first request: settle the project's trust (`ProjectTrust.settle`: a
    covering answer, else the question), and once granted now, apply what it enables (its
    `defaultMode`, if the session is still in the default one, its `additionalDirectories`, and
    the commands, skills and agents of the plugins it enables). True when it was granted now."""
    setup = session.claude
    trust = setup.trust if setup is not None else None
    if setup is None or trust is None:
        return False
    if not await trust.settle(partial(ask_trust, session.id, requester)):
        if trust.declined:
            log.info("claude.untrusted", session_id=session.id, left_off=[i.line() for i in trust.left_off()])
        return False
    found = setup.default_mode
    if found is not None and session.mode == DEFAULT_MODE and found[0] in session.permissions.modes:
        await session.permissions.switch_mode(found[0])
    if any(p.widening is not None for p in setup.plugins):  # now in force: offer what they hold
        session.conventions.forget()
        await announce_commands(session.id, session.conventions, requester, first=False)
    return True


async def session_instructions(
    cwd: Path,
    *,
    hidden: HiddenPaths = NOTHING_HIDDEN,
    excludes: Sequence[str] = (),
    trust: ImportTrust = may_import_outside,
) -> Instructions:
    """The memory (AGENTS.md, CLAUDE.md and Claude Code's other memory files) of a session at
    `cwd`, read once when its runtime is built: never one of the agent's `hidden` paths, nor a file
    `excludes` (`claudeMdExcludes`) names; `trust` decides imports outside the workspace."""
    return await load_instructions(
        cwd,
        home=user_home(),
        config_dir=user_config_dir(),
        hidden=hidden,
        excludes=excludes,
        trust=trust,
    )


def _import_item(target: Path) -> Widening:
    """A memory import outside the workspace, as the trust question lists it."""
    return Widening("import outside the workspace", "memory files", str(target))
