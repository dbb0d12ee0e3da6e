"""All settings and their defaults, in one place: flags > environment > defaults.

`Config` is what the process was started with. Its `limits` are the per-turn allowance a session
runs under (`limits.py`), which a session may override through `session/new` `_meta["acp-agent"]`.

Each field that can be set from outside carries one `Setting` (`settings.py`) in its `Annotated`
type: its environment variable and its help. `settings()` binds them to the fields' own names, types
and defaults, which is all the CLI, the environment reading (`Config.from_sources`) and the
configuration page's table need, so no flag name, variable or default is written twice.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from acp_agent.limits import Limits as _Limits  # not re-exported: its home is limits.py
from acp_agent.settings import GROUPS, Setting, declared_in, domain_lists, in_help_order

__all__ = [
    "BUILTIN_MODELS",
    "DEFAULT_MODEL",
    "Config",
    "how_to_set",
    "settings",
]

DEFAULT_MODEL = "claude-sonnet-5-5"
"""The model used when none is configured (docs/decisions.md D2)."""

BUILTIN_MODELS = ("claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5")
"""Models offered when the Models API cannot be asked; a unit test keeps them off the SDK's
deprecation list."""

EFFORTS = ("low", "medium", "high", "xhigh", "max")
LOOP_IDS = ("tools", "verify", "phased")
ON_LIMITS = ("stop", "wrap_up")
CACHE_TTLS = ("5m", "1h")
LOG_LEVELS = ("debug", "info", "warning", "error")
SANDBOX_MODES = ("auto", "off")
SUBAGENT_TOOLS = ("off", "read", "all")


def _one_of(choices: tuple[str, ...]) -> str:
    return f"^({'|'.join(choices)})$"


_LIMITS, _STRATEGY, _SESSIONS, _PROTOCOL = GROUPS[1:]


class Config(BaseModel):
    """How the agent was started. Built once by the CLI from flags, environment and defaults."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    model: Annotated[
        str, Setting("model id, or replay:FILE to serve a recorded cassette", "ACP_AGENT_MODEL")
    ] = DEFAULT_MODEL
    """Model id sent to the Messages API."""
    max_tokens: Annotated[int, Setting("max_tokens per model request", "ACP_AGENT_MAX_TOKENS")] = Field(
        16_000, ge=1
    )
    """max_tokens of each model request (below the SDK's non-streaming guard)."""
    streaming: Annotated[
        bool,
        Setting(
            "stream replies over SSE, or make one non-streaming request per model call",
            "ACP_AGENT_STREAMING",
            kind="both",
            flag="--stream",
        ),
    ] = True
    """Stream replies (SSE) or make one non-streaming request per model call."""
    base_url: Annotated[
        str | None, Setting("Messages API base URL, without /v1", "ANTHROPIC_BASE_URL", unset="the SDK's")
    ] = None
    """Messages API base URL (no /v1); None lets the SDK read ANTHROPIC_BASE_URL."""
    max_retries: Annotated[
        int,
        Setting("retries per model request, only before any output was relayed", "ACP_AGENT_MAX_RETRIES"),
    ] = Field(2, ge=0)
    """Retries of one model request, only while nothing of it was relayed."""
    stall_seconds: Annotated[
        float, Setting("a stream silent this many seconds has stalled", "ACP_AGENT_STALL_SECONDS")
    ] = Field(120.0, gt=0)
    """A stream that yields no event for this long has stalled."""
    request_timeout: Annotated[
        float,
        Setting(
            "read timeout of a non-streaming request in seconds; not retried", "ACP_AGENT_REQUEST_TIMEOUT"
        ),
    ] = Field(600.0, gt=0)
    """Read timeout of a non-streaming request (not retried)."""
    context_window: Annotated[
        int | None,
        Setting(
            "context window for usage_update and compaction",
            "ACP_AGENT_CONTEXT_WINDOW",
            unset="the model's, e.g. 1000000 on the 5.x models",
        ),
    ] = Field(None, ge=1)
    """Context window (usage_update.size, compaction); None → the model's own (its profile)."""
    compact_at: Annotated[
        float,
        Setting(
            "summarise older turns when a request's context passes this fraction of the context "
            "window; 0 = never",
            "ACP_AGENT_COMPACT_AT",
        ),
    ] = Field(0.8, ge=0, le=1)
    """Compact older turns when a request's context passes this fraction of the window (0 = off)."""
    clear_results_at: Annotated[
        int,
        Setting(
            "when a request's context passes this many tokens, old tool results leave the requests "
            "in one step (a note says what each was; the journal keeps them); 0 = never",
            "ACP_AGENT_CLEAR_RESULTS_AT",
            metavar="TOKENS",
        ),
    ] = Field(100_000, ge=0)
    """Clear old tool results from the requests when one passes this many tokens (0 = never)."""
    clear_results_keep: Annotated[
        int,
        Setting(
            "tokens of the latest tool results a clearing keeps (at most half of --clear-results-at)",
            "ACP_AGENT_CLEAR_RESULTS_KEEP",
            metavar="TOKENS",
        ),
    ] = Field(20_000, ge=0)
    """Tokens of the latest tool results a clearing keeps (at most half the trigger)."""
    thinking_budget: Annotated[
        int | None,
        Setting(
            "a thinking budget in tokens (≥ 1024), only for models that take one, such as "
            "claude-haiku-4-5; the 5.x models think adaptively: use --effort",
            "ACP_AGENT_THINKING_BUDGET",
        ),
    ] = Field(None, ge=1024)
    """A thinking budget in tokens, only for models that take one (Haiku 4.5); None: the model's
    own thinking (adaptive on the 5.x models)."""
    effort: Annotated[
        str | None,
        Setting(
            "output_config.effort of every request", "ACP_AGENT_EFFORT", unset="the model's", choices=EFFORTS
        ),
    ] = Field(None, pattern=_one_of(EFFORTS))
    """output_config.effort of every request; None: the model's default."""
    prompt_cache: Annotated[
        bool,
        Setting(
            "mark prompt-cache breakpoints on every request (some gateways reject cache_control)",
            "ACP_AGENT_PROMPT_CACHE",
            kind="on_off",
        ),
    ] = True
    """Mark cache breakpoints on every request (some gateways reject cache_control)."""
    cache_ttl: Annotated[
        str,
        Setting(
            "TTL of the fixed cache breakpoints on tools and system",
            "ACP_AGENT_CACHE_TTL",
            choices=CACHE_TTLS,
        ),
    ] = Field("5m", pattern=_one_of(CACHE_TTLS))
    """TTL of the fixed breakpoints (tools, system); the sliding ones always use 5m."""
    web: Annotated[
        bool,
        Setting(
            "offer the API's web search and web fetch tools to models that have them",
            "ACP_AGENT_WEB",
            kind="on_off",
        ),
    ] = True
    """Offer the web server tools (the model's versions, `model/server_tools.py`)."""
    web_allowed_domains: Annotated[
        str | None,
        Setting(
            "comma-separated domains the web tools may reach, and no others",
            "ACP_AGENT_WEB_ALLOWED_DOMAINS",
            unset="any",
            metavar="DOMAINS",
        ),
    ] = None
    """The web tools' `allowed_domains` (not with `web_blocked_domains`: the API refuses both)."""
    web_blocked_domains: Annotated[
        str | None,
        Setting(
            "comma-separated domains the web tools never reach",
            "ACP_AGENT_WEB_BLOCKED_DOMAINS",
            unset="none",
            metavar="DOMAINS",
        ),
    ] = None
    """The web tools' `blocked_domains`."""
    max_line_bytes: Annotated[
        int, Setting("longest JSON-RPC line accepted, in bytes", "ACP_AGENT_MAX_LINE_BYTES", _PROTOCOL)
    ] = Field(50 * 1024 * 1024, ge=1024)
    """Longest JSON-RPC line accepted on stdin."""
    log_level: Annotated[
        str, Setting("stderr log level", "ACP_AGENT_LOG_LEVEL", _PROTOCOL, choices=LOG_LEVELS)
    ] = "info"
    """Level of the stderr log (an unknown level logs at info)."""
    state_dir: Annotated[
        Path | None,
        Setting(
            "where session journals live",
            "ACP_AGENT_STATE_DIR",
            _SESSIONS,
            unset="the user data dir + /sessions, e.g. ~/.local/share/acp-agent/sessions",
        ),
    ] = None
    """Where session journals live; None → the user data dir (XDG) + /sessions."""
    journal: Annotated[
        bool,
        Setting(
            "keep no session journal (session/load, list, resume, close and delete are then not offered)",
            group=_SESSIONS,
            kind="unset",
            flag="--no-journal",
        ),
    ] = True
    """Keep a journal per session (enables session/load, list, resume, close, delete)."""
    keep_days: Annotated[
        float,
        Setting(
            "remove journals untouched this many days at start-up; 0 = keep them all",
            "ACP_AGENT_KEEP_DAYS",
            _SESSIONS,
        ),
    ] = Field(30, ge=0)
    """Journals untouched this long are removed at start-up (0 keeps them all)."""
    sandbox: Annotated[
        str,
        Setting(
            "auto: run commands in a bubblewrap sandbox where it works (Linux), else unsandboxed "
            "with a notice; off: never (see docs/sandbox.md)",
            "ACP_AGENT_SANDBOX",
            _SESSIONS,
            choices=SANDBOX_MODES,
        ),
    ] = Field("auto", pattern=_one_of(SANDBOX_MODES))
    """auto: commands run under bubblewrap where it works, else unsandboxed (said once); off: never."""
    sandbox_network: Annotated[
        bool,
        Setting(
            "network access of sandboxed commands", "ACP_AGENT_SANDBOX_NETWORK", _SESSIONS, kind="on_off"
        ),
    ] = True
    """Sandboxed commands may use the network (off: a network namespace with only its own loopback)."""
    subagent_tools: Annotated[
        str,
        Setting(
            "the task tool (subagents): read: subagents get the read-only tools; all: also the "
            "tools that edit and run commands, usable in acceptEdits or bypassPermissions mode; "
            "off: no task tool",
            "ACP_AGENT_SUBAGENT_TOOLS",
            _SESSIONS,
            choices=SUBAGENT_TOOLS,
        ),
    ] = Field("read", pattern=_one_of(SUBAGENT_TOOLS))
    """read: subagents get the read-only tools; all: every tool but task, ask_user and
    update_plan (edits and commands only in acceptEdits/bypassPermissions); off: no task tool."""
    loop: Annotated[
        str,
        Setting(
            "tools: the plain tool loop; verify: check each finished attempt and retry on a fail; "
            "phased: plan (read-only) → approve → act → verify",
            "ACP_AGENT_LOOP",
            _STRATEGY,
            choices=LOOP_IDS,
        ),
    ] = "tools"
    """The turn strategy: tools (the plain loop), verify (check and retry), phased (plan → act)."""
    verify_cmd: Annotated[
        str | None,
        Setting(
            'the check for verify/phased: a shell command, exit 0 = pass (e.g. "pytest -q")',
            "ACP_AGENT_VERIFY_CMD",
            _STRATEGY,
            unset="none",
            metavar="CMD",
        ),
    ] = None
    """verify/phased: a shell command whose exit 0 means the work passes (e.g. "pytest -q")."""
    verify_rubric: Annotated[
        str | None,
        Setting(
            "without a command: the rubric a model judge scores the work against",
            "ACP_AGENT_VERIFY_RUBRIC",
            _STRATEGY,
            unset="none",
            metavar="TEXT",
        ),
    ] = None
    """verify/phased without a command: the rubric a model judge scores the work against."""
    verify_threshold: Annotated[
        float, Setting("the judge's score needed to pass", "ACP_AGENT_VERIFY_THRESHOLD", _STRATEGY)
    ] = Field(0.8, ge=0, le=1)
    """The judge's score needed to pass (with its `passed` verdict)."""
    max_trials: Annotated[
        int,
        Setting(
            "failed verifications before the turn ends with limit maxTrials",
            "ACP_AGENT_MAX_TRIALS",
            _STRATEGY,
        ),
    ] = Field(3, ge=1)
    """Failed verifications allowed before the turn ends with limit maxTrials."""
    on_limit: Annotated[
        str,
        Setting(
            "stop: a budget ends the turn as it is; wrap_up: the last allowed request has no tools "
            "and asks for a summary",
            "ACP_AGENT_ON_LIMIT",
            _LIMITS,
            choices=ON_LIMITS,
        ),
    ] = Field("stop", pattern=_one_of(ON_LIMITS))
    """stop: a budget ends the turn as it is; wrap_up: the last allowed request asks for a summary."""
    prices: Annotated[
        Path | None,
        Setting(
            "JSON price table (USD per million tokens by model) over the built-in one",
            "ACP_AGENT_PRICES",
            _LIMITS,
            unset="the built-in table",
            metavar="FILE",
        ),
    ] = None
    """JSON price table (USD per million tokens by model) over the built-in one."""
    record: Annotated[
        Path | None,
        Setting(
            "save every Messages API exchange to this JSON-lines cassette (replay it with "
            "--model replay:FILE)",
            metavar="FILE",
        ),
    ] = None
    """Save every Messages API exchange of the run to this JSON-lines cassette."""
    replay_strict: Annotated[
        bool,
        Setting(
            "with --model replay:FILE, fail when the model, the tool names or the last user message "
            "differ from the recording",
            kind="set",
        ),
    ] = False
    """With --model replay:FILE, also compare model, tool names and last user message."""
    limits: _Limits = _Limits()
    """Per-turn budgets; sessions may override them."""

    @model_validator(mode="after")
    def _one_domain_list(self) -> Config:
        domain_lists(
            self.web_allowed_domains,
            self.web_blocked_domains,
            ("--web-allowed-domains", "--web-blocked-domains"),
        )
        return self

    @classmethod
    def from_sources(cls, flags: Mapping[str, Any], env: Mapping[str, str] | None = None) -> Config:
        """Flags (by setting name; None = not given) over environment over defaults.

        The model also comes from Claude Code's `ANTHROPIC_MODEL` when neither `--model` nor
        `ACP_AGENT_MODEL` gives it.

        Raises:
            ValueError: an environment value does not parse; the message names the variable.
        """
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        limits: dict[str, Any] = {}
        for setting in settings():
            raw = flags.get(setting.name)
            if raw is None and setting.env is not None and env.get(setting.env, "") != "":
                raw = setting.parse(env[setting.env])
            if raw is not None:
                (limits if setting.per_turn else values)[setting.name] = raw
        if limits:
            values["limits"] = _Limits(**limits)
        if "model" not in values and env.get("ANTHROPIC_MODEL", "").strip():
            values["model"] = env["ANTHROPIC_MODEL"].strip()
        return cls(**values)


@functools.cache
def settings() -> tuple[Setting, ...]:
    """Every setting of `Config` and `Limits`, bound to its field, by group then field order.

    Built on first use (the CLI's, or the environment's reading), not at import.
    """
    return in_help_order([*declared_in(_Limits, per_turn=True), *declared_in(Config)])


def how_to_set(name: str) -> str:
    """`--flag / ENV_VAR` of one setting, for messages that tell the user what to change."""
    setting = next(s for s in settings() if s.name == name)
    return f"{setting.flag_name} / {setting.env}" if setting.env else setting.flag_name
