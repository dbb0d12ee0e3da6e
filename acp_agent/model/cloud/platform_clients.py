"""The SDK client of the chosen platform, built with its credentials, and rebuilt when they change.

The credentials were taken out of the environment at start-up (`model/sdk.py:take_env_keys`), so
every client is given them explicitly; nothing here lets the SDK or boto3 read a secret from the
environment. A platform's own packages (boto3/botocore, google-auth, azure-identity) are imported
here, when its client is first built in the warm-up thread, never at start-up; a missing one
is a message naming the extra to install.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import structlog

from acp_agent.errors import AuthRequired, ModelUnavailable
from acp_agent.model.cloud.credential_helpers import (
    EXPORT_TTL,
    REFRESH_SECONDS,
    AwsKeys,
    CachedOutput,
    Helpers,
    api_key_ttl,
    aws_keys_from_export,
    run_helper,
)
from acp_agent.model.cloud.platforms import Platform, custom_headers
from acp_agent.model.sdk import env_key

__all__ = ["EXTRAS", "ClientMaker"]

log = structlog.get_logger(__name__)

EXTRAS = {
    "bedrock": "bedrock",
    "mantle": "bedrock",
    "aws": "bedrock",
    "vertex": "vertex",
    "foundry": "foundry",
}
"""The `governed-acp-agent[...]` extra each platform's client needs."""

GOOGLE_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
AZURE_SCOPE = "https://ai.azure.com/.default"

_SIGN_IN_ERRORS = (
    "TokenRetrievalError",
    "SSOTokenLoadError",
    "UnauthorizedSSOTokenError",
    "NoCredentialsError",
    "PartialCredentialsError",
    "CredentialRetrievalError",
    "ProfileNotFound",
    "RefreshError",
    "DefaultCredentialsError",
    "ClientAuthenticationError",
    "CredentialUnavailableError",
)
"""Exceptions the platforms' auth libraries raise while a request is signed (botocore,
google-auth, azure-identity), told apart by name: none of them is imported to check."""


class ClientMaker:
    """Builds the SDK client for one platform and knows when its credentials must be asked again."""

    def __init__(self, platform: Platform, helpers: Callable[[], Helpers] | None = None) -> None:
        self.platform = platform
        self._load_helpers = helpers
        self._helpers: Helpers | None = None
        self._lock = threading.Lock()
        self._api_key: CachedOutput | None = None
        self._aws_export: CachedOutput | None = None
        self._secrets: list[str] = []

    def helpers(self) -> Helpers:
        """The user's helper settings, read once (on the first build, in the warm-up thread)."""
        with self._lock:
            if self._helpers is None:
                try:
                    self._helpers = self._load_helpers() if self._load_helpers else Helpers()
                except Exception as exc:  # an unreadable settings file is no reason to fail
                    log.warning("model.helpers_unread", error=type(exc).__name__)
                    self._helpers = Helpers()
                if self._helpers.api_key_helper:
                    command = self._helpers.api_key_helper
                    ttl = api_key_ttl(self.platform.settings)
                    self._api_key = CachedOutput(lambda: (run_helper("apiKeyHelper", command), ttl))
                if self._helpers.aws_credential_export and self.platform.name in ("bedrock", "mantle", "aws"):
                    export = self._helpers.aws_credential_export
                    self._aws_export = CachedOutput(lambda: _export(export))
            return self._helpers

    def secrets(self) -> list[str]:
        """What the helpers printed so far (for redaction; never logged)."""
        return list(self._secrets)

    def stale(self) -> bool:
        """A helper's output has had its time: the client must be built again."""
        return any(c is not None and c.runs and c.value is None for c in (self._api_key, self._aws_export))

    def refresh_after_refusal(self) -> bool:
        """The API refused the credentials (401, an expired AWS login): ask the helpers again.
        True when something was renewed (build the client again and retry once). Blocking."""
        helpers = self.helpers()
        renewed = False
        for cache in (self._api_key, self._aws_export):
            if cache is not None:
                cache.expire()
                renewed = True
        if helpers.aws_auth_refresh and self.platform.name in ("bedrock", "mantle", "aws"):
            run_helper("awsAuthRefresh", helpers.aws_auth_refresh, timeout=REFRESH_SECONDS)
            renewed = True
        return renewed

    def sign_in_problem(self, exc: BaseException) -> str | None:
        """What a non-API exception raised while a request was prepared means, when it is the
        platform's sign-in failing (an expired AWS SSO login, no Google credentials), else None."""
        name = type(exc).__name__
        text = str(exc)
        if name not in _SIGN_IN_ERRORS and not text.startswith("Could not resolve"):
            return None
        where = self.platform.label
        if self.platform.name in ("bedrock", "mantle", "aws"):
            profile = self.platform.profile
            login = f"aws sso login --profile {profile}" if profile else "aws sso login"
            if "SSO" in name or "sso" in text.lower() or "token" in text.lower():
                return (
                    f"{where}: the AWS SSO login has expired or is missing: run `{login}` "
                    "(or set awsAuthRefresh)"
                )
            return (
                f"{where}: no AWS credentials were found ({name}): set AWS_PROFILE, run `{login}`, "
                "or set awsCredentialExport"
            )
        if self.platform.name == "vertex":
            return (
                f"{where}: no usable Google credentials ({name}): run "
                "`gcloud auth application-default login` "
                "or set GOOGLE_APPLICATION_CREDENTIALS to a service account file"
            )
        return f"{where}: sign-in failed ({name}): run `az login`, or set ANTHROPIC_FOUNDRY_API_KEY"

    # ── building ──────────────────────────────────────────────────────────────────────────────
    def build(self, *, api_key: str | None, base_url: str | None, timeout: float, http_client: Any) -> Any:
        """The SDK client for the platform (max_retries 0: retries are ours).

        Raises:
            ModelUnavailable: the platform is misconfigured, or its extra is not installed.
            AuthRequired: no credentials, or a helper failed.
        """
        platform = self.platform
        if platform.problem:
            raise ModelUnavailable(platform.problem)
        self.helpers()
        common: dict[str, Any] = {"max_retries": 0, "timeout": timeout, "http_client": http_client}
        headers = custom_headers({"ANTHROPIC_CUSTOM_HEADERS": env_key("ANTHROPIC_CUSTOM_HEADERS") or ""})
        try:
            import anthropic

            builder = getattr(self, f"_{platform.name}")
            client = builder(anthropic, headers, common, api_key=api_key, base_url=base_url)
        except ImportError as exc:
            extra = EXTRAS.get(platform.name, platform.name)
            raise ModelUnavailable(
                f"{platform.label} needs packages that are not installed "
                f"({getattr(exc, 'name', None) or exc}): "
                f"pip install 'governed-acp-agent[{extra}]'"
            ) from None
        except (AuthRequired, ModelUnavailable):
            raise
        except (ValueError, TypeError, anthropic.AnthropicError) as exc:
            raise AuthRequired(self.sign_in_problem(exc) or f"{platform.label}: {exc}") from None
        except Exception as exc:
            problem = self.sign_in_problem(exc)
            if problem is None:
                raise
            raise AuthRequired(problem) from None
        return client

    def _anthropic(
        self,
        sdk: Any,
        headers: dict[str, str],
        common: dict[str, Any],
        *,
        api_key: str | None,
        base_url: str | None,
    ) -> Any:
        """The Anthropic API, or a gateway: a key, else ANTHROPIC_AUTH_TOKEN, else apiKeyHelper
        (sent as both `x-api-key` and Bearer, as Claude Code sends it)."""
        api_key = api_key or env_key("ANTHROPIC_API_KEY")
        auth_token = None if api_key else env_key("ANTHROPIC_AUTH_TOKEN")
        if not (api_key or auth_token) and self._api_key is not None:
            api_key = self._remember(self._api_key.get())
            headers = {**headers, "X-Api-Key": api_key}
        return sdk.AsyncAnthropic(
            api_key=api_key,
            auth_token=auth_token,
            base_url=base_url,
            default_headers=headers or None,
            **common,
        )

    def _aws_keys(self) -> dict[str, Any]:
        """SigV4 keys: awsCredentialExport's, else the ones taken from the environment, else the
        profile (SSO included) for boto3 to resolve; a bearer key when one is set."""
        if self._aws_export is not None:
            keys: AwsKeys = aws_keys_from_export(self._remember(self._aws_export.get()))
            for secret in keys.secrets():
                self._remember(secret)
            return {
                "aws_access_key": keys.access_key,
                "aws_secret_key": keys.secret_key,
                "aws_session_token": keys.session_token,
            }
        access, key = env_key("AWS_ACCESS_KEY_ID"), env_key("AWS_SECRET_ACCESS_KEY")
        if access and key:
            return {
                "aws_access_key": access,
                "aws_secret_key": key,
                "aws_session_token": env_key("AWS_SESSION_TOKEN"),
            }
        return {"aws_profile": self.platform.profile} if self.platform.profile else {}

    def _region(self) -> str:
        assert self.platform.region is not None
        return self.platform.region.value

    def _base(self) -> str | None:
        return self.platform.base_url.value if self.platform.base_url else None

    def _bedrock(self, sdk: Any, headers: dict[str, str], common: dict[str, Any], **_: Any) -> Any:
        tier = self.platform.settings.get("ANTHROPIC_BEDROCK_SERVICE_TIER")
        if tier:
            headers = {**headers, "X-Amzn-Bedrock-Service-Tier": tier}
        bearer = env_key("AWS_BEARER_TOKEN_BEDROCK")
        auth: dict[str, Any] = {"api_key": bearer} if bearer else self._aws_keys()
        cls = sdk.AsyncAnthropicBedrock
        if self.platform.skip_auth:
            gateway = env_key("ANTHROPIC_AUTH_TOKEN")
            auth = {"api_key": gateway} if gateway else {}
            cls = cls if gateway else _unsigned(cls)
        return cls(
            aws_region=self._region(),
            base_url=self._base(),
            default_headers=headers or None,
            **auth,
            **common,
        )

    def _mantle(self, sdk: Any, headers: dict[str, str], common: dict[str, Any], **_: Any) -> Any:
        bearer = env_key("AWS_BEARER_TOKEN_BEDROCK") or env_key("ANTHROPIC_AWS_API_KEY")
        auth: dict[str, Any] = {"api_key": bearer} if bearer else self._aws_keys()
        return sdk.AsyncAnthropicBedrockMantle(
            aws_region=self._region(),
            base_url=self._base(),
            skip_auth=self.platform.skip_auth,
            default_headers=headers or None,
            **({} if self.platform.skip_auth else auth),
            **common,
        )

    def _aws(self, sdk: Any, headers: dict[str, str], common: dict[str, Any], **_: Any) -> Any:
        bearer = env_key("ANTHROPIC_AWS_API_KEY")
        auth: dict[str, Any] = {"api_key": bearer} if bearer else self._aws_keys()
        if self.platform.skip_auth:
            gateway = env_key("ANTHROPIC_AUTH_TOKEN")
            auth = {}
            if gateway:
                headers = {**headers, "Authorization": f"Bearer {gateway}"}
        workspace = self.platform.resource.value if self.platform.resource else None
        return sdk.AsyncAnthropicAWS(
            aws_region=self._region(),
            workspace_id=workspace,
            skip_auth=self.platform.skip_auth,
            base_url=self._base(),
            default_headers=headers or None,
            **auth,
            **common,
        )

    def _vertex(self, sdk: Any, headers: dict[str, str], common: dict[str, Any], **_: Any) -> Any:
        platform = self.platform
        assert platform.region is not None and platform.project is not None
        auth: dict[str, Any] = {}
        cls = sdk.AsyncAnthropicVertex
        if platform.skip_auth:
            gateway = env_key("ANTHROPIC_AUTH_TOKEN")
            if gateway:
                headers = {**headers, "Authorization": f"Bearer {gateway}"}
            elif "Authorization" not in headers:
                cls = _unsigned(cls)
        elif "Authorization" not in headers:
            auth["credentials"] = _google_credentials(env_key("GOOGLE_APPLICATION_CREDENTIALS"))
        return cls(
            region=platform.region.value,
            project_id=platform.project.value,
            base_url=_vertex_base(self._base()),
            default_headers=headers or None,
            **auth,
            **common,
        )

    def _foundry(self, sdk: Any, headers: dict[str, str], common: dict[str, Any], **_: Any) -> Any:
        token, key = env_key("ANTHROPIC_FOUNDRY_AUTH_TOKEN"), env_key("ANTHROPIC_FOUNDRY_API_KEY")
        auth: dict[str, Any]
        if token:
            auth = {"azure_ad_token_provider": lambda: token}
        elif key:
            auth = {"api_key": key}
        elif self.platform.skip_auth:
            kept = headers.get("Authorization", "")
            bearer = kept.removeprefix("Bearer ").strip()
            auth = {"azure_ad_token_provider": lambda: bearer} if bearer else {"api_key": "none"}
        else:
            auth = {"azure_ad_token_provider": _entra_provider()}
        return sdk.AsyncAnthropicFoundry(
            base_url=self._base(), default_headers=headers or None, **auth, **common
        )

    def _remember(self, secret: str) -> str:
        if secret and secret not in self._secrets:
            self._secrets.append(secret)
        return secret


def _export(command: str) -> tuple[str, float]:
    output = run_helper("awsCredentialExport", command)
    keys = aws_keys_from_export(output)
    return output, keys.seconds if keys.seconds > 0 else EXPORT_TTL


def _unsigned(cls: type[Any]) -> type[Any]:
    """`cls` sending no credentials at all (`CLAUDE_CODE_SKIP_*_AUTH` without a gateway token)."""

    class Unsigned(cls):  # type: ignore[misc]
        async def _prepare_request(self, request: Any) -> None:
            return None

    return Unsigned


def _vertex_base(base: str | None) -> str | None:
    """`ANTHROPIC_VERTEX_BASE_URL` as Claude Code documents it (`https://aiplatform.googleapis.com`)
    is the host only: the SDK uses the value as given, so the API's `/v1` is added to a bare host."""
    if base is None:
        return None
    from urllib.parse import urlsplit

    return base.rstrip("/") + "/v1" if urlsplit(base).path in ("", "/") else base


def _google_credentials(path: str | None) -> Any:
    """Google credentials: the file of `GOOGLE_APPLICATION_CREDENTIALS` (taken from the environment
    at start-up, so google-auth could not find it), else Application Default Credentials."""
    import google.auth

    if path:
        credentials, _project = google.auth.load_credentials_from_file(  # type: ignore[no-untyped-call]
            path, scopes=[GOOGLE_SCOPE]
        )
    else:
        credentials, _project = google.auth.default(scopes=[GOOGLE_SCOPE])
    return credentials


def _entra_provider() -> Callable[[], str]:
    """A Microsoft Entra ID token provider over the Azure default credential chain."""
    from azure.identity import DefaultAzureCredential, get_bearer_token_provider

    provider: Callable[[], str] = get_bearer_token_provider(DefaultAzureCredential(), AZURE_SCOPE)
    return provider
