"""What a cloud platform's error means, in words a user can act on.

The first-party API names its errors in the body (`error.type`, `error.message`); Bedrock puts a
`message` in the body and the type in `x-amzn-ErrorType`, and Google's errors are
`{"error": {"code", "message", "status"}}` (sometimes in a list). `error_parts` reads all three;
`explain` turns the ones a user can fix (a model not enabled, an expired login, a quota) into a
sentence naming what to do. Pure: no SDK import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from acp_agent.model.cloud.platforms import Platform

__all__ = ["Hint", "error_parts", "explain", "refused_credentials"]


@dataclass(frozen=True, slots=True)
class Hint:
    text: str
    not_credentials: bool = False
    """A 403/404 that is about the model (not enabled), not the credentials: not `auth_required`."""
    expired: bool = False
    """The credentials expired: asking the helpers again (awsAuthRefresh) may help."""


def error_parts(exc: Any) -> tuple[str | None, str | None]:
    """An `APIStatusError`'s type and message, whichever shape its body has."""
    error_type, message = getattr(exc, "type", None), getattr(exc, "api_message", None)
    body = getattr(exc, "body", None)
    if isinstance(body, list) and body:
        body = body[0]
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict):
            error_type = error_type or _text(inner.get("status")) or _text(inner.get("type"))
            message = message or _text(inner.get("message"))
        message = message or _text(body.get("message")) or _text(body.get("Message"))
    response = getattr(exc, "response", None)
    amazon = response.headers.get("x-amzn-errortype") if response is not None else None
    if not error_type and amazon:
        error_type = amazon.split(":", 1)[0]
    return error_type, message


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def refused_credentials(platform: Platform, exc: Any) -> bool:
    """A 401, or a 403 that says the credentials expired: worth asking the helpers again."""
    status = getattr(exc, "status_code", 0)
    if status == 401:
        return True
    if status != 403:
        return False
    error_type, message = error_parts(exc)
    hint = explain(platform, status, error_type, message or "")
    return hint is not None and hint.expired


def explain(platform: Platform, status: int, error_type: str | None, message: str) -> Hint | None:
    """What to do about this error on this platform; None: the API's own words are enough."""
    kind = (error_type or "").lower()
    lowered = message.lower()
    where = platform.label
    region = f" in {platform.region.value}" if platform.region else ""
    if platform.name in ("bedrock", "mantle", "aws"):
        if "expired" in kind or "expired" in lowered or kind == "unrecognizedclientexception":
            login = f"aws sso login --profile {platform.profile}" if platform.profile else "aws sso login"
            return Hint(
                f"{where}: the AWS credentials have expired: run `{login}` (or set awsAuthRefresh)",
                expired=True,
            )
        if "on-demand throughput" in lowered:
            return Hint(
                f"{where}: this model needs an inference profile id (us., eu., global. …) or an "
                "application inference profile ARN: set ANTHROPIC_MODEL or ANTHROPIC_DEFAULT_*_MODEL",
                not_credentials=True,
            )
        if status in (403, 404) and ("model" in lowered or kind == "resourcenotfoundexception"):
            return Hint(
                f"{where}: the model is not enabled for this account{region}: request access to it in the "
                "Bedrock console (Model access), or choose another model or region",
                not_credentials=True,
            )
        if status == 429 or "throttl" in kind:
            return Hint(f"{where} throttled the request{region} (a quota of the account)")
    if platform.name == "vertex":
        project = f" in project {platform.project.value}" if platform.project else ""
        if status == 404:
            return Hint(
                f"{where}: the model is not enabled{project}{region}: enable it in Model Garden, or use "
                "another region (CLOUD_ML_REGION=global serves the most models)",
                not_credentials=True,
            )
        if status == 403:
            return Hint(
                f"{where}: the credentials may not call Claude{project} (aiplatform.endpoints.predict)"
            )
        if status == 429:
            return Hint(
                f"{where}: the quota{project}{region} is used up: retry later, use the global "
                "region or ask for more quota"
            )
    if platform.name == "foundry":
        if status == 404:
            return Hint(
                f"{where}: no deployment of that name: the model id is the deployment's name "
                "(set ANTHROPIC_MODEL or ANTHROPIC_DEFAULT_*_MODEL to it)",
                not_credentials=True,
            )
        if status == 429:
            return Hint(f"{where}: the deployment's rate limit was reached")
    return None
