"""Which MCP servers and which models the policy lets a session use (issue 45 item 4): the
`serverUrl` patterns, names and commands of `allowedMcpServers` / `deniedMcpServers`, and the
families, prefixes and ids of `availableModels`, as Claude Code's docs give them."""

from __future__ import annotations

from typing import Any

import pytest

from acp_agent.claude_code.settings.mcp_policy import McpPolicy, url_matches
from acp_agent.claude_code.settings.model_allowlist import ModelAllowlist, resolve_alias


@pytest.mark.parametrize(
    ("pattern", "url", "matches"),
    [
        ("https://mcp.example.com/*", "https://mcp.example.com/api", True),
        ("https://mcp.example.com", "https://mcp.example.com/any/path", True),  # no path: every path
        ("https://mcp.example.com", "https://mcp.example.com", True),
        ("https://*.example.com/*", "https://api.internal.example.com/mcp", True),
        ("http://localhost:*/*", "http://localhost:8080/mcp", True),
        ("*://mcp.example.com/*", "wss://mcp.example.com/socket", True),
        ("https://Mcp.Example.com/*", "https://mcp.example.com./api", True),  # host: no case, no dot
        ("https://mcp.example.com/API", "https://mcp.example.com/api", False),  # paths keep case
        ("https://mcp.example.com/*", "https://evil.example/mcp.example.com/", False),
        ("https://mcp.example.com/*", "http://mcp.example.com/api", False),
        # a `*` stays inside the host; a user part or a port is not the host (the review's escapes)
        ("https://*.corp.example", "https://attacker.net/x.corp.example/", False),
        ("https://*.corp.example", "https://attacker.net/?.corp.example/", False),
        ("https://*.corp.example", "https://corp.example@attacker.net/", False),
        ("https://mcp.evil.com", "https://user@mcp.evil.com/mcp", True),
        ("https://mcp.evil.com", "https://mcp.evil.com:443/mcp", True),
        ("https://mcp.evil.com", "https://mcp.evil.com:8443/mcp", False),
        ("https://mcp.example.com:*/*", "https://mcp.example.com:8443/mcp", True),
        ("http://[::1]:8080/*", "http://[::1]:8080/mcp", True),
        ("https://mcp.example.com/api/*", "https://mcp.example.com/api/v1?x=1", True),
        ("https://mcp.example.com", "not a url", False),
    ],
)
def test_server_url_patterns(pattern: str, url: str, matches: bool) -> None:
    assert url_matches(pattern, url) is matches


STDIO = {"name": "fs", "command": "npx", "args": ["-y", "server-fs"], "env": []}
REMOTE = {"name": "gh", "type": "http", "url": "https://api.github.example/mcp", "headers": []}


def policy(
    allowed: list[dict[str, Any]] | None, denied: list[dict[str, Any]] = (), **values: str
) -> McpPolicy:  # type: ignore[assignment]
    return McpPolicy(
        None if allowed is None else tuple((e, "policy") for e in allowed),
        tuple((e, "user") for e in denied),
        values,
    )


def test_no_allowlist_lets_every_server_start_and_the_deny_list_comes_first() -> None:
    assert policy(None).blocked(STDIO) is None
    assert policy(None, [{"serverName": "fs"}]).blocked(STDIO) == "deniedMcpServers in user"
    assert policy([{"serverName": "fs"}], [{"serverCommand": ["npx", "-y", "server-fs"]}]).blocked(STDIO)
    assert policy([], []).blocked(STDIO) == "not in allowedMcpServers of the settings"  # empty: none


def test_a_name_counts_only_while_the_list_has_no_entry_of_the_servers_kind() -> None:
    assert policy([{"serverName": "fs"}]).blocked(STDIO) is None
    assert policy([{"serverName": "fs"}, {"serverCommand": ["other"]}]).blocked(STDIO) is not None
    assert policy([{"serverName": "fs"}, {"serverUrl": "https://x.example/*"}]).blocked(STDIO) is None
    assert policy([{"serverCommand": ["npx", "-y", "server-fs"]}]).blocked(STDIO) is None
    assert policy([{"serverCommand": ["npx", "server-fs"]}]).blocked(STDIO) is not None  # exact words
    assert policy([{"serverUrl": "https://api.github.example/*"}]).blocked(REMOTE) is None
    assert policy([{"serverName": "gh"}, {"serverUrl": "https://x.example/*"}]).blocked(REMOTE) is not None


def test_entries_expand_from_the_pinned_environment_and_an_allowed_url_never_does() -> None:
    assert policy([{"serverCommand": ["${BIN:-npx}", "-y", "server-fs"]}]).blocked(STDIO) is None
    assert policy([{"serverCommand": ["${BIN}", "-y", "server-fs"]}], BIN="npx").blocked(STDIO) is None
    assert policy([{"serverUrl": "https://${HOST}/*"}], HOST="api.github.example").blocked(REMOTE) is not None
    assert policy(None, [{"serverUrl": "https://${HOST}/*"}], HOST="api.github.example").blocked(REMOTE)


def test_model_families_prefixes_and_ids() -> None:
    families = ModelAllowlist(("sonnet", "haiku"))
    assert families.allows("claude-sonnet-5-5") and families.allows("claude-haiku-4-5-20251001")
    assert not families.allows("claude-opus-5-5")
    assert families.allows("us.anthropic.claude-sonnet-4-5-20250929-v1:0")  # a Bedrock form, read back
    specific = ModelAllowlist(("sonnet", "claude-sonnet-4-5"))  # a specific entry turns the word off
    assert specific.allows("claude-sonnet-4-5-20250929") and not specific.allows("claude-sonnet-5-5")
    assert not ModelAllowlist(()).allows("claude-sonnet-5-5")  # empty: no named model
    assert ModelAllowlist(None).allows("anything")


def test_the_default_model_and_enforce_available_models() -> None:
    assert ModelAllowlist(("haiku",)).default("claude-sonnet-5-5") == "claude-sonnet-5-5"  # usable
    assert ModelAllowlist(("haiku",), enforce=True).default("claude-sonnet-5-5") == "claude-haiku-5-5"
    assert ModelAllowlist((), enforce=True).default("claude-sonnet-5-5") == "claude-sonnet-5-5"
    chosen, warning = ModelAllowlist(("haiku",), source="p").choose("claude-opus-5-5", "claude-sonnet-5-5")
    assert chosen == "claude-sonnet-5-5" and warning is not None and "availableModels of p" in warning
    assert resolve_alias("opus") == "claude-opus-5-5" and resolve_alias("sonnet[1m]") == "claude-sonnet-5-5"
    assert resolve_alias("claude-x-1") == "claude-x-1"
