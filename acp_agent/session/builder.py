"""What a session is built from, at session/new, load, resume and fork: the configuration and the
request's `_meta` overrides (limits, loop, subagent tools, effort, web), the model's settings, the
user's Claude Code setup read for its root, the rule engine and the permission modes it allows,
and the output style it chooses.

A bad override raises `LimitsError` (-32602 naming the field) before anything is kept. The
manager owns the open sessions; the builder registers each session it builds there, since the
rule engine's roots and the mode switch look the session up by its id.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from acp_agent.config import SUBAGENT_TOOLS, Config
from acp_agent.errors import LimitsError
from acp_agent.model.pricing import Price
from acp_agent.model.profiles import ProfileError
from acp_agent.phases import phase
from acp_agent.protocol.lifecycle import ClientCapabilities
from acp_agent.session.claude.rule_engine import RuleEngine
from acp_agent.session.claude.setup import PERMISSION_MODES, ClaudeSetup, load_claude_setup
from acp_agent.session.claude.trust import TrustStore
from acp_agent.session.commands.convention_files import session_conventions
from acp_agent.session.commands.conventions import ConventionsSlot
from acp_agent.session.commands.output_styles import chosen_style, read_output_styles
from acp_agent.session.editor.permissions import SessionPermissions
from acp_agent.session.options.catalog import ModelCatalog
from acp_agent.session.options.config_options import DEFAULT_MODE, SessionOptions
from acp_agent.session.requester import Requester
from acp_agent.session.roots import settings_roots
from acp_agent.session.state import Session
from acp_agent.tools.hidden import HiddenPaths
from acp_agent.turn.context import clearing
from acp_agent.turn.context.history import History
from acp_agent.turn.loops import choose_loop
from acp_agent.user_dirs import user_config_dir, user_home

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["SessionBuilder"]

log = structlog.get_logger(__name__)


class SessionBuilder:
    """Builds the sessions of the process from its configuration."""

    def __init__(
        self,
        config: Config,
        catalog: ModelCatalog,
        options: SessionOptions,
        requester: Requester,
        *,
        sessions: dict[str, Session],
        hidden: HiddenPaths,
        prices: Mapping[str, Price],
        trust_store: TrustStore,
    ) -> None:
        self.config = config
        self.catalog = catalog
        self.options = options
        self.requester = requester
        self.sessions = sessions
        """The open sessions (the manager's), where each built session is registered."""
        self.hidden = hidden
        self.prices = prices
        self.trust_store = trust_store
        """The project trust answers, in the state dir (hidden from every tool)."""

    def build(
        self,
        session_id: str,
        root: Path,
        overrides: dict[str, Any],
        capabilities: ClientCapabilities | None,
        history: History,
    ) -> Session:
        """A session `session_id` at `root` with `history`, its `_meta` `overrides` applied (a bad
        one raises `LimitsError`), registered among the open sessions."""
        limits = self.config.limits.with_overrides(overrides)
        loop = choose_loop(self.config, overrides)
        config = self.config
        subagent_tools = overrides.get("subagentTools", config.subagent_tools)
        if subagent_tools not in SUBAGENT_TOOLS:
            raise LimitsError("subagentTools", f"must be one of {', '.join(SUBAGENT_TOOLS)}")
        effort = overrides.get("effort", config.effort)
        if effort is not None and not isinstance(effort, str):
            raise LimitsError("effort", "must be a string (low, medium, high, xhigh, max) or null")
        try:
            settings = self.catalog.settings_for(config.model, effort, web=self.catalog.web_for(overrides))
        except ProfileError as exc:
            raise LimitsError("effort", str(exc).removeprefix("effort: ")) from None
        settings = clearing.with_meta(settings, overrides)
        setup = self.claude_setup(root)
        engine = RuleEngine(
            setup,
            roots=lambda: (root, *self.sessions[session_id].work_roots),
            hidden=self.hidden,
            home=user_home(),
        )
        settings = replace(settings, web=engine.web(settings.web))  # decided once: a cached prefix
        modes = tuple(m for m in PERMISSION_MODES if m != "bypassPermissions" or not setup.bypass_disabled)
        permissions = SessionPermissions(
            session_id,
            self.requester,
            setup.first_mode(modes) or DEFAULT_MODE,
            on_switch=lambda mode_id: self.options.switch_mode(self.sessions[session_id], mode_id),
            engine=engine,
            modes=modes,
        )
        session = Session(
            session_id,
            root,
            limits,
            history,
            permissions,
            settings,
            loop,
            capabilities or ClientCapabilities(),
            overrides=dict(overrides),
            effort=effort,
            conventions=ConventionsSlot(lambda: session_conventions(root, setup.plugins_in_force())),
            subagent_tools=subagent_tools,
            claude=setup,
        )
        session.settings_roots = settings_roots(setup, root, self.hidden)
        session.styles, session.output_style = chosen_style(setup, read_output_styles(root, home=user_home()))
        if limits.max_turn_cost_usd is not None and config.model not in self.prices:
            log.warning(
                "session.cost_unknown",
                model=config.model,
                hint="maxTurnCostUsd is not enforced without a price: pass --prices FILE",
            )
        self.sessions[session_id] = session
        return session

    def claude_setup(self, root: Path) -> ClaudeSetup:
        """The Claude Code settings of a session at `root`, read now (once per session)."""
        with phase("settings reads (session/new)"):
            return load_claude_setup(
                root, home=user_home(), config_dir=user_config_dir(), trust_store=self.trust_store
            )
