"""A session's Claude Code setup: its settings files, what they hold, and the project's trust.

`load_claude_setup` reads the files once per session (`settings_files.py`) and keeps, per file,
what the rest of the agent reads from them: the permission rules (read now, `rules.py`), `hooks`,
`permissions.defaultMode`, `additionalDirectories` and `disableBypassPermissionsMode`,
`enabledMcpjsonServers` / `disabledMcpjsonServers` / `enableAllProjectMcpServers`, `outputStyle`,
`env`, `model` and `claudeMdExcludes`, with the warnings of the reading; and the plugins that
`enabledPlugins` enables, found installed (`plugins.py`). How they merge (Claude
Code's rules): a single value from the highest file that sets it; lists (rules, directories,
server names) pooled from every file; `hooks` kept per file (they add up).

What a project file would widen (`widenings.py`; which keys widen is `settings_keys.py`'s) is
listed for the trust question (`trust.py`) and read from it only once the folder is trusted: its
allow rules, a `defaultMode` that asks less, `additionalDirectories`, `env` (never its loader or
shell start-up variables: `project_env.py`), hooks, `disableAllHooks`, the MCP approvals, and the
plugins it enables. Everything that only restricts (deny and ask rules,
`disableBypassPermissionsMode`, `disabledMcpjsonServers`, a stricter mode, a plugin's `false`)
applies at once. The user's own files, acp-agent's, and the part of a local file the user's hand
wrote (`local_owner.py`) need no trust.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from acp_agent.permissions.rules import BEHAVIORS, Behavior, Rule, RuleOrigin, read_rule
from acp_agent.session.claude.local_owner import LocalOwners
from acp_agent.session.claude.plugins import Plugin, find_plugins, plugins_dir
from acp_agent.session.claude.project_env import never_from_project
from acp_agent.session.claude.saved_rules import save_rules
from acp_agent.session.claude.settings_files import (
    SettingsFile,
    claude_config_dir,
    find_settings,
    repository_root,
)
from acp_agent.session.claude.trust import ProjectTrust, TrustStore, Widening
from acp_agent.session.claude.widenings import (
    MODE_ALIASES,
    PERMISSION_MODES,
    WIDENING_MODES,
    claude_place,
    file_widenings,
    mode_of,
)

__all__ = ["MODE_ALIASES", "PERMISSION_MODES", "WIDENING_MODES", "ClaudeSetup", "load_claude_setup"]

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class ClaudeSetup:
    """What a session's settings files hold (highest precedence first), read once per session."""

    cwd: Path
    root: Path
    """The repository root (a worktree's main checkout), else the cwd: where the local file is."""
    files: tuple[SettingsFile, ...] = ()
    rules: tuple[Rule, ...] = ()
    warnings: tuple[str, ...] = ()
    trust: ProjectTrust | None = None
    plugins: tuple[Plugin, ...] = ()
    """The enabled plugins found installed (a project's enabling may still wait for trust)."""
    owners: LocalOwners | None = None
    """Whose hand made the local settings: the agent's "always" answers are recorded there."""

    def in_force(self, file: SettingsFile) -> bool:
        """Whether what `file` widens takes effect: the user's, or a project's once trusted."""
        return not file.project or self.trust is None or self.trust.trusted

    def value(self, *keys: str, widening: bool = False) -> tuple[Any, SettingsFile] | None:
        """The highest file's value at `keys` (a project file's only once trusted, if `widening`)."""
        for file in self.files:
            value = file.get(*keys)
            if value is not None and (not widening or self.in_force(file)):
                return value, file
        return None

    def listed(self, *keys: str, widening: bool = False) -> list[tuple[str, SettingsFile]]:
        """Every file's items at `keys`, highest file first, each once."""
        found: dict[str, tuple[str, SettingsFile]] = {}
        for file in self.files:
            if widening and not self.in_force(file):
                continue
            for item in file.get(*keys) or ():
                found.setdefault(item, (item, file))
        return list(found.values())

    @property
    def default_mode(self) -> tuple[str, SettingsFile] | None:
        """`permissions.defaultMode`: the highest file's that may take effect (a project's mode
        that asks less, once trusted), as this agent names modes."""
        for file in self.files:
            mode = mode_of(file.get("permissions", "defaultMode"))
            if mode is not None and (mode not in WIDENING_MODES or self.in_force(file)):
                return mode, file
        return None

    def first_mode(self, offered: tuple[str, ...]) -> str | None:
        """A new session's mode: the `defaultMode` in force, if the session offers it."""
        found = self.default_mode
        if found is None or found[0] not in offered:
            return None
        log.info("claude.default_mode", mode=found[0], source=found[1].shown)
        return found[0]

    @property
    def bypass_disabled(self) -> bool:
        """`disableBypassPermissionsMode: "disable"` in any file: bypassPermissions is not offered."""
        return any(f.get("permissions", "disableBypassPermissionsMode") == "disable" for f in self.files)

    def additional_directories(self) -> list[tuple[str, SettingsFile]]:
        """`permissions.additionalDirectories` in force, as written (relative ones are the cwd's)."""
        return self.listed("permissions", "additionalDirectories", widening=True)

    def hooks(self) -> list[tuple[SettingsFile, dict[str, Any]]]:
        """Each file's `hooks` in force (they add up across files), highest file first."""
        return [(f, h) for f in self.files if isinstance(h := f.get("hooks"), dict) and self.in_force(f)]

    def env(self) -> dict[str, str]:
        """`env` merged per variable (the highest file wins each); a project's once trusted, and
        never its loader or shell start-up variables (`project_env.py`)."""
        merged: dict[str, str] = {}
        for file in reversed(self.files):
            values = file.get("env")
            if isinstance(values, dict) and self.in_force(file):
                merged.update(
                    {
                        k: v
                        for k, v in values.items()
                        if isinstance(v, str) and not (file.project and never_from_project(k))
                    }
                )
        return merged

    def rules_in_force(self) -> Iterator[Rule]:
        """The rules that apply now: every deny and ask rule, and the allow rules of the files in
        force (a project's wait for trust)."""
        trusted = self.trust is None or self.trust.trusted
        return (r for r in self.rules if r.behavior != "allow" or not r.origin.project or trusted)

    def rules_key(self) -> Hashable:
        """Changes when `rules_in_force` does: the project's trust answered."""
        return self.trust.state if self.trust is not None else ""

    async def keep_rules(self, behavior: Behavior, texts: Sequence[str]) -> Path:
        """An "always" answer written back as rules to the local settings file (`saved_rules.py`),
        recorded as the user's own hand (`local_owner.py`)."""
        return await save_rules(self.root, behavior, texts, self.owners)

    def plugins_in_force(self) -> tuple[Plugin, ...]:
        """The plugins whose commands, skills and agents the session offers now: the user's, and
        those a project file enables once the folder is trusted."""
        trust = self.trust
        return tuple(
            p for p in self.plugins if p.widening is None or (trust is not None and trust.allows(p.widening))
        )

    def waiting(self) -> list[Widening]:
        """What waits for trust (or was declined)."""
        return list(self.trust.left_off()) if self.trust is not None else []

    def permission_notes(self) -> list[str]:
        """`/permissions`' lines after the rules: what waits for the project's trust (or was
        declined), and the rules skipped or kept with a warning."""
        lines: list[str] = []
        if waiting := self.waiting():
            state = (
                "declined"
                if self.trust is not None and self.trust.state == "declined"
                else "waiting for trust"
            )
            lines.append(f"Not in force ({state}):")
            lines += [f"  - {w.line()}" for w in waiting]
        if self.warnings:
            lines.append("Skipped or kept with a warning:")
            lines += [f"  - {w}" for w in self.warnings]
        return lines

    def describe_files(self) -> str:
        """For /status: the files read, and the warnings."""
        files = ", ".join(f"{f.shown} ({f.scope})" for f in self.files) or "none found"
        lines = [f"Claude settings: {files}"]
        lines += [f"  - warning: {w}" for w in self.warnings]
        if self.plugins:
            in_force = self.plugins_in_force()
            lines.append(f"Claude plugins: {len(in_force)} of {len(self.plugins)} in force")
            lines += [
                f"  - {p.line()}" + ("" if p in in_force else " (waits for the project's trust)")
                for p in self.plugins
            ]
        if self.trust is not None and self.trust.needed:
            lines.append(f"Project trust: {self.trust.describe()}")
        return "\n".join(lines)


def load_claude_setup(
    cwd: Path,
    *,
    home: Path | None,
    config_dir: Path | None,
    trust_store: TrustStore | None,
    tracked: Callable[[Path, Path], bool] | None = None,
    owners: LocalOwners | None = None,
) -> ClaudeSetup:
    """The setup of a session at `cwd` (absolute, resolved); the remembered trust answer taken.
    `owners` records whose hand made the local settings (None: an untracked file is the user's)."""
    warnings: list[str] = []
    root = repository_root(cwd)  # found once: the local settings and the trust answer both sit there
    files = find_settings(
        cwd, root, home=home, config_dir=config_dir, warn=warnings.append, tracked=tracked, owners=owners
    )
    rules: list[Rule] = []
    for file in files:
        origin = RuleOrigin(file.shown, file.anchor, file.project)
        for behavior in BEHAVIORS:
            for text in file.get("permissions", behavior) or ():
                rule, warning = read_rule(text, behavior, origin, cwd=cwd, home=home)
                if warning:
                    warnings.append(f"{file.shown}: {warning}")
                if rule is not None:
                    rules.append(rule)
        if file.project:
            skipped = [k for k in file.get("env") or () if never_from_project(k)]
            if skipped:
                warnings.append(
                    f"{file.shown}: env {', '.join(sorted(skipped))} skipped (a loader or shell start-up "
                    "variable is never taken from a project's file)"
                )
        mode = file.get("permissions", "defaultMode")
        if mode is not None and mode_of(mode) is None:
            warnings.append(f"{file.shown}: permissions.defaultMode {str(mode)[:40]!r} is not a mode here")
        bypass = file.get("permissions", "disableBypassPermissionsMode")
        if bypass is not None and bypass != "disable":
            warnings.append(f'{file.shown}: disableBypassPermissionsMode takes only "disable"')
    plugins = find_plugins(files, plugins_dir(claude_config_dir(home)), warnings.append)
    widening = [w for f in files if f.project for w in file_widenings(f, rules, cwd, root)]
    widening += [p.widening for p in plugins if p.widening is not None]
    trust = ProjectTrust(root, trust_store, list(dict.fromkeys(widening)), place=claude_place(cwd, root))
    trust.recall()
    for warning in warnings:
        log.warning("claude.settings_warning", warning=warning)
    return ClaudeSetup(cwd, root, files, tuple(rules), tuple(warnings), trust, plugins, owners)
