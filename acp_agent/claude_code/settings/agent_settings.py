"""What the agent's own configuration takes from the settings files, read once at start-up.

The agent serves every folder an editor opens from one process, with one model client: the
platform Claude runs on, its credentials and the credential helpers are settled before any
project is known. So they come from the process environment and from the files that are the
user's or the administrator's word, never from a project's (highest first):

1. the managed policy (`managed.py`);
2. acp-agent's own `settings.json` in its config dir;
3. the user's `~/.claude/settings.json` (or `$CLAUDE_CONFIG_DIR/settings.json`).

- `env`: merged per variable (the highest file wins each) and laid over the process environment,
  as Claude Code lays it over the shell's (`""` unsets a variable for provider selection). It
  reaches the agent's configuration: the platform's selection (`model/cloud/platforms.py`), its
  credentials (taken out of the environment with the others, `model/sdk.py`) and the agent's own
  `ACP_AGENT_*` settings (`config.py`). `ACP_AGENT_MANAGED_SETTINGS_DIR` and `CLAUDE_CONFIG_DIR`
  are read from the process environment only.
- `model`: the first model of a session when neither `--model`/`ACP_AGENT_MODEL` nor
  `ANTHROPIC_MODEL` chooses one (a session's project files may choose another, `builder.py`).
- `apiKeyHelper`, `awsCredentialExport`, `awsAuthRefresh`: each from the highest of these files
  that names it. A project's are never run: they would run a repository's command to get the
  credential every session of the process uses (named in `/status` instead).

A project's `env` reaches its sessions' hooks and MCP expansions once trusted (`setup.py`), never
this configuration: the variables of it that would (`agent_variable`) are named in `/status`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp_agent.claude_code.settings.managed import ManagedPolicy, read_managed_policy
from acp_agent.claude_code.settings.settings_json import claude_config_dir, read_json_object

if TYPE_CHECKING:
    from acp_agent.claude_code.settings.model_allowlist import ModelAllowlist

__all__ = [
    "HELPER_KEYS",
    "AgentSettings",
    "agent_variable",
    "read_agent_settings",
    "read_start_settings",
    "start_model",
]

HELPER_KEYS = ("apiKeyHelper", "awsAuthRefresh", "awsCredentialExport")
_AGENT_PREFIXES = ("ANTHROPIC_", "CLAUDE_CODE_", "ACP_AGENT_", "AWS_", "GOOGLE_", "VERTEX_REGION_")
_AGENT_NAMES = frozenset({"CLOUD_ML_REGION", "GCLOUD_PROJECT", "CLOUDSDK_CONFIG"})


PINS = tuple(f"ANTHROPIC_DEFAULT_{family}_MODEL" for family in ("OPUS", "SONNET", "HAIKU"))
"""The variables that pin a model family to an id (`model/cloud/platform_ids.py`)."""


def agent_variable(name: str) -> bool:
    """Whether the agent's configuration reads `name`: a platform's selection, region, project,
    endpoint or credentials, a model variable, or one of the agent's own settings."""
    return name in _AGENT_NAMES or name.startswith(_AGENT_PREFIXES)


@dataclass(frozen=True, slots=True)
class AgentSettings:
    """The policy and what the agent's configuration takes from the user's and the managed files."""

    policy: ManagedPolicy
    env: dict[str, str] = field(default_factory=dict)
    env_sources: dict[str, str] = field(default_factory=dict)
    """Where each variable of `env` came from (a file as shown)."""
    model: tuple[str, str] | None = None
    """The `model` setting and its file."""
    helpers: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Each credential helper named: (its command, its file)."""
    warnings: tuple[str, ...] = ()
    model_source: str = "the default"
    """What chose the process's model (`--model`, a variable, a file's `model`, the default)."""
    explicit_model: bool = False
    """Whether `--model`, `ACP_AGENT_MODEL` or `ANTHROPIC_MODEL` chose it: then every session
    uses it, and a project's `model` setting does not."""

    @property
    def allowlist(self) -> ModelAllowlist:
        """The managed `availableModels` (`model_allowlist.py`)."""
        from acp_agent.claude_code.settings.model_allowlist import ModelAllowlist  # not at start-up

        data = self.policy.data
        entries = data.get("availableModels")
        return ModelAllowlist(
            tuple(entries) if isinstance(entries, list) else None,
            data.get("enforceAvailableModels") is True,
            self.policy.shown,
        )

    def environment(self, process: Mapping[str, str]) -> dict[str, str]:
        """`process` with the settings' `env` laid over it, less the family pins the managed
        `availableModels` does not allow (`pins_left_out`): the requests would carry them."""
        merged = {**process, **self.env}
        for name in self.pins_left_out(process):
            del merged[name]
        return merged

    def pins_left_out(self, process: Mapping[str, str]) -> list[str]:
        """Under a managed `availableModels`, the family pins (`ANTHROPIC_DEFAULT_*_MODEL`: a
        request for that family carries the pinned id instead) that the policy's own `env` did
        not set and whose model the list does not allow (an id it cannot read, an ARN, neither)."""
        if "availableModels" not in self.policy.data:
            return []
        merged = {**process, **self.env}
        allowlist = self.allowlist
        return [
            name
            for name in PINS
            if (value := merged.get(name, "").strip())
            and self.env_sources.get(name) != self.policy.shown
            and not allowlist.allows(value)
        ]

    def with_pins_checked(self, process: Mapping[str, str]) -> AgentSettings:
        """These settings with a warning for each pin `environment` leaves out (`/status`)."""
        left = [
            f"{name}: not in the managed availableModels ({self.policy.shown}): not used"
            for name in self.pins_left_out(process)
        ]
        return replace(self, warnings=(*self.warnings, *left)) if left else self

    def helper_settings(self) -> tuple[dict[str, str], str]:
        """The helpers as one settings object, and the files they come from (for messages)."""
        commands = {key: command for key, (command, _) in self.helpers.items()}
        sources = ", ".join(dict.fromkeys(source for _, source in self.helpers.values()))
        return commands, sources

    def describe(self) -> list[str]:
        """`/status`'s lines: where the agent's own configuration came from."""
        lines = []
        if self.env:
            shown = ", ".join(f"{name} ({source})" for name, source in sorted(self.env_sources.items()))
            lines.append(f"Settings env applied to the agent: {shown}")
        if self.helpers:
            named = (f"{key} ({source})" for key, (_, source) in self.helpers.items())
            lines.append("Credential helpers: " + ", ".join(named))

        lines += [f"  - warning: {w}" for w in self.warnings]
        return lines


def read_start_settings() -> AgentSettings:
    """The managed policy (`managed.py`) and the user's own settings files, as the agent reads
    them at start-up, before its configuration."""
    from acp_agent.user_dirs import user_config_dir, user_home

    return read_agent_settings(read_managed_policy(), home=user_home(), config_dir=user_config_dir())


def read_agent_settings(
    policy: ManagedPolicy, *, home: Path | None, config_dir: Path | None
) -> AgentSettings:
    """The settings of `policy` and of the user's own files (`home`'s Claude Code directory, the
    agent's `config_dir`), merged as the module's docstring says; never raises."""
    warnings: list[str] = []
    files: list[tuple[str, dict[str, Any]]] = []
    if policy.data:
        files.append((policy.shown, policy.data))
    user_dir = claude_config_dir(home)
    for path in (
        config_dir / "settings.json" if config_dir is not None else None,
        user_dir / "settings.json" if user_dir is not None else None,
    ):
        if path is not None:
            data = read_json_object(path, _shown(path, home), warnings.append)
            if data is not None:
                files.append((_shown(path, home), data))
    env: dict[str, str] = {}
    sources: dict[str, str] = {}
    model: tuple[str, str] | None = None
    helpers: dict[str, tuple[str, str]] = {}
    for shown, data in reversed(files):  # the lowest first: a higher file replaces its values
        values = data.get("env")
        if isinstance(values, dict):
            for name, value in values.items():
                if isinstance(value, str):
                    env[name], sources[name] = value, shown
        if isinstance(data.get("model"), str) and data["model"].strip():
            model = (data["model"].strip(), shown)
        for key in HELPER_KEYS:
            command = data.get(key)
            if isinstance(command, str) and command.strip():
                helpers[key] = (command, shown)
    return AgentSettings(policy, env, sources, model, helpers, tuple(warnings))


def start_model(
    settings: AgentSettings, *, flag: str | None, env: Mapping[str, str], default: str, checked: bool = True
) -> tuple[str, AgentSettings]:
    """The process's model and `settings` saying what chose it, Claude Code's order: `--model`
    (here also `ACP_AGENT_MODEL`), then `ANTHROPIC_MODEL` (`env`: the process environment with
    the settings' `env` over it), then the `model` setting, then `default`. A model outside the
    managed `availableModels` is replaced by the default (`checked`: false for a replay, which
    reaches no API), with a warning."""
    model, source, explicit = default, "the default", False
    if flag:
        model, source, explicit = flag, "--model", True
    else:
        for name in ("ACP_AGENT_MODEL", "ANTHROPIC_MODEL"):
            if env.get(name, "").strip():
                where = settings.env_sources.get(name)
                model, explicit = env[name].strip(), True
                source = f"{name}" + (f" in the env of {where}" if where else " (environment)")
                break
        else:
            if settings.model is not None:
                from acp_agent.claude_code.settings.model_allowlist import resolve_alias

                model, source = resolve_alias(settings.model[0]), f"model in {settings.model[1]}"
    warnings = list(settings.warnings)
    if checked and "availableModels" in settings.policy.data:  # else every model may be named
        model, warning = settings.allowlist.choose(model, default)
        if warning is not None:
            warnings.append(warning)
            source += " (replaced: not an available model)"
    return model, replace(settings, model_source=source, explicit_model=explicit, warnings=tuple(warnings))


def _shown(path: Path, home: Path | None) -> str:
    if home is not None and path.is_relative_to(home):
        return "~/" + path.relative_to(home).as_posix()
    return str(path)
