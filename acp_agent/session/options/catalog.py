"""The models the process knows and what each accepts: the built-in table, what the Models API said
(asked once, in the background, never ahead of a prompt's first request), and the flags that
override both.

A session's request settings (`RunnerSettings`: model, max_tokens, thinking, effort, context window)
come from here, at creation and on every model or effort change.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio
import structlog

from acp_agent.claude_code.settings.model_allowlist import FAMILY_WORDS, ModelAllowlist
from acp_agent.config import BUILTIN_MODELS, Config
from acp_agent.errors import LimitsError
from acp_agent.model.cloud.platform_ids import anthropic_id
from acp_agent.model.cloud.platforms import Platform
from acp_agent.model.profiles import (
    ModelProfile,
    ProfileError,
    builtin_profile,
    doubtful_figures,
    is_builtin,
    output_config,
    profile_from_api,
    thinking_param,
)
from acp_agent.model.provider import ModelLister
from acp_agent.model.server_tools import WebTools, web_tools
from acp_agent.turn.settings import RunnerSettings

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from acp_agent.model.base import ModelClient


__all__ = ["MAX_MODEL_CHOICES", "MODELS_API_SECONDS", "ModelCatalog", "available_models", "capped_choices"]

log = structlog.get_logger(__name__)

MODELS_API_SECONDS = 15.0
"""How long the background Models API question may take."""
_MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/-]{0,199}")
"""What a model id may look like: Anthropic's (`claude-opus-4-1-20250805`), a gateway's, Bedrock's
(`anthropic.claude-…-v1:0`), Vertex's (`claude-…@20250805`). Not a sentence, not a control character."""
MAX_MODEL_CHOICES = 50
"""At most this many model choices are shown: a listing of 100,000 models made every
`session/new` answer 6 MB."""


def available_models(configured: str, listed: Sequence[str] = ()) -> list[str]:
    """The model choices: the models the API listed (else the built-in list), the ones this agent
    knows first (each group in the API's order, newest first), at most `MAX_MODEL_CHOICES`, the
    configured one always among them (first, when it is not listed)."""
    models = list(dict.fromkeys(listed)) or list(BUILTIN_MODELS)
    models.sort(key=lambda m: not is_builtin(m))  # stable: keeps the API's order
    return capped_choices(configured, models)


def capped_choices(kept: str, models: Sequence[str]) -> list[str]:
    """`models` cut to `MAX_MODEL_CHOICES`, with `kept` among them (first, when it was not)."""
    if kept in models[:MAX_MODEL_CHOICES]:
        return list(models[:MAX_MODEL_CHOICES])
    return [kept, *(m for m in models[: MAX_MODEL_CHOICES - 1] if m != kept)]


class ModelCatalog:
    """Which models exist and what a session's requests carry on each."""

    def __init__(
        self,
        config: Config,
        model: Callable[[], Awaitable[ModelClient]],
        ask_models_api: bool = False,
        before_asking: Callable[[ModelClient], Awaitable[None]] | None = None,
        platform: Platform | None = None,
        allowlist: ModelAllowlist | None = None,
        notes: Sequence[str] = (),
    ) -> None:
        self.config = config
        self.allowlist = allowlist or ModelAllowlist()
        """The managed `availableModels`: a model outside it is never offered nor taken."""
        self.notes = tuple(notes)
        """`/status`'s lines of where the agent's own configuration came from."""
        self.platform = platform or Platform("anthropic", "Anthropic API")
        """Where requests go: without its Models API, the choices come from the configuration."""
        self._model = model
        self._before_asking = before_asking
        """Waited for once the client is built: the question goes out when no prompt waits for
        its first request (`SessionManager.after_first_answer`)."""
        self.model_info: dict[str, dict[str, Any]] = {}
        """What the Models API said of each model (`ModelInfo` as dicts), once it answered."""
        self._ask_models_api = ask_models_api
        """Ask the Models API once credentials exist (never while replaying or recording: the
        cassette holds Messages exchanges only)."""

    def learn(self, task_group: TaskGroup | None) -> None:
        """Ask the Models API, once and in the background, which models exist and what they take.

        Called when a session is created (credentials exist by then). Sessions created after the
        answer use it; a failure leaves the built-in table in charge.
        """
        if not self._ask_models_api or task_group is None:
            return
        self._ask_models_api = False
        task_group.start_soon(self._fetch_models)

    async def _fetch_models(self) -> None:
        try:
            with anyio.fail_after(MODELS_API_SECONDS):
                client = await self._model()
            if self._before_asking is not None:
                await self._before_asking(client)
            with anyio.fail_after(MODELS_API_SECONDS):
                infos = await client.list_models() if isinstance(client, ModelLister) else {}
        except Exception as exc:  # the table covers every built-in model
            log.info("models.unavailable", error=f"{type(exc).__name__}: {exc}"[:300])
            return
        _log_doubtful_figures(infos)
        self.model_info.update(infos)
        log.info("models.listed", models=len(infos))

    def available_models(self) -> list[str]:
        """The model config option's choices: the Models API's active models, else the built-in
        list; the configured model always among them (see `available_models`). Under the managed
        `availableModels`, only the models it allows (the ids it names among them), and the
        configured one (the default, which stays usable as in Claude Code)."""
        listed = [m for m, info in self.model_info.items() if info.get("lifecycle", "active") == "active"]
        if not listed and (not self.platform.features.models_api or self.platform.models.configured):
            listed = self.platform.models.choices()
        allowlist = self.allowlist
        if not allowlist.active:
            return available_models(self.config.model, listed)
        named = [e for e in allowlist.entries or () if e.lower() not in FAMILY_WORDS]
        models = available_models(self.config.model, [*(listed or BUILTIN_MODELS), *named])
        return [m for m in models if m == self.config.model or allowlist.allows(m)]

    def allows(self, model_id: str) -> bool:
        """Whether `model_id` may be chosen (the managed `availableModels`; the configured model,
        the default, always may)."""
        return model_id == self.config.model or self.allowlist.allows(model_id)

    def status(self) -> str:
        """`/status`'s platform lines and where the agent's own configuration came from."""
        return "\n".join([self.platform.status(), *self.notes])

    def named_model(self, wanted: str) -> str | None:
        """The model `wanted` names here (a command's or an agent's `model`): a family word
        (`haiku`, `sonnet`, `opus`, also as `sonnet[1m]`: letters only) is the first offered of
        that family, None when none is; anything else shaped like a model id is that id, as
        written, offered or not.

        The user wrote it: a gateway may serve it, the Models API may not have answered yet (the
        process's first turn) or may not exist, and a model that does not exist is the API's to
        say (its 404 reaches the user)."""
        offered = self.available_models()
        if wanted in offered:
            return wanted
        family = wanted.removesuffix("[1m]")  # Claude Code's 1M-context alias; 1M is the default here
        if family.isalpha():
            return next((m for m in offered if f"-{family.lower()}-" in m), None)
        return wanted if _MODEL_ID.fullmatch(wanted) and self.allows(wanted) else None

    def configured_web(self) -> WebTools:
        """The web choice of `--web` and the domain settings (checked when the config was built)."""
        config = self.config
        return web_tools(
            enabled=config.web, allowed=config.web_allowed_domains, blocked=config.web_blocked_domains
        )

    def web_for(self, overrides: Mapping[str, Any]) -> WebTools:
        """A session's web choice: `_meta["acp-agent"]` `web` (true or false), and
        `webAllowedDomains` / `webBlockedDomains` (lists of domains; either one replaces the
        configured domain rules), over the configuration's.

        Raises:
            LimitsError: a value is invalid (names the field, answered -32602).
        """
        configured = self.configured_web()
        enabled = overrides.get("web", configured.enabled)
        if not isinstance(enabled, bool):
            raise LimitsError("web", "must be true or false")
        keys = ("webAllowedDomains", "webBlockedDomains")
        if not any(key in overrides for key in keys):
            return replace(configured, enabled=enabled)
        try:
            return web_tools(
                enabled=enabled, allowed=overrides.get(keys[0]), blocked=overrides.get(keys[1]), names=keys
            )
        except ValueError as exc:
            field, _, reason = str(exc).partition(": ")
            raise LimitsError(field, reason) from None

    def profile(self, model_id: str) -> ModelProfile:
        """What `model_id` accepts: the built-in table, what the Models API said, the flags."""
        profile = builtin_profile(model_id)
        if not profile.known:  # a platform's id (us.anthropic.…, …@20251001) of a known model
            profile = replace(builtin_profile(anthropic_id(model_id)), id=model_id)
        features = self.platform.features
        if not (features.web_search and features.web_fetch):  # never offered where absent
            profile = replace(
                profile,
                web_search=profile.web_search if features.web_search else None,
                web_fetch=profile.web_fetch if features.web_fetch else None,
            )
        info = self.model_info.get(model_id)
        if info is not None:
            profile = profile_from_api(profile, info)
        if self.config.context_window:
            profile = replace(profile, context_window=self.config.context_window)
        return profile

    def settings_near(self, model_id: str, effort: str | None, base: RunnerSettings) -> RunnerSettings:
        """`settings_for` with the session's effort, or the model's default effort when that model
        does not take it (a command or an agent on another model than the session's)."""
        try:
            return self.settings_for(model_id, effort, base)
        except ProfileError:
            return self.settings_for(model_id, None, base)

    def settings_for(
        self,
        model_id: str,
        effort: str | None,
        base: RunnerSettings | None = None,
        web: WebTools | None = None,
    ) -> RunnerSettings:
        """What a session's requests carry on `model_id`: thinking and effort as it accepts them,
        and the web tools in the versions it takes.

        The web choice (on or off, the domains) is `web`, else `base`'s, else the configuration's.

        Raises:
            ProfileError: the effort (or the configured thinking budget) is refused by the model.
        """
        config = self.config
        profile = self.profile(model_id)
        budget = (
            config.thinking_budget if "enabled" in profile.thinking_types or not profile.known else None
        )  # a budget set for another model is never sent
        chosen = web or (base.web if base is not None else self.configured_web())
        values: dict[str, Any] = {
            "web": replace(chosen, search=profile.web_search, fetch=profile.web_fetch),
            "model": model_id,
            "max_tokens": min(config.max_tokens, profile.max_output),
            "thinking": thinking_param(profile, budget=budget),
            "output_config": output_config(profile, effort=effort),
            "context_window": profile.context_window,
            "profile": profile,
        }
        if base is not None:
            return replace(base, **values)
        return RunnerSettings(
            **values,
            compact_at=config.compact_at,
            on_limit=config.on_limit,
            clear_results_at=config.clear_results_at,
            clear_results_keep=config.clear_results_keep,
        )


def _log_doubtful_figures(infos: dict[str, dict[str, Any]]) -> None:
    """One log line for the figures the Models API gave that are not believed (`profile_from_api`
    ignores them), with a few examples: a hostile listing must not flood stderr."""
    doubtful = [(m, name, info[name]) for m, info in infos.items() for name in doubtful_figures(info)]
    if doubtful:
        examples = [f"{m}: {name}={value!r}"[:120] for m, name, value in doubtful[:3]]
        log.warning("models.figures_ignored", count=len(doubtful), examples=examples)
