"""The answer to `initialize`: what the agent can do, and how the editor gives it a key.

Light on purpose (`protocol/`, `session/auth/methods.py` and the MCP transports only): the front handler
answers `initialize` from here before the session layer is imported (`front.py`, D4), and
`AcpHandler.initialize` answers from here too, so the answer exists once.
"""

from __future__ import annotations

from typing import Any

from acp_agent import __version__
from acp_agent.protocol.lifecycle import InitializeRequest, negotiate_version
from acp_agent.session.auth.methods import auth_methods, can_run_terminal_auth
from acp_agent.tools.mcp.sdk import mcp_servers_supported_http, mcp_servers_supported_sse

__all__ = ["initialize_answer"]


def initialize_answer(request: InitializeRequest, *, journaled: bool) -> dict[str, Any]:
    """The `initialize` result; session/load, list, resume, close, delete, fork, set_title and the
    `_session/rewind` extension (`_meta.rewind`) are advertised only when sessions are
    `journaled` (the state dir is usable)."""
    return {
        "protocolVersion": negotiate_version(request.protocol_version),
        "agentCapabilities": {
            "loadSession": journaled,
            "sessionCapabilities": {
                **({"list": {}, "resume": {}, "close": {}, "delete": {}, "fork": {}} if journaled else {}),
                "additionalDirectories": {},
                "systemPrompt": {},  # ACP's unstable systemPrompt, append mode only
                **({"title": {}} if journaled else {}),  # ACP's unstable session/set_title
            },
            "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {
                "http": mcp_servers_supported_http(),
                "sse": mcp_servers_supported_sse(),
            },
            "auth": {"logout": {}},
            **({"_meta": {"rewind": {"supported": True, "method": "_session/rewind"}}} if journaled else {}),
        },
        "authMethods": auth_methods(terminal=can_run_terminal_auth(request)),
        "agentInfo": {"name": "acp-agent", "title": "acp-agent", "version": __version__},
        # `_session/steering`, named as claude-agent-acp and codex-acp advertise it
        "_meta": {"steering": {"supported": True}},
    }
