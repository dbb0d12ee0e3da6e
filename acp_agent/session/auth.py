"""How the agent asks the editor for a key: its auth methods, offered in `initialize`, and their help."""

from __future__ import annotations

from typing import Any

from acp_agent.protocol.lifecycle import InitializeRequest

__all__ = ["AUTH_HELP", "AUTH_METHOD_ID", "auth_methods", "can_run_terminal_auth"]

AUTH_METHOD_ID = "anthropic-api-key"
AUTH_HELP = (
    "Set ANTHROPIC_API_KEY in the editor's agent_servers env for this agent and restart "
    "it, or run `acp-agent login` once. To try the agent without a key, start it with "
    "--model demo (an offline, recorded demo turn)."
)


def auth_methods(*, terminal: bool) -> list[dict[str, Any]]:
    """The key in the environment, and `acp-agent login` in a terminal when the client can run one."""
    methods: list[dict[str, Any]] = [
        {"id": AUTH_METHOD_ID, "name": "Anthropic API key", "description": AUTH_HELP}
    ]
    if terminal:
        methods.append(
            {
                "type": "terminal",
                "id": "login",
                "name": "Log in with an API key",
                "description": "Runs `acp-agent login` in a terminal to store a key.",
                "args": ["login"],
            }
        )
    return methods


def can_run_terminal_auth(request: InitializeRequest) -> bool:
    """Clients say so in `clientCapabilities.auth.terminal` (the auth-methods RFD) or, like the ACP
    Registry's validator, in a `"terminal-auth": true` `_meta` key (of the capabilities or the
    request): honour every form, so the login is offered everywhere."""
    caps = request.client_capabilities
    auth = caps.auth if isinstance(caps.auth, dict) else {}
    return auth.get("terminal") is True or any(
        isinstance(meta, dict) and meta.get("terminal-auth") is True for meta in (caps.meta, request.meta)
    )
