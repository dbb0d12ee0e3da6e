"""The web tools as the settings' rules leave them: the API runs them, so nobody can be asked.

`WebSearch` or `WebFetch` denied whole takes the tool off the list. A `WebFetch(domain:…)` deny or
ask rule becomes a blocked domain of the server tools (the API's domain lists cover subdomains,
so `*.example.com` blocks `example.com` too: more, never less), or leaves the configured allowed
list; a host pattern those lists cannot say (`example.*`) turns web fetch off, with a warning.
Decided once per session: the tool list is the head of the cached prefix.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import structlog

from acp_agent.model.server_tools import WebTools
from acp_agent.permissions.rules import Rule

__all__ = ["ruled_web"]

log = structlog.get_logger(__name__)


def ruled_web(web: WebTools, rules: Iterable[Rule], removed: frozenset[str]) -> WebTools:
    """The web tools as the deny and ask rules leave them (the API runs them, so nobody can be
    asked): `WebSearch` or `WebFetch` denied whole is off; a `WebFetch(domain:…)` denied or
    asked is a blocked domain (or leaves the allowed list). A host pattern the API's domain
    lists cannot say turns web fetch off, with a warning."""
    names = set(web.names) - removed
    blocked, allowed = list(web.blocked_domains), list(web.allowed_domains)
    for rule in rules:
        if rule.tool != "WebFetch" or rule.behavior == "allow" or rule.pattern is None:
            continue
        host = _api_host(rule)
        if host is None:
            log.warning("claude.web_fetch_off", rule=rule.text, why="the API cannot block that pattern")
            names.discard("web_fetch")
        elif allowed:
            allowed = [d for d in allowed if not _under_host(d, host)]
            if not allowed:
                names.discard("web_fetch")
                names.discard("web_search")
        elif host not in blocked:
            blocked.append(host)
    return replace(
        web, names=frozenset(names), blocked_domains=tuple(blocked), allowed_domains=tuple(allowed)
    )


def _api_host(rule: Rule) -> str | None:
    """The API domain-list entry for a `WebFetch(domain:…)` rule (the API's entries cover their
    subdomains), or None when the pattern has no such entry (`example.*`)."""
    host = rule.text[rule.text.index("domain:") + len("domain:") : -1].strip().lower().rstrip(".")
    host = host.removeprefix("*.")
    return None if "*" in host or not host else host


def _under_host(domain: str, host: str) -> bool:
    name = domain.lower().split("/", 1)[0]
    return name == host or name.endswith("." + host)
