"""How the agent asks the editor for a key: its auth methods, offered in `initialize`, and their help.

Both methods log in the same way, so an editor may call `authenticate` with either (docs/decisions.md
D23): the key in `_meta["api-key"]` (codex-acp's and gemini-cli's convention), else a form, else an
`auth_required` error saying how. The terminal method also carries `_meta["terminal-auth"]`, the
command line that clients reading only `_meta` run (claude-agent-acp's convention).
"""

from __future__ import annotations

import sys
from typing import Any

from acp_agent.protocol.lifecycle import InitializeRequest

__all__ = [
    "AUTH_HELP",
    "AUTH_METHOD_ID",
    "AUTH_METHOD_IDS",
    "LOGIN_METHOD_ID",
    "auth_methods",
    "can_run_terminal_auth",
    "login_command",
]

AUTH_METHOD_ID = "anthropic-api-key"
LOGIN_METHOD_ID = "login"
AUTH_METHOD_IDS = frozenset({AUTH_METHOD_ID, LOGIN_METHOD_ID})
AUTH_HELP = (
    "Give the key when the editor asks for it (authenticate), set ANTHROPIC_API_KEY in the "
    "editor's agent_servers env for this agent and restart it, or run `acp-agent login` once. "
    "To try the agent without a key, start it with --model demo (an offline, recorded demo turn)."
)
API_KEY_HELP = (
    "Your Anthropic API key (console.anthropic.com). The editor asks for it, or passes it as "
    '_meta["api-key"].apiKey; the agent stores it in its config dir (mode 0600). Or set '
    "ANTHROPIC_API_KEY in the editor's agent_servers env for this agent."
)


def login_command() -> list[str]:
    """`acp-agent login` as this very installation runs it: its interpreter with `-m acp_agent`, so
    it works from a venv, a uvx cache or a plain checkout alike, whatever PATH holds. With `-P`: an
    editor runs it in the workspace, which `-m` alone would put first on the import path
    (`process/import_path.py`)."""
    if sys.executable:
        return [sys.executable, "-P", "-m", "acp_agent", "login"]
    return ["acp-agent", "login"]


def auth_methods(*, terminal: bool) -> list[dict[str, Any]]:
    """The key from the editor, and `acp-agent login` in a terminal when the client can run one."""
    methods: list[dict[str, Any]] = [
        {
            "id": AUTH_METHOD_ID,
            "name": "Anthropic API key",
            "description": API_KEY_HELP,
            "_meta": {"api-key": {"provider": "anthropic"}},
        }
    ]
    if terminal:
        command, *args = login_command()
        methods.append(
            {
                "type": "terminal",
                "id": LOGIN_METHOD_ID,
                "name": "Log in with an API key",
                "description": "Runs `acp-agent login` in a terminal to store a key.",
                "args": ["login"],
                "_meta": {"terminal-auth": {"command": command, "args": args, "label": "acp-agent login"}},
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
