"""Which platform serves Claude, chosen from environment variables as Claude Code chooses it.

`select_platform(env)` reads one mapping: the process environment (what the editor's `env` for the
agent gives) with the `env` of the managed policy and the user's own settings files laid over it
(`app.py`, `claude_code/settings/agent_settings.py`; never a project's).

It reads no secret and imports nothing heavy: the client for the chosen platform, and its SDK
extras (botocore, google-auth), are built and imported late (`platform_clients.py`).

The selectors, in the order they win when more than one is set (Claude Code documents Bedrock and
Foundry above Claude Platform on AWS, and no order among the others; the rest is ours, and the
losers are named in `/status`): `CLAUDE_CODE_USE_BEDROCK`, `CLAUDE_CODE_USE_VERTEX`,
`CLAUDE_CODE_USE_FOUNDRY`, `CLAUDE_CODE_USE_ANTHROPIC_AWS`,
`CLAUDE_CODE_USE_MANTLE`. None set: the Anthropic API, directly or through a gateway
(`ANTHROPIC_BASE_URL`). An empty value counts as unset.

What a platform lacks is in its `Features`: left out of every request and named in `/status`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from acp_agent.model.cloud.cloud_config import (
    aws_profile_region,
    credentials_file_project,
    gcloud_project,
    plausible_region,
)
from acp_agent.model.cloud.platform_ids import ModelIds, model_ids

__all__ = [
    "ALWAYS_SECRET",
    "Features",
    "Platform",
    "Sourced",
    "custom_headers",
    "is_set",
    "select_platform",
]

ALWAYS_SECRET = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_CUSTOM_HEADERS",
    "AWS_BEARER_TOKEN_BEDROCK",
    "ANTHROPIC_AWS_API_KEY",
    "ANTHROPIC_FOUNDRY_API_KEY",
    "ANTHROPIC_FOUNDRY_AUTH_TOKEN",
)
"""Credentials only a Claude client reads: taken out of the environment whatever the platform
(`model/sdk.py:take_env_keys`). `ANTHROPIC_CUSTOM_HEADERS` counts: a gateway's token travels there."""

AWS_SECRETS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
"""The ambient AWS keys: taken only when an AWS platform uses them (else they are the user's)."""
GOOGLE_SECRETS = ("GOOGLE_APPLICATION_CREDENTIALS",)
"""The Google credentials file's path: taken (and the file hidden) only when Vertex uses it."""

_TRUE = frozenset({"1", "true", "yes", "on"})

REGIONAL_PREMIUM = 1.1


def is_set(env: Mapping[str, str], name: str) -> bool:
    """A selector or flag variable: `1`, `true`, `yes` or `on` (any case); empty is unset."""
    return env.get(name, "").strip().lower() in _TRUE


@dataclass(frozen=True, slots=True)
class Sourced:
    """A value and where it came from (a variable's name, a file, or "default")."""

    value: str
    source: str

    def __str__(self) -> str:
        return f"{self.value} (from {self.source})"


@dataclass(frozen=True, slots=True)
class Features:
    """What a platform offers of what the agent uses; what it lacks is never sent."""

    models_api: bool = True
    """`GET /v1/models`: else the model choices come from the configuration."""
    count_tokens: bool = True
    web_search: bool = True
    web_fetch: bool = True
    diagnostics: bool = True
    """The first-party `diagnostics` request field (the cache-miss reason)."""

    def lacking(self) -> list[str]:
        """What is not available, in words for `/status`."""
        names = {
            "models_api": "the Models API (model choices come from the configuration)",
            "count_tokens": "token counting",
            "web_search": "web search",
            "web_fetch": "web fetch",
            "diagnostics": "cache diagnostics",
        }
        return [text for name, text in names.items() if not getattr(self, name)]


FIRST_PARTY = Features()
BEDROCK = Features(models_api=False, count_tokens=False, web_search=False, web_fetch=False, diagnostics=False)
MANTLE = Features(models_api=False, web_search=False, web_fetch=False, diagnostics=False)
VERTEX = Features(models_api=False, web_fetch=False, diagnostics=False)
"""Vertex has web search (Claude 4+); its server-side web fetch is not documented."""
FOUNDRY = Features(models_api=False, web_search=False, web_fetch=False, diagnostics=False)
"""Foundry's "hosted on Azure" deployments have no server tools, and which kind a resource is
cannot be told from here: none are offered."""
AWS = Features(diagnostics=False)
"""Claude Platform on AWS: the Claude API, Models API included."""


@dataclass(frozen=True, slots=True)
class Platform:
    """The platform chosen and everything its client needs but the secrets."""

    name: str
    """anthropic, bedrock, mantle, aws, vertex or foundry."""
    label: str
    selector: str | None = None
    features: Features = FIRST_PARTY
    region: Sourced | None = None
    project: Sourced | None = None
    resource: Sourced | None = None
    """Foundry's resource; on AWS, the workspace."""
    base_url: Sourced | None = None
    skip_auth: bool = False
    credential: str = ""
    """How requests authenticate, in words (never the value)."""
    secrets: tuple[str, ...] = ALWAYS_SECRET
    """The variables taken out of the environment at start-up (`model/sdk.py`)."""
    secret_files: tuple[Path, ...] = ()
    """Credential files no tool or command may read (`tools/hidden.py`)."""
    profile: str | None = None
    """The AWS profile (`AWS_PROFILE`), when one is named."""
    models: ModelIds = field(default_factory=lambda: model_ids("anthropic", {}))
    problem: str | None = None
    """Why no request can succeed as configured (said at the first request and in `/status`)."""
    ignored: tuple[str, ...] = ()
    """Other selectors that were set too, and lost."""
    settings: Mapping[str, str] = field(default_factory=dict)
    """The non-secret variables the client reads (base URLs, tiers, guards)."""

    @property
    def first_party(self) -> bool:
        return self.name == "anthropic"

    @property
    def price_factor(self) -> float:
        """The built-in prices times this: Bedrock's regional inference profiles and Vertex's
        regional endpoints cost 10% more than the global ones (Anthropic's pricing page, for the
        4.5 models on); the Anthropic API, AWS, Mantle and Foundry bill the list prices."""
        if self.name == "bedrock" and self.models.prefix != "global":
            return REGIONAL_PREMIUM
        if self.name == "vertex" and self.region is not None and self.region.value != "global":
            return REGIONAL_PREMIUM
        return 1.0

    def status(self) -> str:
        """`/status`'s lines: the platform, where each value came from, what it lacks."""
        parts = [self.label + (f" ({self.selector})" if self.selector else "")]
        for what, value in (
            ("region", self.region),
            ("project", self.project),
            ("workspace" if self.name == "aws" else "resource", self.resource),
            ("base URL", self.base_url),
        ):
            if value is not None:
                parts.append(f"{what} {value}")
        if self.profile:
            parts.append(f"AWS profile {self.profile}")
        lines = [f"Platform: {', '.join(parts)}"]
        if self.credential:
            lines.append(f"Credentials: {self.credential}")
        lines.extend(self.models.status_lines())
        lacking = self.features.lacking()
        if lacking:
            lines.append(f"Not available on this platform: {', '.join(lacking)}")
        if self.ignored:
            lines.append(f"Also set, and ignored: {', '.join(self.ignored)}")
        if self.price_factor != 1:
            lines.append(f"Prices: the list prices +{self.price_factor - 1:.0%} (a regional endpoint)")
        if self.problem:
            lines.append(f"Problem: {self.problem}")
        return "\n".join(lines)


_SELECTORS = (
    ("CLAUDE_CODE_USE_BEDROCK", "bedrock"),
    ("CLAUDE_CODE_USE_VERTEX", "vertex"),
    ("CLAUDE_CODE_USE_FOUNDRY", "foundry"),
    ("CLAUDE_CODE_USE_ANTHROPIC_AWS", "aws"),
    ("CLAUDE_CODE_USE_MANTLE", "mantle"),
)


def select_platform(env: Mapping[str, str]) -> Platform:
    """The platform `env` chooses, with its settings and their sources; never raises (a missing
    value is the platform's `problem`)."""
    chosen = [(var, name) for var, name in _SELECTORS if is_set(env, var)]
    if not chosen:
        return _anthropic(env)
    selector, name = chosen[0]
    ignored = tuple(var for var, _ in chosen[1:])
    build = {"bedrock": _bedrock, "mantle": _mantle, "aws": _aws, "vertex": _vertex, "foundry": _foundry}[
        name
    ]
    platform = build(env)
    return _with(platform, selector=selector, ignored=ignored)


def _with(platform: Platform, **changes: object) -> Platform:
    from dataclasses import replace

    return replace(platform, **changes)  # type: ignore[arg-type]


def _value(env: Mapping[str, str], *names: str) -> Sourced | None:
    for name in names:
        value = env.get(name, "").strip()
        if value:
            return Sourced(value, name)
    return None


def custom_headers(env: Mapping[str, str]) -> dict[str, str]:
    """`ANTHROPIC_CUSTOM_HEADERS`: `Name: value` lines, as the SDK and Claude Code read them."""
    headers: dict[str, str] = {}
    for line in env.get("ANTHROPIC_CUSTOM_HEADERS", "").split("\n"):
        name, colon, value = line.partition(":")
        if colon and name.strip():
            headers[name.strip()] = value.strip()
    return headers


def _settings(env: Mapping[str, str], *names: str) -> dict[str, str]:
    return {name: env[name] for name in names if env.get(name, "").strip()}


# ── the Anthropic API (directly or through a gateway) ─────────────────────────────────────────
def _anthropic(env: Mapping[str, str]) -> Platform:
    base = _value(env, "ANTHROPIC_BASE_URL")
    if env.get("ANTHROPIC_AUTH_TOKEN"):
        credential = "ANTHROPIC_AUTH_TOKEN (Bearer)"
    elif env.get("ANTHROPIC_API_KEY"):
        credential = "ANTHROPIC_API_KEY"
    else:
        credential = "the stored key, apiKeyHelper or the SDK's profile"
    return Platform(
        "anthropic",
        "Anthropic API" if base is None else "Anthropic API through a gateway",
        base_url=base,
        credential=credential,
        models=model_ids("anthropic", env),
        settings=_settings(env, "CLAUDE_CODE_API_KEY_HELPER_TTL_MS"),
    )


# ── AWS: Bedrock, Mantle, Claude Platform on AWS ──────────────────────────────────────────────
def _aws_region(env: Mapping[str, str], profile: str | None) -> Sourced:
    """Claude Code's order: `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's `region` (the
    credentials file, then the config file), then us-east-1. A value with `/`, `.` or a space
    counts as unset."""
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        value = env.get(name, "").strip()
        if value and plausible_region(value):
            return Sourced(value, name)
    found = aws_profile_region(env, profile)
    return Sourced(*found) if found else Sourced("us-east-1", "default")


def _aws_credential(
    env: Mapping[str, str], token_var: str, profile: str | None
) -> tuple[str, tuple[str, ...]]:
    """How an AWS platform signs, and which variables it takes out of the environment."""
    if env.get(token_var):
        return f"{token_var} (Bearer)", ALWAYS_SECRET
    if env.get("AWS_ACCESS_KEY_ID") and env.get("AWS_SECRET_ACCESS_KEY"):
        how = "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY" + (
            " / AWS_SESSION_TOKEN" if env.get("AWS_SESSION_TOKEN") else ""
        )
        return f"SigV4 with {how}", ALWAYS_SECRET + AWS_SECRETS
    source = f"profile {profile}" if profile else "the default chain"
    return f"SigV4 with the AWS credentials of {source} (or awsCredentialExport)", ALWAYS_SECRET + AWS_SECRETS


def _bedrock(env: Mapping[str, str]) -> Platform:
    profile = env.get("AWS_PROFILE", "").strip() or None
    region = _aws_region(env, profile)
    skip = is_set(env, "CLAUDE_CODE_SKIP_BEDROCK_AUTH")
    credential, secrets = _aws_credential(env, "AWS_BEARER_TOKEN_BEDROCK", profile)
    if skip:
        credential = "none sent (CLAUDE_CODE_SKIP_BEDROCK_AUTH)" + (
            ", ANTHROPIC_AUTH_TOKEN to the gateway" if env.get("ANTHROPIC_AUTH_TOKEN") else ""
        )
    return Platform(
        "bedrock",
        "Amazon Bedrock",
        features=BEDROCK,
        region=region,
        base_url=_value(env, "ANTHROPIC_BEDROCK_BASE_URL"),
        skip_auth=skip,
        credential=credential,
        secrets=secrets,
        profile=profile,
        models=model_ids("bedrock", env, region=region.value),
        settings=_settings(
            env,
            "ANTHROPIC_BEDROCK_SERVICE_TIER",
            "CLAUDE_CODE_DISABLE_BEDROCK_CONTENT_TYPE_GUARD",
        ),
    )


def _mantle(env: Mapping[str, str]) -> Platform:
    profile = env.get("AWS_PROFILE", "").strip() or None
    region = _aws_region(env, profile)
    skip = is_set(env, "CLAUDE_CODE_SKIP_MANTLE_AUTH")
    credential, secrets = _aws_credential(env, "AWS_BEARER_TOKEN_BEDROCK", profile)
    if skip:
        credential = "none sent (CLAUDE_CODE_SKIP_MANTLE_AUTH)"
    return Platform(
        "mantle",
        "Amazon Bedrock (Mantle)",
        features=MANTLE,
        region=region,
        base_url=_value(env, "ANTHROPIC_BEDROCK_MANTLE_BASE_URL"),
        skip_auth=skip,
        credential=credential,
        secrets=secrets,
        profile=profile,
        models=model_ids("mantle", env, region=region.value),
    )


def _aws(env: Mapping[str, str]) -> Platform:
    profile = env.get("AWS_PROFILE", "").strip() or None
    region = _aws_region(env, profile)
    skip = is_set(env, "CLAUDE_CODE_SKIP_ANTHROPIC_AWS_AUTH")
    credential, secrets = _aws_credential(env, "ANTHROPIC_AWS_API_KEY", profile)
    workspace = _value(env, "ANTHROPIC_AWS_WORKSPACE_ID")
    problem = None
    if skip:
        credential = "none sent (CLAUDE_CODE_SKIP_ANTHROPIC_AWS_AUTH)" + (
            ", ANTHROPIC_AUTH_TOKEN to the gateway" if env.get("ANTHROPIC_AUTH_TOKEN") else ""
        )
    elif workspace is None:
        problem = "Claude Platform on AWS needs a workspace: set ANTHROPIC_AWS_WORKSPACE_ID"
    return Platform(
        "aws",
        "Claude Platform on AWS",
        features=AWS,
        region=region,
        resource=workspace,
        base_url=_value(env, "ANTHROPIC_AWS_BASE_URL"),
        skip_auth=skip,
        credential=credential,
        secrets=secrets,
        profile=profile,
        models=model_ids("aws", env),
        problem=problem,
    )


# ── Google Cloud's Vertex AI ──────────────────────────────────────────────────────────────────
def _vertex(env: Mapping[str, str]) -> Platform:
    region = _value(env, "CLOUD_ML_REGION")
    credentials_file = env.get("GOOGLE_APPLICATION_CREDENTIALS", "").strip()
    project = _vertex_project(env, credentials_file)
    skip = is_set(env, "CLAUDE_CODE_SKIP_VERTEX_AUTH")
    problems = []
    if region is None:
        problems.append("set CLOUD_ML_REGION (global, us, eu or a region such as us-east5)")
    if project is None:
        problems.append(
            "set ANTHROPIC_VERTEX_PROJECT_ID (or GOOGLE_CLOUD_PROJECT) to your Google Cloud project"
        )
    home = env.get("HOME", "")
    gcloud = env.get("CLOUDSDK_CONFIG") or (f"{home}/.config/gcloud" if home else "")  # google-auth's order
    adc = Path(gcloud) / "application_default_credentials.json" if gcloud else None
    files = tuple(p for p in (Path(credentials_file) if credentials_file else None, adc) if p is not None)
    if skip:
        credential = "none sent (CLAUDE_CODE_SKIP_VERTEX_AUTH)" + (
            ", ANTHROPIC_AUTH_TOKEN to the gateway" if env.get("ANTHROPIC_AUTH_TOKEN") else ""
        )
    elif credentials_file:
        credential = "the Google credentials file of GOOGLE_APPLICATION_CREDENTIALS"
    else:
        credential = (
            "Application Default Credentials (gcloud auth application-default login, or the metadata server)"
        )
    return Platform(
        "vertex",
        "Google Vertex AI",
        features=VERTEX,
        region=region,
        project=project,
        base_url=_value(env, "ANTHROPIC_VERTEX_BASE_URL"),
        skip_auth=skip,
        credential=credential,
        secrets=ALWAYS_SECRET + GOOGLE_SECRETS,
        secret_files=files,
        models=model_ids("vertex", env, region=region.value if region else ""),
        problem=f"Vertex AI: {'; '.join(problems)}" if problems else None,
    )


def _vertex_project(env: Mapping[str, str], credentials_file: str) -> Sourced | None:
    """Claude Code's order: `GCLOUD_PROJECT`, `GOOGLE_CLOUD_PROJECT`, the credentials file's
    project, then `ANTHROPIC_VERTEX_PROJECT_ID`, then gcloud's configured project."""
    found = _value(env, "GCLOUD_PROJECT", "GOOGLE_CLOUD_PROJECT")
    if found is not None:
        return found
    if credentials_file and (project := credentials_file_project(Path(credentials_file))):
        return Sourced(project, "GOOGLE_APPLICATION_CREDENTIALS's file")
    found = _value(env, "ANTHROPIC_VERTEX_PROJECT_ID")
    if found is not None:
        return found
    project = gcloud_project(env)
    return Sourced(project, "gcloud's configuration") if project else None


# ── Microsoft Foundry ─────────────────────────────────────────────────────────────────────────
def _foundry(env: Mapping[str, str]) -> Platform:
    base = _value(env, "ANTHROPIC_FOUNDRY_BASE_URL")
    resource = _value(env, "ANTHROPIC_FOUNDRY_RESOURCE")
    skip = is_set(env, "CLAUDE_CODE_SKIP_FOUNDRY_AUTH")
    problem = None
    if base is None and resource is None:
        problem = "Microsoft Foundry: set ANTHROPIC_FOUNDRY_RESOURCE (or ANTHROPIC_FOUNDRY_BASE_URL)"
    elif base is None and resource is not None:
        base = Sourced(
            f"https://{resource.value}.services.ai.azure.com/anthropic/", "ANTHROPIC_FOUNDRY_RESOURCE"
        )
    if env.get("ANTHROPIC_FOUNDRY_AUTH_TOKEN"):
        credential = "ANTHROPIC_FOUNDRY_AUTH_TOKEN (Bearer)"
    elif env.get("ANTHROPIC_FOUNDRY_API_KEY"):
        credential = "ANTHROPIC_FOUNDRY_API_KEY"
    elif skip:
        credential = (
            "none sent (CLAUDE_CODE_SKIP_FOUNDRY_AUTH): ANTHROPIC_CUSTOM_HEADERS' Authorization, if any"
        )
    else:
        credential = "Microsoft Entra ID (the Azure default credential chain)"
    return Platform(
        "foundry",
        "Microsoft Foundry",
        features=FOUNDRY,
        resource=resource,
        base_url=base,
        skip_auth=skip
        and not (env.get("ANTHROPIC_FOUNDRY_AUTH_TOKEN") or env.get("ANTHROPIC_FOUNDRY_API_KEY")),
        credential=credential,
        models=model_ids("foundry", env),
        problem=problem,
    )


def environment() -> Mapping[str, str]:
    """The process environment, the one source today (a settings `env` may be laid over it later)."""
    return os.environ
