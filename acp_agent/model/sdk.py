"""The `anthropic` SDK, loaded late: it costs seconds of CPU here, so the handshake never waits for it.

Kept apart from `model/anthropic.py` so that the credentials check of `session/new` and the
background preload need neither the SDK nor the model client's own modules.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import TYPE_CHECKING

import anyio.to_thread
import structlog

from acp_agent.lazy import deferred
from acp_agent.model.lean_sdk import import_hook

if TYPE_CHECKING:
    from anthropic.lib.credentials import CredentialResult

__all__ = [
    "ENV_KEYS",
    "SDK_NAMES",
    "anthropic_sdk",
    "credentials_found",
    "env_key",
    "forget_env_keys",
    "has_credentials",
    "key_in_env",
    "take_env_keys",
    "taken_secrets",
]

log = structlog.get_logger(__name__)

ENV_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
"""The Anthropic API's own keys (`logout` forgets them)."""

_TAKEN: dict[str, str] = {}
"""The credentials `take_env_keys` moved out of the process environment; only the model client
gets them (`env_key`)."""


SDK_NAMES = (
    "AsyncAnthropic",
    "AnthropicError",
    "APIError",
    "APIStatusError",
    "APITimeoutError",
    "APIConnectionError",
    "DefaultAsyncHttpxClient",
)
"""What the model client takes from the SDK's top level: loaded by the warm-up, not by a request."""

REQUEST_NAMES = ("Message", "RawMessageStreamEvent")
"""The types a Messages request reads its reply into (`anthropic.types`): loaded by the warm-up."""


@deferred
def anthropic_sdk() -> ModuleType:
    """The SDK, loaded for what the agent uses (`model/lean_sdk/import_hook.py`), with what a first Messages
    request loads (its resource, the reply's and the stream's types); a plain import when the SDK
    is imported already or the lean one fails. What only a later step uses (the Models API's
    resource, token counting, batches) is left for its first use."""
    hook = import_hook.install("anthropic")
    try:
        import anthropic
        import anthropic.resources.messages
        import anthropic.types

        for name in SDK_NAMES:
            getattr(anthropic, name)
        for name in REQUEST_NAMES:
            getattr(anthropic.types, name)
        anthropic.resources.messages.AsyncMessages  # noqa: B018 (resolves a lazy name: the import)
    except Exception as exc:
        if hook is None:
            raise
        log.warning("model.sdk_lean_import_failed", error=repr(exc)[:300], action="importing it whole")
        import_hook.uninstall(hook)
        import anthropic
        import anthropic.resources.messages
        import anthropic.types

        return anthropic
    if hook is not None:  # ANTHROPIC_LOG, as the SDK's own `__init__` would have read it
        from anthropic._utils._logs import setup_logging

        setup_logging()
    return anthropic


@deferred
def _sdk_credentials() -> Callable[[], CredentialResult | None]:
    """The SDK's own credentials chain (profiles, federation)."""
    import_hook.install("anthropic")  # lean, like `anthropic_sdk`, when this comes first
    from anthropic.lib.credentials import default_credentials

    return default_credentials


def take_env_keys(names: Iterable[str]) -> list[str]:
    """Move the credential variables `names` out of `os.environ` (at start-up, before any tool
    runs), so no child process (a tool's command, a hook) and no `/proc/<pid>/environ` reader can
    see them; the model client still gets them through `env_key`. Returns the names taken.

    The one list of what is hidden: `ANTHROPIC_API_KEY` and `ANTHROPIC_AUTH_TOKEN`, every platform's
    Claude credential, `ANTHROPIC_CUSTOM_HEADERS`, and the chosen platform's cloud credentials
    (`model/cloud/platforms.py:Platform.secrets`: the AWS keys, the Google credentials file's path)."""
    for name in dict.fromkeys([*ENV_KEYS, *names]):
        value = os.environ.pop(name, None)
        if value:
            _TAKEN[name] = value
    return sorted(_TAKEN)


def taken_secrets() -> list[str]:
    """The values taken from the environment, for redaction (never logged)."""
    return [value for value in _TAKEN.values() if value]


def forget_env_keys() -> None:
    """`logout`: stop using the keys the process was started with, until it is started again (the
    editor's env setting is not ours to change)."""
    for name in ENV_KEYS:
        _TAKEN.pop(name, None)
    for name in ENV_KEYS:
        os.environ.pop(name, None)


def env_key(name: str) -> str | None:
    """The value of a credential variable: still in the environment, or taken from it at start-up."""
    return os.environ.get(name) or _TAKEN.get(name)


def key_in_env() -> bool:
    """Whether `ANTHROPIC_API_KEY` or `ANTHROPIC_AUTH_TOKEN` was set (and not empty)."""
    return any(env_key(name) for name in ENV_KEYS)


def has_credentials(api_key: str | None = None) -> bool:
    """Whether a request would carry credentials, decided without sending one.

    An explicit key, or `ANTHROPIC_API_KEY`/`ANTHROPIC_AUTH_TOKEN`, answers at once; otherwise the
    SDK's own chain (profiles, federation) is asked, which reads only local files and env.
    """
    if api_key or key_in_env():
        return True
    try:
        return _sdk_credentials.now()() is not None
    except Exception as exc:  # an SDK without profiles, or a missing or broken profile
        log.debug("model.no_profile", error=type(exc).__name__)
        return False


async def credentials_found(api_key: str | None = None) -> bool:
    """`has_credentials` for the event loop: the environment at once, the SDK's chain in a thread."""
    if api_key or key_in_env():
        return True
    return await anyio.to_thread.run_sync(has_credentials, api_key)
