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

from acp_agent.claude_code.conventions.convention_files import session_conventions
from acp_agent.claude_code.conventions.conventions import ConventionsSlot
from acp_agent.claude_code.conventions.output_styles import chosen_style, read_output_styles
from acp_agent.claude_code.settings.agent_settings import AgentSettings
from acp_agent.claude_code.settings.local_owner import LocalOwners
from acp_agent.claude_code.settings.model_allowlist import resolve_alias
from acp_agent.claude_code.setup.setup import PERMISSION_MODES, ClaudeSetup, load_claude_setup
from acp_agent.claude_code.setup.trust import TrustStore
from acp_agent.config import DEFAULT_MODEL, SUBAGENT_TOOLS, Config
from acp_agent.errors import LimitsError
from acp_agent.model.pricing import Price
from acp_agent.model.profiles import ProfileError
from acp_agent.permissions.engine import RuleEngine
from acp_agent.phases import phase
from acp_agent.protocol.lifecycle import ClientCapabilities
from acp_agent.session.client_options import ClientOptions
from acp_agent.session.editor.permissions import SessionPermissions
from acp_agent.session.machinery.roots import settings_roots
from acp_agent.session.options.catalog import ModelCatalog
from acp_agent.session.options.config_options import DEFAULT_MODE, SessionOptions
from acp_agent.session.requester import Requester
from acp_agent.session.runtime import Choices, RuntimeSlot, SessionBasis
from acp_agent.session.state import Session, Title
from acp_agent.session.usage import Spend
from acp_agent.tools.hidden import HiddenPaths
from acp_agent.turn.context import clearing
from acp_agent.turn.context.history import History
from acp_agent.turn.strategies.loops import choose_loop
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
        agent_settings: AgentSettings | None = None,
    ) -> None:
        self.config = config
        self.agent_settings = agent_settings
        """The managed policy and what the agent's configuration took from the settings at
        start-up: the policy holds for every session, and the model's choice says what chose it."""
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
        *,
        client: ClientOptions | None = None,
        extra_roots: tuple[Path, ...] = (),
        title: Title | None = None,
        spend: Spend | None = None,
    ) -> Session:
        """A session `session_id` at `root` (and the client's `extra_roots`) with `history`, its
        `_meta` `overrides` applied (a bad one raises `LimitsError`), the `client`'s options, and
        the `title` and `spend` its journal holds; registered among the open sessions."""
        limits = self.config.limits.with_overrides(overrides)
        loop = choose_loop(self.config, overrides)
        config = self.config
        subagent_tools = overrides.get("subagentTools", config.subagent_tools)
        if subagent_tools not in SUBAGENT_TOOLS:
            raise LimitsError("subagentTools", f"must be one of {', '.join(SUBAGENT_TOOLS)}")
        effort = overrides.get("effort", config.effort)
        if effort is not None and not isinstance(effort, str):
            raise LimitsError("effort", "must be a string (low, medium, high, xhigh, max) or null")
        setup = self.claude_setup(root)
        model = self.session_model(setup)
        try:
            settings = self.catalog.settings_for(model, effort, web=self.catalog.web_for(overrides))
        except ProfileError as exc:
            raise LimitsError("effort", str(exc).removeprefix("effort: ")) from None
        settings = clearing.with_meta(settings, overrides)
        engine = RuleEngine(
            setup,
            roots=lambda: (root, *self.sessions[session_id].work_roots),
            hidden=self.hidden,
            home=user_home(),
        )
        client = client or ClientOptions()
        web = engine.web(settings.web)  # decided once, with the client's tool set: a cached prefix
        if client.allowed_tools is not None:  # acpx --allowed-tools: its web tools too
            web = replace(web, names=frozenset(filter(client.offers, web.names)))
        settings = replace(settings, web=web)
        modes = tuple(m for m in PERMISSION_MODES if m != "bypassPermissions" or not setup.bypass_disabled)
        permissions = SessionPermissions(
            session_id,
            self.requester,
            setup.first_mode(modes) or DEFAULT_MODE,
            on_switch=lambda mode_id: self.options.switch_mode(self.sessions[session_id], mode_id),
            engine=engine,
            modes=modes,
            setup=setup,
        )
        styles = read_output_styles(root, home=user_home(), denials=engine.path_denials())
        styles, style = chosen_style(setup, styles)
        session = Session(
            session_id,
            SessionBasis(
                root,
                limits,
                capabilities or ClientCapabilities(),
                setup,
                styles,
                client=client,
                extra_roots=extra_roots,
                subagent_tools=subagent_tools,
            ),
            history,
            permissions,
            Choices(settings, loop, effort=effort, style=style, overrides=dict(overrides)),
            RuntimeSlot(settings_roots(setup, root, self.hidden)),
            conventions=ConventionsSlot(
                lambda: session_conventions(root, setup.plugins_in_force(), engine.path_denials())
            ),
            spend=spend or Spend(),
            title=title or Title(),
        )
        if limits.max_turn_cost_usd is not None and model not in self.prices:
            log.warning(
                "session.cost_unknown",
                model=model,
                hint="maxTurnCostUsd is not enforced without a price: pass --prices FILE",
            )
        self.sessions[session_id] = session
        return session

    def claude_setup(self, root: Path) -> ClaudeSetup:
        """The Claude Code settings of a session at `root`, read now (once per session), under
        the managed policy read at start-up."""
        with phase("settings reads (session/new)"):
            return load_claude_setup(
                root,
                home=user_home(),
                config_dir=user_config_dir(),
                trust_store=self.trust_store,
                owners=LocalOwners(self.trust_store.path.parent / "local-settings.json"),
                policy=self.agent_settings.policy if self.agent_settings is not None else None,
            )

    def session_model(self, setup: ClaudeSetup) -> str:
        """A new session's model, Claude Code's order: `--model` (or `ACP_AGENT_MODEL`), then
        `ANTHROPIC_MODEL` (the process's, `agent_settings.py:start_model`), then the `model`
        setting of the session's files (the managed policy's first, then the local, the project's,
        acp-agent's and the user's), then the default; a model outside the managed
        `availableModels` is replaced by the default, with a warning (`/status` says which)."""
        start = self.agent_settings
        model, source = self.config.model, start.model_source if start is not None else "the configuration"
        found = setup.value("model")
        if (start is None or not start.explicit_model) and isinstance(found, tuple) and found[0].strip():
            wanted = resolve_alias(found[0])
            if wanted != model and self.catalog.allows(wanted):
                model, source = wanted, f"model in {found[1].shown}"
            elif wanted != model:  # the default then, as Claude Code has it
                model = self.catalog.allowlist.default(DEFAULT_MODEL)
                warning = (
                    f"{found[1].shown}: model {wanted} is not in the managed availableModels: {model} is used"
                )

                setup.notes.append(f"  - warning: {warning}")
                log.warning("session.model_not_available", model=wanted, used=model)
        setup.notes.insert(0, f"Session model chosen by: {source}")
        return model
