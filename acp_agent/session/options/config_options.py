"""A session's options (mode, model, effort, loop, web, output style): where they are offered,
changed and restored.

Every option is a `configOptions` select (the effort's category is `thought_level`), but `web`, a
boolean offered only to a client that advertises boolean options; the mode is also offered as ACP
`modes`, kept in sync
(docs/decisions.md D6). A change, from session/set_config_option, session/set_mode or a
strategy's own mode switch, is checked (-32602 names a bad value), applied, journaled (an entry
of `turn/journal/entries.py`, so session/load restores it) and announced: `config_option_update` after
every change, with `current_mode_update` for a mode and a notice (a thought, for a client that
shows no notices) saying what a model switch costs.

session/load replays the journaled choices in order (`restore`). A value the agent would not
take now is dropped with a log line, and a mode that skips questions is never restored from disk:
a command the user allowed once could have written it there, so the user chooses it again.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import structlog

from acp_agent.config import Config
from acp_agent.errors import LimitsError, RpcError
from acp_agent.lazy import deferred
from acp_agent.model.profiles import EFFORTS, ModelProfile, ProfileError
from acp_agent.session.editor.updates import mode_update, notice_update
from acp_agent.session.options.catalog import ModelCatalog, capped_choices
from acp_agent.session.requester import Requester
from acp_agent.session.state import Session
from acp_agent.turn.journal.entries import (
    EffortEntry,
    Entry,
    LoopEntry,
    ModeEntry,
    ModelEntry,
    StyleEntry,
    WebEntry,
)
from acp_agent.turn.strategies.loops import LOOPS, choose_loop, import_strategy

if TYPE_CHECKING:
    from acp_agent.turn.events import Notice

__all__ = ["DEFAULT_EFFORT", "DEFAULT_MODE", "MODES", "OPTION_IDS", "SessionOptions", "modes_state"]

log = structlog.get_logger(__name__)

OPTION_IDS = ("mode", "model", "effort", "loop", "web", "output_style")
DEFAULT_MODE = "default"
MODES: dict[str, tuple[str, str]] = {
    "default": ("Default", "Ask before every file edit and every command."),
    "acceptEdits": ("Accept edits", "Edit files without asking; ask before commands."),
    "plan": ("Plan", "Read-only: look around and plan; edits and commands are refused."),
    "dontAsk": ("Don't ask", "Never ask: what the rules and the mode do not allow is refused."),
    "bypassPermissions": ("Bypass permissions", "Never ask: edits and commands run at once."),
}
"""Mode id → (name, description): how much the agent may do without asking."""
UNASKED_MODES = frozenset({"bypassPermissions"})
"""Modes that skip every question: never restored from a journal."""
DEFAULT_EFFORT = "default"
"""The effort option's value for "the model's own default" (no `output_config.effort` sent)."""


@deferred
def notice_class() -> type[Notice]:
    """The turn's notice, imported when a model switch says what it costs (session/new needs none)."""
    from acp_agent.turn.events import Notice

    return Notice


def modes_state(current: str, offered: Iterable[str] = tuple(MODES)) -> dict[str, Any]:
    """The `modes` object of session/new and session/load: the session's `offered` modes (all,
    but bypassPermissions where a settings file disables it)."""
    return {
        "currentModeId": current,
        "availableModes": [
            {"id": mode_id, "name": MODES[mode_id][0], "description": MODES[mode_id][1]}
            for mode_id in offered
        ],
    }


def _select(
    option_id: str, name: str, current: str, description: str, choices: Iterable[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "id": option_id,
        "name": name,
        "type": "select",
        "currentValue": current,
        "description": description,
        "options": list(choices),
    }


def _described(table: dict[str, tuple[str, str]]) -> list[dict[str, Any]]:
    return [{"value": key, "name": name, "description": text} for key, (name, text) in table.items()]


def _effort_choices(profile: ModelProfile) -> list[dict[str, Any]]:
    levels = profile.efforts if profile.known else EFFORTS
    default = f"Model default ({profile.effort_default})" if profile.effort_default else "Model default"
    return [
        {"value": DEFAULT_EFFORT, "name": default},
        *({"value": level, "name": level} for level in levels),
    ]


class SessionOptions:
    """Reads, changes and restores any session's options: for the handlers, a strategy's mode
    switch and session/load."""

    def __init__(self, config: Config, catalog: ModelCatalog, requester: Requester) -> None:
        self.config = config
        self.catalog = catalog
        self.requester = requester

    def config_options(self, session: Session) -> list[dict[str, Any]]:
        """Every config option of a session with its current value (mode, model, effort, loop)."""
        models = self.catalog.available_models()
        return [
            {
                **_select(
                    "mode",
                    "Mode",
                    session.mode,
                    "How much the agent may do without asking.",
                    _described({m: MODES[m] for m in session.permissions.modes}),
                ),
                "category": "mode",
            },
            {
                **_select(
                    "model",
                    "Model",
                    session.model,
                    "The Claude model used for this session.",
                    ({"value": m, "name": m} for m in capped_choices(session.model, models)),
                ),
                "category": "model",
            },
            {
                **_select(
                    "effort",
                    "Effort",
                    session.effort or DEFAULT_EFFORT,
                    "How much effort the model spends on each reply (output_config.effort).",
                    _effort_choices(session.settings.profile),
                ),
                "category": "thought_level",
            },
            _select(
                "loop",
                "Loop",
                session.loop.loop,
                "How a prompt turn runs: the plain tool loop, verify until a check passes, "
                "or plan → approve → act.",
                _described(LOOPS),
            ),
            *self._web_option(session),
            _select(
                "output_style",
                "Output style",
                session.style.name,
                "How the agent talks (Claude Code's output styles: the built-ins and "
                ".claude/output-styles). A change applies from the next request, and the prompt "
                "cache starts over once.",
                (
                    {"value": style.name, "name": style.name, "description": style.description}
                    for style in session.styles.styles
                ),
            ),
        ]

    @staticmethod
    def _web_option(session: Session) -> list[dict[str, Any]]:
        """The `web` switch: a boolean option, offered when the client takes boolean options and
        the model has web tools (`--web`, `_meta` and acpx's tool set cover the other cases)."""
        web = session.settings.web
        if not session.capabilities.boolean_config_options or (web.search is None and web.fetch is None):
            return []
        return [
            {
                "id": "web",
                "name": "Web search",
                "type": "boolean",
                "currentValue": web.enabled,
                "description": "Let the model search the web and fetch pages (the API runs them; "
                "searches cost $10 per 1,000). Switching rewrites the prompt cache once.",
            }
        ]

    async def set(self, session: Session, option_id: str, value: Any, *, field: str = "value") -> None:
        """session/set_config_option (and session/set_mode, whose field is `modeId`).

        Raises:
            RpcError: -32602 for an unknown option or a value it does not take (naming `field`),
                -32600 for a loop change while a prompt runs.
        """
        if option_id not in OPTION_IDS:
            raise RpcError.invalid_params(
                f"Invalid params: configId: unknown config option {option_id!r}", {"configId": option_id}
            )
        if option_id == "web":
            await self._set_web(session, value, field)
            return
        if not isinstance(value, str):
            raise RpcError.invalid_params(f"Invalid params: {field}: must be a string")
        choices = {
            "mode": list(session.permissions.modes),
            "model": self.catalog.available_models(),
            "output_style": [s.name for s in session.styles.styles],
        }.get(option_id)
        if choices is not None and value not in choices:
            raise RpcError.invalid_params(
                f"Invalid params: {field}: unknown {option_id} {value!r} (one of {', '.join(choices)})",
                {field: value},
            )
        if option_id == "loop" and session.running is not None:
            raise RpcError.invalid_request(
                "Cannot change the loop while a prompt runs", {"sessionId": session.id}
            )
        try:
            if option_id == "mode":
                await self.switch_mode(session, value)
            elif option_id == "model":
                await self.switch_model(session, value)
            elif option_id == "effort":
                await self.set_effort(session, value)
            elif option_id == "output_style":
                await self.set_style(session, value)
            else:
                await self.set_loop(session, value)
        except (ProfileError, LimitsError) as exc:
            raise RpcError.invalid_params(f"Invalid params: {field}: {exc}", {field: value}) from None

    async def _set_web(self, session: Session, value: Any, field: str) -> None:
        """The web tools on or off, for the next requests: a boolean option the session offers."""
        if not self._web_option(session):
            raise RpcError.invalid_params(
                "Invalid params: configId: this session offers no web option", {"configId": "web"}
            )
        if not isinstance(value, bool):
            raise RpcError.invalid_params(f"Invalid params: {field}: must be a boolean", {field: value})
        if value == session.settings.web.enabled:
            return
        web = replace(session.settings.web, enabled=value)
        session.choose(replace(session.choices, settings=replace(session.settings, web=web)))
        session.history.note(WebEntry(value))
        await self._announce(session)

    async def switch_mode(self, session: Session, mode_id: str) -> None:
        """Change the permission mode (a known one), journal it, and tell the editor both ways."""
        if session.permissions.mode == mode_id:
            return
        session.permissions.mode = mode_id  # the cell the session's gate reads at each decision
        session.history.note(ModeEntry(mode_id))
        await self._notify(session, mode_update(mode_id))
        await self._announce(session)

    async def set_effort(self, session: Session, value: str) -> None:
        """The effort: a level the model accepts, or "default" (raises ProfileError if refused)."""
        effort = None if value == DEFAULT_EFFORT else value
        if effort == session.effort:
            return
        settings = self.catalog.settings_for(session.model, effort, session.settings)
        session.choose(replace(session.choices, settings=settings, effort=effort))
        session.history.note(EffortEntry(effort))
        await self._announce(session)

    async def set_style(self, session: Session, name: str) -> None:
        """Another output style (one the session offers): the system prompt changes from the next
        request, so its cached prefix is written once more."""
        style = session.styles.find(name)
        if style is None or style is session.style:
            return
        session.choose(replace(session.choices, style=style))
        session.history.note(StyleEntry(style.name))
        log.info("session.output_style", session_id=session.id, style=style.name)
        await self._announce(session)

    async def set_loop(self, session: Session, value: str) -> None:
        """The loop of the next prompts (raises LimitsError when it cannot run, e.g. verify with
        nothing to check the work with)."""
        if value == session.loop.loop:
            return
        overrides = {**session.overrides, "loop": value}
        loop = choose_loop(self.config, overrides)
        await import_strategy(loop)  # before the runtime's rebuild builds it on the event loop
        session.choose(replace(session.choices, loop=loop, overrides=overrides))
        session.history.note(LoopEntry(value))
        await self._announce(session)

    async def switch_model(self, session: Session, model_id: str) -> None:
        """Another model for the next prompts; says in a thought what the switch costs.

        Thinking blocks the new model cannot read are dropped from the history (the API would drop
        them anyway, unbilled, but a history rewritten later must not hold them), and the prompt
        cache of the old model is of no use to the new one.
        """
        old = session.settings.profile
        if model_id == session.model:
            return
        self._use_model(session, model_id)
        dropped = 0
        if not session.settings.profile.reads_thinking_from(old.id):
            dropped = session.history.drop_thinking(f"model switch {old.id} → {model_id}")
        session.history.note(ModelEntry(model_id))
        parts = [f"Switched model: {old.id} → {model_id}."]
        if dropped:
            parts.append(
                f"{dropped} earlier thinking block(s) written by {old.id} cannot be read "
                f"by {model_id}: they are dropped, so its earlier reasoning is lost."
            )
        if len(session.history):
            parts.append(
                "The prompt cache starts over: the next request pays the full input "
                "price for the conversation so far."
            )
        log.info(
            "session.model_switched",
            session_id=session.id,
            old=old.id,
            new=model_id,
            thinking_dropped=dropped,
        )
        said = (await notice_class())(
            " ".join(parts) + "\n",
            str(uuid.uuid4()),
            title=parts[0].rstrip("."),
            description=" ".join(parts[1:]) or None,
            thought=True,
        )
        await self._notify(session, notice_update(said, notices=session.capabilities.notices))
        await self._announce(session)

    def _use_model(self, session: Session, model_id: str) -> None:
        """Settings for `model_id`, keeping the effort if the new model takes it (else its default)."""
        effort = session.effort
        try:
            settings = self.catalog.settings_for(model_id, effort, session.settings)
        except ProfileError:  # the new model does not take the session's effort level
            effort = None
            settings = self.catalog.settings_for(model_id, None, session.settings)
        session.choose(replace(session.choices, settings=settings, effort=effort))

    def restore(self, session: Session, entries: Iterable[Entry]) -> list[dict[str, Any]]:
        """Apply the journaled choices, in order; returns the update that shows the restored mode
        (for session/load's replay), if the journal changed it.

        What the agent would not take now is dropped with a log line: an unknown mode, a mode that
        skips questions (the session stays asking), an effort the model refuses, a loop that
        cannot run with the configuration and `_meta` of this load.
        """
        mode_changed = False
        for entry in entries:
            try:
                if isinstance(entry, ModeEntry):
                    mode_changed = True
                    session.permissions.mode = self._restorable_mode(session, entry.mode_id)
                elif isinstance(entry, ModelEntry):
                    if not self.catalog.allows(entry.model_id):
                        raise LimitsError("model", f"{entry.model_id} is not in the managed availableModels")
                    self._use_model(session, entry.model_id)

                elif isinstance(entry, EffortEntry):
                    settings = self.catalog.settings_for(session.model, entry.effort, session.settings)
                    session.choose(replace(session.choices, settings=settings, effort=entry.effort))
                elif isinstance(entry, LoopEntry):
                    overrides = {**session.overrides, "loop": entry.loop}
                    loop = choose_loop(self.config, overrides)
                    session.choose(replace(session.choices, loop=loop, overrides=overrides))
                elif isinstance(entry, WebEntry):
                    web = replace(session.settings.web, enabled=entry.enabled)
                    session.choose(replace(session.choices, settings=replace(session.settings, web=web)))
                elif isinstance(entry, StyleEntry):
                    style = session.styles.find(entry.style)
                    if style is None:
                        raise LimitsError("output_style", f"no output style {entry.style!r} here now")
                    session.choose(replace(session.choices, style=style))
            except (ProfileError, LimitsError) as exc:
                log.warning(
                    "session.setting_dropped", session_id=session.id, entry=entry.type, reason=str(exc)
                )
        return [mode_update(session.mode)] if mode_changed else []

    def _restorable_mode(self, session: Session, mode_id: str) -> str:
        if mode_id in UNASKED_MODES:
            log.warning(
                "session.mode_not_restored",
                session_id=session.id,
                mode=mode_id,
                reason="a mode that skips questions is never taken from disk; choose it again",
            )
            return DEFAULT_MODE
        if mode_id not in session.permissions.modes:
            log.warning(
                "session.setting_dropped",
                session_id=session.id,
                entry="mode",
                reason=f"unknown mode {mode_id!r}, or one the settings disable",
            )
            return session.mode
        return mode_id

    async def _announce(self, session: Session) -> None:
        """`config_option_update`: every option with its current value, after any change."""
        await self._notify(
            session, {"sessionUpdate": "config_option_update", "configOptions": self.config_options(session)}
        )

    async def _notify(self, session: Session, update: dict[str, Any]) -> None:
        await self.requester.notify("session/update", {"sessionId": session.id, "update": update})
