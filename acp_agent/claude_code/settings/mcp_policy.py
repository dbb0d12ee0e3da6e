"""`allowedMcpServers` and `deniedMcpServers`: which MCP servers may start, as Claude Code decides.

Each entry has one key: `serverName` (the name a server is given, matched exactly), `serverCommand`
(a stdio server's command and arguments, matched exactly, in order) or `serverUrl` (a remote
server's URL; `*` matches any text, the host is matched without case or a trailing dot, and a
pattern without a path matches every path). A server is checked, the editor's included:
1. the deny list, merged from every settings file (a project's at once: it only restricts): a
   server that matches an entry never starts;
2. the allow list: none anywhere lets every server start; else a stdio server must match a
   `serverCommand` entry (a `serverName` entry counts only while the list holds none), a remote
   one a `serverUrl` entry (the same for names). The lists of every file combine (a project's
   once the folder is trusted: it can widen another file's list), unless the managed policy's
   `allowManagedMcpServersOnly` keeps only its own.
Entries expand `${VAR}` and `${VAR:-default}` from the agent's environment with the managed
`env` over it, never from a user's or project's settings: a file the policy does not govern must
not change what an entry means. An allow entry whose URL holds a `${…}` is left out (with a
warning): an expansion could move its host.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

__all__ = ["McpPolicy", "entries", "is_entry", "url_matches"]

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def _expand(text: str, values: Mapping[str, str]) -> str:
    """`${VAR}` and `${VAR:-default}` in `text` from `values` (an unset one with no default kept)."""

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        return values.get(name, default if default is not None else match.group(0))

    return _VARIABLE.sub(one, text)


_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def _glob(pattern: str, star: str) -> re.Pattern[str]:
    return re.compile(star.join(re.escape(part) for part in pattern.split("*")), re.DOTALL)


def url_matches(pattern: str, url: str) -> bool:
    """Whether a remote server's `url` matches a `serverUrl` `pattern`, part by part: the scheme,
    the host (no case, no trailing dot; a `*` stays inside the host), the port (the scheme's own
    when none is written; `*` any), then the path (`*` anything; a pattern without one: every
    path). The URL's user part is not its host: `https://user@mcp.evil.com` is `mcp.evil.com`."""
    scheme_p, sep, rest_p = pattern.partition("://")
    try:
        found = urlsplit(url)
        port = found.port
    except ValueError:
        return False
    if not sep or not found.scheme or not found.hostname:
        return False
    scheme = found.scheme.lower()
    authority_p, slash, path_p = rest_p.partition("/")
    host_p, port_p = _host_and_port(authority_p.rpartition("@")[2])
    if not _glob(scheme_p.lower(), "[a-z0-9+.-]*").fullmatch(scheme):
        return False
    if not _glob(host_p.lower().rstrip("."), "[^/?#@:]*").fullmatch(found.hostname.rstrip(".")):
        return False
    port = port if port is not None else _DEFAULT_PORTS.get(scheme)
    if port_p != "*" and (int(port_p) if port_p.isdigit() else _DEFAULT_PORTS.get(scheme)) != port:
        return False
    path = (found.path or "/") + (f"?{found.query}" if found.query else "")
    return not slash or _glob("/" + path_p, ".*").fullmatch(path) is not None


def _host_and_port(authority: str) -> tuple[str, str]:
    """A pattern's host and port as written ("" for no port); `[::1]:8080` keeps its brackets off."""
    if authority.startswith("["):
        host, _, after = authority[1:].partition("]")
        return host, after.removeprefix(":")
    host, colon, port = authority.rpartition(":")
    return (host, port) if colon else (authority, "")


@dataclass(frozen=True, slots=True)
class McpPolicy:
    """The merged lists: `allowed` None when no file sets one; each entry with the file it is from."""

    allowed: tuple[tuple[dict[str, Any], str], ...] | None = None
    denied: tuple[tuple[dict[str, Any], str], ...] = ()
    values: Mapping[str, str] | None = None
    """What `${VAR}` expands from in an entry (the agent's environment, the managed `env` over it)."""
    allowed_by: tuple[str, ...] = ()
    """The files that set an allow list (an empty one too), for messages."""

    def blocked(self, spec: Mapping[str, Any]) -> str | None:
        """Why the server `spec` (an ACP `McpServer`: stdio with `command` and `args`, or remote
        with `url`) may not start; None when it may."""
        for entry, source in self.denied:
            if self._matches(entry, spec, allow=False):
                return f"deniedMcpServers in {source}"
        if self.allowed is None:
            return None
        stdio = "url" not in spec
        kind = "serverCommand" if stdio else "serverUrl"
        strict = any(kind in entry for entry, _ in self.allowed)
        for entry, _ in self.allowed:
            usable = kind in entry or ("serverName" in entry and not strict)
            if usable and self._matches(entry, spec, allow=True):
                return None

        return f"not in allowedMcpServers of {', '.join(self.allowed_by) or 'the settings'}"

    def _matches(self, entry: Mapping[str, Any], spec: Mapping[str, Any], *, allow: bool) -> bool:
        values = self.values or {}
        if "serverName" in entry:
            return bool(spec.get("name") == entry["serverName"])
        if "serverCommand" in entry:
            if "url" in spec:
                return False
            words = [_expand(w, values) for w in entry["serverCommand"]]
            return words == [spec.get("command"), *(spec.get("args") or [])]
        url = spec.get("url")
        pattern = entry.get("serverUrl", "")
        if not isinstance(url, str) or (allow and "${" in pattern):
            return False
        return url_matches(_expand(pattern, values), url)


def entries(
    found: Sequence[tuple[Any, str]], warn: Callable[[str], None], *, allow: bool
) -> list[tuple[dict[str, Any], str]]:
    """The usable entries of (entry, file) pairs; a malformed one, or an allow entry whose URL
    holds `${…}`, is left out with a warning."""
    kept = []
    for entry, source in found:
        if not is_entry(entry):
            warn(f"{source}: {'allowed' if allow else 'denied'}McpServers entry {str(entry)[:80]} skipped")
            continue
        if allow and "${" in str(entry.get("serverUrl", "")):
            warn(f"{source}: allowedMcpServers entry {entry['serverUrl'][:80]} skipped (a ${{…}} in its URL)")
            continue
        kept.append((entry, source))
    return kept


def is_entry(value: Any) -> bool:
    """An entry of either list: exactly one of `serverName`, `serverCommand`, `serverUrl`."""
    if not isinstance(value, dict) or len(value) != 1:
        return False
    [(key, item)] = value.items()
    if key == "serverCommand":
        return isinstance(item, list) and bool(item) and all(isinstance(w, str) for w in item)
    return key in ("serverName", "serverUrl") and isinstance(item, str) and bool(item.strip())
