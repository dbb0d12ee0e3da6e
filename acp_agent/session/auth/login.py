"""`authenticate` and `logout`: the editor gives the agent its Anthropic key, or takes it away.

`authenticate` with either advertised method logs in the same way: a key in
`_meta["api-key"].apiKey` is stored; else a key the agent already has is enough; else, when the
client offers form elicitation, a form asks for the key (scoped to the `authenticate` request);
else -32000 says how to give one. The key is stored where `acp-agent login` stores it and used by
the next request, with no restart. It never reaches a log line or an error message.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import structlog

from acp_agent.errors import RpcError
from acp_agent.protocol.lifecycle import AuthenticateRequest, ClientCapabilities
from acp_agent.session.auth.methods import AUTH_HELP, AUTH_METHOD_IDS
from acp_agent.session.editor.form_answers import checked_answer
from acp_agent.session.params import parse
from acp_agent.session.requester import Requester

__all__ = ["KEY_FORM_SECONDS", "KeyStore", "Login", "NoKeyNeeded", "key_from_meta"]

log = structlog.get_logger(__name__)

KEY_FORM_SECONDS = 600.0
"""How long the key form may stay open (someone has to find the key and paste it)."""
KEY_FIELD = "apiKey"
MAX_KEY_CHARS = 1024


class KeyStore(Protocol):
    """Where the process's key lives: the key file and the model client (the app's `AgentKeys`)."""

    async def found(self) -> bool:
        """Whether a request would carry credentials now."""
        ...

    def keep(self, key: str) -> Path:
        """Store the key (mode 0600) and send it from the next request on. Raises OSError."""
        ...

    def forget(self) -> bool:
        """Remove the stored key and stop using any key; True if a stored key was removed."""
        ...


class NoKeyNeeded:
    """A `KeyStore` for an agent that needs no key (a handler built without one, in tests)."""

    async def found(self) -> bool:
        return True

    def keep(self, key: str) -> Path:
        raise OSError("this agent keeps no key")

    def forget(self) -> bool:
        return False


def key_from_meta(meta: dict[str, Any] | None) -> str | None:
    """The key in `_meta["api-key"]`: `{"apiKey": "sk-…"}` as codex-acp and gemini-cli read it, or a
    bare string. None when there is none.

    Raises:
        RpcError: -32602 when the entry is there but holds no usable key (never echoing it).
    """
    entry = (meta or {}).get("api-key")
    if entry is None:
        return None
    key = entry.get(KEY_FIELD) if isinstance(entry, dict) else entry
    if isinstance(entry, dict) and key is None:
        return None  # the method's own advertisement shape ({"provider": …}) sent back: no key
    problem = _key_problem(key)
    if problem is not None:
        raise RpcError.invalid_params(
            f'Invalid params: _meta["api-key"].apiKey: {problem}', {"field": "_meta.api-key.apiKey"}
        )
    assert isinstance(key, str)
    return key.strip()


def _key_problem(key: Any) -> str | None:
    if not isinstance(key, str) or not key.strip():
        return "must be a non-empty string"
    key = key.strip()
    if len(key) > MAX_KEY_CHARS or any(c.isspace() or not c.isprintable() for c in key):
        return "is not an API key (spaces, control characters or too long)"
    return None


class Login:
    """The `authenticate` and `logout` methods."""

    def __init__(
        self, keys: KeyStore, requester: Requester, request_id: Callable[[], Any] = lambda: None
    ) -> None:
        self._keys = keys
        self._requester = requester
        self._request_id = request_id
        """The id of the incoming request being handled (`rpc.endpoint.current_request_id`)."""
        self._refused = False
        """The API refused the key in use (401/403): having one is not enough, a new one is needed."""

    def key_refused(self) -> None:
        """A turn ended `auth_required`: the next `authenticate` asks for another key."""
        self._refused = True

    async def authenticate(self, params: Any, capabilities: ClientCapabilities) -> dict[str, Any]:
        request = parse(AuthenticateRequest, params)
        if request.method_id not in AUTH_METHOD_IDS:
            raise RpcError.invalid_params(
                f"Invalid params: methodId: unknown auth method {request.method_id!r}",
                {"methodId": request.method_id, "known": sorted(AUTH_METHOD_IDS)},
            )
        key = key_from_meta(request.meta)
        if key is not None:
            self._keep(key, "meta")
            return {}
        if not self._refused and await self._keys.found():
            return {}
        if "form" in capabilities.elicitation_modes:
            key = await self._ask_for_key()
            if key is not None:
                self._keep(key, "form")
                return {}
            raise RpcError.auth_required(f"No usable API key was given in the form. {AUTH_HELP}")
        problem = "The API refused the key in use." if self._refused else "No Anthropic API key found."
        raise RpcError.auth_required(f"{problem} {AUTH_HELP}")

    async def logout(self, params: Any) -> dict[str, Any]:
        """Forget the key: later sessions answer `auth_required` until one is given again."""
        if params is not None and not isinstance(params, dict):
            raise RpcError.invalid_params("Invalid params: logout takes an object (or none)")
        removed = self._keys.forget()
        self._refused = False
        log.info("auth.logged_out", stored_key_removed=removed)
        return {}

    def _keep(self, key: str, source: str) -> None:
        try:
            path = self._keys.keep(key)
        except OSError as exc:
            raise RpcError.internal_error(
                f"The key could not be stored: {exc.strerror or type(exc).__name__}"
            ) from None
        self._refused = False
        log.info("auth.key_stored", source=source, path=str(path))

    async def _ask_for_key(self) -> str | None:
        """The form, scoped to this `authenticate` request; None when no usable key came back."""
        params = {
            "mode": "form",
            "requestId": self._request_id(),
            "message": "acp-agent needs an Anthropic API key to reach Claude.",
            "requestedSchema": {
                "type": "object",
                "title": "Anthropic API key",
                "properties": {
                    KEY_FIELD: {
                        "type": "string",
                        "title": "API key",
                        "description": "From console.anthropic.com. Stored in the agent's config dir "
                        "(mode 0600) and never shown again.",
                        "minLength": 1,
                        "maxLength": MAX_KEY_CHARS,
                        "_meta": {"acp-agent": {"secret": True}},
                    }
                },
                "required": [KEY_FIELD],
            },
        }
        try:
            answer = await self._requester.request("elicitation/create", params, timeout=KEY_FORM_SECONDS)
        except RpcError as exc:
            log.warning("auth.form_failed", code=exc.code)
            return None
        except TimeoutError:
            log.warning("auth.form_unanswered", seconds=KEY_FORM_SECONDS)
            return None
        checked = checked_answer(answer, params["requestedSchema"])  # the one reading of forms
        key = checked.get("content", {}).get(KEY_FIELD)
        if _key_problem(key) is not None:
            log.info("auth.form_without_key", action=checked["action"])
            return None
        assert isinstance(key, str)
        return key.strip()
