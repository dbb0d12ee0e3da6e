"""Claude Code's plugins: which the settings enable, and where their installed copies are.

`enabledPlugins` (`{"plugin@marketplace": true|false}`) may be in any settings file; per key, the
highest file that says `true` or `false` decides (Claude Code merges objects key by key). A
project file's `true` (or a local file git tracks) is a widening: it waits for the trust question
(`Widening("plugin", …)`, registered before the first prompt), unless one of the user's own files
enables the plugin too. A `false` restricts, so it applies at once.

The installed copies are in Claude Code's plugin directory, `~/.claude/plugins/` (or
`$CLAUDE_CONFIG_DIR/plugins/`). When `installed_plugins.json` there is present and well-formed it
says where each plugin is (`{"plugins": {"name@mkt": [{"installPath": …, "version": …}]}}`: the
shape third-party code shows, not documented by Anthropic); otherwise the cache layout is read,
`cache/<marketplace>/<plugin>/<version>/`, taking the newest version (the highest dotted number,
else the most recently changed directory). A plugin's directory must resolve inside the plugin
directory and be a directory; its `.claude-plugin/plugin.json`, when present, must be a JSON object
with a `name`, which then names the plugin's commands, skills and agents (`name:command`).

The commands, skills and agents themselves are read by the same readers as the project's
(`claude_code/conventions/convention_files.py`), confined to the plugin's directory. Its hooks, MCP
servers, output styles and the manifest's path fields are not honoured (noted per plugin). Bad
input (a malformed file, a plugin enabled but not installed, a directory that leads out, a FIFO,
more than MAX_PLUGINS enabled) is skipped with a warning; the session goes on.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_agent.claude_code.settings.settings_files import SettingsFile, parse_json_object
from acp_agent.claude_code.setup.trust import Widening
from acp_agent.tools.files.provided import ProvidedText, Refusal, read_provided_file

__all__ = ["MAX_PLUGINS", "MAX_VERSIONS", "Plugin", "find_plugins", "plugins_dir"]

MAX_PLUGINS = 50
"""Enabled plugins read per session (sorted by key); the rest are skipped, with one warning."""
MAX_VERSIONS = 200
"""Version directories looked at per plugin in the cache layout."""
INDEX_BYTES = 4 << 20
MANIFEST_BYTES = 64 * 1024
_PART = r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}"
_KEY = re.compile(rf"^({_PART})@({_PART})$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_DOTTED = re.compile(r"^v?(\d+(?:\.\d+)*)$")
_NOT_HONOURED = (
    ("hooks/hooks.json", "hooks"),
    (".mcp.json", "MCP servers"),
    ("output-styles", "output styles"),
)


@dataclass(frozen=True, slots=True)
class Plugin:
    """One enabled, installed plugin: what its commands, skills and agents are read from."""

    key: str
    """As `enabledPlugins` names it: `plugin@marketplace`."""
    name: str
    """Its namespace: `name:command` (plugin.json's `name`, else the key's plugin part)."""
    root: Path
    """Its directory, resolved: every file read from it must resolve inside it."""
    version: str
    enabled_by: str
    """The settings file that enables it, as `/status` names files."""
    widening: Widening | None = None
    """A project file's enabling, which waits for trust; None: the user's own."""
    not_honoured: tuple[str, ...] = ()
    """What it holds that is not used here (its hooks, MCP servers, output styles)."""

    def line(self) -> str:
        """For /status."""
        extra = f"; its {', '.join(self.not_honoured)} not honoured" if self.not_honoured else ""
        where = f"version {self.version}, {self.root}; enabled by {self.enabled_by}"
        return f"{self.key} (/{self.name}:…, {where}{extra})"


def plugins_dir(claude_dir: Path | None) -> Path | None:
    """Claude Code's plugin directory under the user's Claude Code directory."""
    return claude_dir / "plugins" if claude_dir is not None else None


def find_plugins(
    files: Sequence[SettingsFile], directory: Path | None, warn: Callable[[str], None]
) -> tuple[Plugin, ...]:
    """The plugins `files` (highest precedence first) enable that are installed in `directory`."""
    enabled = list(_enabled(files, warn))
    if not enabled:
        return ()
    if len(enabled) > MAX_PLUGINS:
        left = [key for key, _, _ in enabled[MAX_PLUGINS:]]
        warn(f"{len(left)} enabled plugins not read (the cap of {MAX_PLUGINS}): {', '.join(left[:5])}…")
        enabled = enabled[:MAX_PLUGINS]
    if directory is None:
        warn("enabled plugins not read: no home directory to find ~/.claude/plugins in")
        return ()
    try:
        boundary = Path(os.path.realpath(directory))
    except (OSError, ValueError):
        return ()
    index = _index(directory, boundary, warn)
    found: list[Plugin] = []
    for key, file, widening in enabled:
        where = index(key) if index is not None else _cached(directory, key)
        if isinstance(where, str):
            warn(f"plugin {key} (enabled by {file.shown}) skipped: {where}")
            continue
        plugin = _plugin(key, where, boundary, file, widening)
        if isinstance(plugin, str):
            warn(f"plugin {key} (enabled by {file.shown}) skipped: {plugin}")
        else:
            found.append(plugin)
    return tuple(found)


def _enabled(
    files: Sequence[SettingsFile], warn: Callable[[str], None]
) -> Iterator[tuple[str, SettingsFile, Widening | None]]:
    """(key, the file that enables it, its widening when that waits for trust), sorted by key."""
    said: dict[str, list[tuple[bool, SettingsFile]]] = {}
    for file in files:
        value = file.get("enabledPlugins")
        for key, on in (value or {}).items():
            if not isinstance(on, bool):
                warn(f"{file.shown}: enabledPlugins[{key[:80]!r}] skipped (must be true or false)")
            elif _KEY.match(key) is None:
                warn(f"{file.shown}: enabledPlugins key {key[:80]!r} skipped (not plugin@marketplace)")
            else:
                said.setdefault(key, []).append((on, file))
    for key in sorted(said):
        on, file = said[key][0]  # the highest file that says
        if not on:
            continue
        if not file.project:
            yield key, file, None
            continue
        own = next(((v, f) for v, f in said[key] if not f.project), None)
        if own is not None and own[0]:
            yield key, own[1], None  # the user's own files enable it too: no trust needed
        else:
            yield key, file, Widening("plugin", file.shown, key, file=file.path)


def _index(
    directory: Path, boundary: Path, warn: Callable[[str], None]
) -> Callable[[str], tuple[Path, str] | str] | None:
    """`installed_plugins.json` as a lookup, key → (its directory, version) or why not; None when
    the file is absent or not well-formed (then the cache layout is read)."""
    path = directory / "installed_plugins.json"
    shown = f"{path}"
    got = read_provided_file(path, inside=boundary, max_bytes=INDEX_BYTES + 1)
    if got is None:
        return None
    if isinstance(got, Refusal):
        warn(f"{shown}: not read ({got.reason}); the cache layout is read instead")
        return None
    assert isinstance(got, ProvidedText)
    if got.size > INDEX_BYTES:
        warn(f"{shown}: skipped (larger than {INDEX_BYTES >> 20} MiB); the cache layout is read instead")
        return None
    data = parse_json_object(got.data, shown, warn)
    plugins = data.get("plugins") if data is not None else None
    if not isinstance(plugins, dict):
        if data is not None:
            warn(f"{shown}: skipped (no `plugins` object); the cache layout is read instead")
        return None

    def lookup(key: str) -> tuple[Path, str] | str:
        entries = plugins.get(key)
        if entries is None:
            return f"not installed (not in {shown})"
        for entry in entries if isinstance(entries, list) else [entries]:
            place = entry.get("installPath") if isinstance(entry, dict) else None
            if isinstance(place, str) and place:
                version = entry.get("version")
                where = Path(os.path.expanduser(place))
                return directory / where, str(version) if isinstance(version, (str, int, float)) else "?"
        return f"its entry in {shown} has no installPath"

    return lookup


def _cached(directory: Path, key: str) -> tuple[Path, str] | str:
    """The newest version of `key` in the cache layout, or why there is none."""
    match = _KEY.match(key)
    assert match is not None  # checked by `_enabled`
    plugin, marketplace = match.groups()
    holder = directory / "cache" / marketplace / plugin
    versions: list[tuple[str, float]] = []
    try:
        with os.scandir(holder) as entries:
            for entry in entries:
                if len(versions) >= MAX_VERSIONS:
                    break
                if not entry.name.startswith("."):
                    try:
                        versions.append((entry.name, entry.stat(follow_symlinks=False).st_mtime))
                    except OSError:
                        continue
    except (FileNotFoundError, NotADirectoryError):
        return f"not installed (no {holder})"
    except OSError as exc:
        return f"{holder} cannot be listed ({exc.strerror or exc})"
    if not versions:
        return f"not installed ({holder} holds no version)"
    dotted = [
        (tuple(int(p) for p in m.group(1).split(".")), name)
        for name, _ in versions
        if (m := _DOTTED.match(name))
    ]
    by_time = max(versions, key=lambda v: (v[1], v[0]))[0]
    newest = max(dotted)[1] if len(dotted) == len(versions) else by_time
    return holder / newest, newest


def _plugin(
    key: str, where: tuple[Path, str], boundary: Path, file: SettingsFile, widening: Widening | None
) -> Plugin | str:
    """The plugin installed at `where`, or why it is skipped."""
    path, version = where
    real = Path(os.path.realpath(path))
    if real != boundary and not real.is_relative_to(boundary):
        return f"its directory {path} resolves to {real}, outside {boundary}"
    try:
        info = os.stat(real)
    except OSError as exc:
        return f"its directory {path} is not there ({exc.strerror or exc})"
    if not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a directory"
    name = key.split("@", 1)[0]
    manifest = real / ".claude-plugin" / "plugin.json"
    got = read_provided_file(manifest, inside=real, max_bytes=MANIFEST_BYTES + 1)
    data: dict[str, Any] = {}
    if isinstance(got, Refusal):
        return f"{manifest} refused: {got.reason}"
    if isinstance(got, ProvidedText):
        if got.size > MANIFEST_BYTES:
            return f"{manifest} is larger than {MANIFEST_BYTES // 1024} KiB"
        problems: list[str] = []
        parsed = parse_json_object(got.data, str(manifest), problems.append)
        if parsed is None:
            return problems[0]
        named = parsed.get("name")
        if not isinstance(named, str) or _NAME.match(named) is None:
            return f"{manifest}: `name` is missing or not a plain name (letters, digits, '.', '_', '-')"
        name, data = named, parsed
    return Plugin(key, name, real, version, file.shown, widening, _not_honoured(real, data))


def _not_honoured(root: Path, manifest: dict[str, Any]) -> tuple[str, ...]:
    """The parts of a plugin this agent does not use, present in it."""
    held = [what for place, what in _NOT_HONOURED if os.path.lexists(root / place)]
    for key, what in (("hooks", "hooks"), ("mcpServers", "MCP servers"), ("outputStyles", "output styles")):
        if key in manifest and what not in held:
            held.append(what)
    moved = [key for key in ("commands", "agents", "skills") if key in manifest]
    if moved:
        held.append(f"manifest paths ({', '.join(moved)}: the default directories are read)")
    return tuple(held)
