"""Claude Code's credential helpers: `apiKeyHelper`, `awsCredentialExport` and `awsAuthRefresh`.

Each is a shell command from the user's settings file (`~/.claude/settings.json`; the project's
files wait for the trust work). The first two print a credential: it is kept until its time is up
(`apiKeyHelper`: `CLAUDE_CODE_API_KEY_HELPER_TTL_MS`, default 5 min; `awsCredentialExport`: the
credentials' `Expiration` less 5 min, else 1 h) and asked again after the API refused it. The third
refreshes the AWS login (`aws sso login`) when the credentials have expired. What a helper prints
is never logged and never reaches a tool: it lives in the model client only, and every error
message is redacted of it. The commands run unsandboxed, as Claude Code runs them (they are the
user's own), with no stdin, and die with the agent (`process/lifetime.py`).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import structlog

from acp_agent.errors import AuthRequired
from acp_agent.process.lifetime import owned_env

__all__ = [
    "AwsKeys",
    "CachedOutput",
    "Helpers",
    "aws_keys_from_export",
    "helpers_from_settings",
    "run_helper",
]

log = structlog.get_logger(__name__)

HELPER_SECONDS = 60.0
"""How long a helper that prints a credential may take."""
REFRESH_SECONDS = 180.0
"""How long `awsAuthRefresh` may take (a login may wait for the user's browser)."""
API_KEY_TTL = 300.0
EXPORT_MARGIN = 300.0
EXPORT_TTL = 3600.0


@dataclass(frozen=True, slots=True)
class Helpers:
    """The helper commands of the user's settings file (None: not set)."""

    api_key_helper: str | None = None
    aws_auth_refresh: str | None = None
    aws_credential_export: str | None = None
    source: str = ""
    """The file they were read from, for `/status` and messages."""

    def names(self) -> list[str]:
        return [
            name
            for name, value in (
                ("apiKeyHelper", self.api_key_helper),
                ("awsAuthRefresh", self.aws_auth_refresh),
                ("awsCredentialExport", self.aws_credential_export),
            )
            if value
        ]


def helpers_from_settings(data: Mapping[str, Any] | None, source: str) -> Helpers:
    """The helpers a settings object names (non-empty strings only)."""
    data = data or {}

    def command(key: str) -> str | None:
        value = data.get(key)
        return value if isinstance(value, str) and value.strip() else None

    return Helpers(command("apiKeyHelper"), command("awsAuthRefresh"), command("awsCredentialExport"), source)


def run_helper(setting: str, command: str, *, timeout: float = HELPER_SECONDS) -> str:
    """Run one helper with `/bin/sh -c` and return what it printed (stripped).

    Raises:
        AuthRequired: it could not start, timed out, failed or printed nothing; the message
            names the setting and the exit status only.
    """
    started = time.monotonic()
    try:
        done = subprocess.run(
            ["/bin/sh", "-c", command],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            env=owned_env(dict(os.environ)),
            start_new_session=True,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise AuthRequired(f"{setting} did not finish within {timeout:g} s") from None
    except OSError as exc:
        raise AuthRequired(f"{setting} could not be started ({exc.strerror or type(exc).__name__})") from None
    log.info(
        "model.helper_ran",
        setting=setting,
        status=done.returncode,
        seconds=round(time.monotonic() - started, 2),
    )
    if done.returncode != 0:
        raise AuthRequired(
            f"{setting} failed (exit status {done.returncode}); run it in a terminal to see why"
        )
    output = done.stdout.decode("utf-8", "replace").strip()
    if not output and setting != "awsAuthRefresh":
        raise AuthRequired(f"{setting} printed nothing")
    return output


class CachedOutput:
    """A helper's output, kept until its time is up or `expire()` is called (after a 401)."""

    def __init__(
        self,
        produce: Callable[[], tuple[str, float]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._produce = produce
        """Runs the helper: its output and for how many seconds it holds."""
        self._clock = clock
        self._value: str | None = None
        self._until = 0.0
        self.runs = 0

    @property
    def value(self) -> str | None:
        """The output while it holds (None: never run, or its time is up)."""
        return self._value if self._value is not None and self._clock() < self._until else None

    def get(self) -> str:
        value = self.value
        if value is None:
            value, seconds = self._produce()
            self.runs += 1
            self._value, self._until = value, self._clock() + seconds
        return value

    def expire(self) -> None:
        self._until = 0.0


def api_key_ttl(settings: Mapping[str, str]) -> float:
    """`CLAUDE_CODE_API_KEY_HELPER_TTL_MS` in seconds (default 5 min)."""
    try:
        ms = float(settings.get("CLAUDE_CODE_API_KEY_HELPER_TTL_MS", ""))
    except ValueError:
        return API_KEY_TTL
    return ms / 1000 if ms > 0 else API_KEY_TTL


@dataclass(frozen=True, slots=True)
class AwsKeys:
    """AWS credentials from `awsCredentialExport`."""

    access_key: str
    secret_key: str
    session_token: str | None
    seconds: float
    """How long to keep them: until `Expiration` less 5 min, else 1 h."""

    def secrets(self) -> list[str]:
        return [s for s in (self.secret_key, self.session_token) if s]


def aws_keys_from_export(output: str, now: float | None = None) -> AwsKeys:
    """`awsCredentialExport`'s output: `{"Credentials": {...}}` (as `aws sts` prints it) or the flat
    `aws configure export-credentials --format process` shape.

    Raises:
        AuthRequired: it is neither.
    """
    try:
        data = json.loads(output)
    except ValueError:
        raise AuthRequired("awsCredentialExport did not print JSON") from None
    creds = data.get("Credentials", data) if isinstance(data, dict) else None
    if not isinstance(creds, dict):
        raise AuthRequired("awsCredentialExport printed no credentials")
    access, secret = creds.get("AccessKeyId"), creds.get("SecretAccessKey")
    if not (isinstance(access, str) and access and isinstance(secret, str) and secret):
        raise AuthRequired("awsCredentialExport printed no AccessKeyId and SecretAccessKey")
    token = creds.get("SessionToken")
    seconds = EXPORT_TTL
    expiration = creds.get("Expiration")
    if isinstance(expiration, str) and expiration:
        try:
            ends = datetime.fromisoformat(expiration.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
        else:
            seconds = max(0.0, ends - (time.time() if now is None else now) - EXPORT_MARGIN)
    return AwsKeys(access, secret, token if isinstance(token, str) and token else None, seconds)
