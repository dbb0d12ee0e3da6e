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

The managed policy (`managed.py`), when there is one, is the first file: nothing below overrides
it, and its locks say what of the others still applies: `allowManagedPermissionRulesOnly` (only
its rules; no "always" answer is offered or kept, `session/editor/permissions.py`),
`allowManagedHooksOnly` (only its hooks, `hook_config.py`), `allowManagedMcpServersOnly` and
`managed-mcp.json` (`mcp_files.py`, `mcp_policy.py`). What it overrides is said in `/status` and
`/permissions`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from acp_agent.claude_code.settings.agent_settings import HELPER_KEYS, agent_variable
from acp_agent.claude_code.settings.local_owner import LocalOwners
from acp_agent.claude_code.settings.managed import LOCKS, ManagedPolicy
from acp_agent.claude_code.settings.mcp_policy import McpPolicy, entries
from acp_agent.claude_code.settings.project_env import never_from_project
from acp_agent.claude_code.settings.saved_rules import save_rules
from acp_agent.claude_code.settings.settings_files import (
    SettingsFile,
    claude_config_dir,
    find_settings,
    repository_root,
)
from acp_agent.claude_code.setup.plugins import Plugin, find_plugins, plugins_dir
from acp_agent.claude_code.setup.trust import ProjectTrust, TrustStore, Widening
from acp_agent.claude_code.setup.widenings import (
    MODE_ALIASES,
    PERMISSION_MODES,
    WIDENING_MODES,
    claude_place,
    file_widenings,
    mode_of,
)
from acp_agent.model.sdk import taken_secrets
from acp_agent.permissions.rules import BEHAVIORS, Behavior, Rule, RuleOrigin, read_rule

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
    policy: ManagedPolicy | None = None
    """The managed policy read at start-up (its settings are the first of `files`)."""
    overridden: tuple[str, ...] = ()
    """What the managed policy overrides of the other files, in words (`/status`, `/permissions`)."""
    notes: list[str] = field(default_factory=list)
    """More lines for `/status` (the session's model, where it came from)."""

    def locked(self, lock: str) -> bool:
        """Whether the managed policy's lock `lock` (`managed.py:LOCKS`) is on."""
        return self.policy is not None and self.policy.locked(lock)

    def in_force(self, file: SettingsFile) -> bool:
        """Whether what `file` widens takes effect: the user's, or a project's once every item it
        registered for the trust question is allowed (`ProjectTrust.allows_file`)."""
        return not file.project or self.trust is None or self.trust.allows_file(file.path)

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
        never its loader or shell start-up variables (`project_env.py`); never a credential the
        model client took (a settings file's `ANTHROPIC_API_KEY` is the client's, not a hook's)."""
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
        secrets = set(taken_secrets())
        return {k: v for k, v in merged.items() if not (v and v in secrets)}

    def mcp_policy(self, environ: Mapping[str, str]) -> McpPolicy:
        """`allowedMcpServers` and `deniedMcpServers` of the files (`mcp_policy.py`): the allow
        lists of the files in force, or the managed one alone under `allowManagedMcpServersOnly`;
        the deny lists of every file. Entries expand from `environ` with the managed `env` over it."""
        warnings: list[str] = []
        only_managed = self.locked("allowManagedMcpServersOnly")
        allowed = [
            (entry, f.shown)
            for f in self.files
            if (f.scope == "managed" or not only_managed) and self.in_force(f)
            for entry in f.get("allowedMcpServers") or ()
        ]
        allowed_by = tuple(
            f.shown
            for f in self.files
            if (f.scope == "managed" or not only_managed) and self.in_force(f)
            if f.get("allowedMcpServers") is not None
        )
        denied = [(entry, f.shown) for f in self.files for entry in f.get("deniedMcpServers") or ()]
        managed_env = self.files[0].get("env") if self.files and self.files[0].scope == "managed" else None
        values = {**environ, **(managed_env if isinstance(managed_env, dict) else {})}
        policy = McpPolicy(
            tuple(entries(allowed, warnings.append, allow=True)) if allowed_by else None,
            tuple(entries(denied, warnings.append, allow=False)),
            values,
            allowed_by,
        )
        for warning in warnings:
            log.warning("claude.mcp_policy_warning", warning=warning)
        return policy

    def rules_in_force(self) -> Iterator[Rule]:
        """The rules that apply now: every deny and ask rule, and the allow rules of the files in
        force (a project's wait for its file's trust, `in_force`)."""
        trust = self.trust
        return (
            r
            for r in self.rules
            if r.behavior != "allow"
            or not r.origin.project
            or trust is None
            or (r.origin.file is not None and trust.allows_file(r.origin.file))
        )

    def rules_key(self) -> Hashable:
        """Changes when `rules_in_force` does: the project's trust answered, or an item expected."""
        return self.trust.key() if self.trust is not None else ""

    @property
    def only_policy_rules(self) -> bool:
        """The managed policy's `allowManagedPermissionRulesOnly` is on (`RuleSource`)."""
        return self.locked("allowManagedPermissionRulesOnly")

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
            state = "declined" if self.trust is not None and self.trust.declined else "waiting for trust"
            lines.append(f"Not in force ({state}):")
            lines += [f"  - {w.line()}" for w in waiting]
        if self.warnings:
            lines.append("Skipped or kept with a warning:")
            lines += [f"  - {w}" for w in self.warnings]
        return lines

    def policy_lines(self) -> list[str]:
        """The managed policy, its locks and what it overrides (for /status and /permissions)."""
        if self.policy is None or not self.policy.present:
            return []
        return [*self.policy.describe(), *(f"  - overrides: {line}" for line in self.overridden)]

    def describe_files(self) -> str:
        """For /status: the files read, the managed policy and what it overrides, and the warnings."""
        files = ", ".join(f"{f.shown} ({f.scope})" for f in self.files) or "none found"
        lines = [f"Claude settings: {files}", *self.policy_lines(), *self.notes]
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
    policy: ManagedPolicy | None = None,
) -> ClaudeSetup:
    """The setup of a session at `cwd` (absolute, resolved); the remembered trust answer taken.
    `owners` records whose hand made the local settings (None: an untracked file is the user's);
    `policy` is the managed policy (read once at start-up, `managed.py`)."""
    warnings: list[str] = []
    root = repository_root(cwd)  # found once: the local settings and the trust answer both sit there
    files = find_settings(
        cwd,
        root,
        home=home,
        config_dir=config_dir,
        warn=warnings.append,
        tracked=tracked,
        owners=owners,
        policy=policy,
    )
    locks = {lock for lock in LOCKS if policy is not None and policy.locked(lock)}
    rules: list[Rule] = []
    overridden_rules: dict[str, int] = {}
    for file in files:
        _unmanaged_keys(file, warnings)
        origin = RuleOrigin(file.shown, file.anchor, file.project, file.path)
        locked_out = "allowManagedPermissionRulesOnly" in locks and file.scope != "managed"
        if locked_out:  # its rules are not read: only the policy's apply
            count = sum(len(file.get("permissions", b) or ()) for b in BEHAVIORS)
            if count:
                overridden_rules[file.shown] = overridden_rules.get(file.shown, 0) + count
        for behavior in () if locked_out else BEHAVIORS:
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
    unused = _locked_kinds(locks, policy)  # what a lock keeps from applying is not asked about
    widening = [
        w for f in files if f.project for w in file_widenings(f, rules, cwd, root) if w.kind not in unused
    ]
    widening += [p.widening for p in plugins if p.widening is not None]
    trust = ProjectTrust(root, trust_store, list(dict.fromkeys(widening)), place=claude_place(cwd, root))
    trust.recall()
    for warning in warnings:
        log.warning("claude.settings_warning", warning=warning)
    overridden = _overridden(files, locks, overridden_rules)
    return ClaudeSetup(
        cwd, root, files, tuple(rules), tuple(warnings), trust, plugins, owners, policy, overridden
    )


def _unmanaged_keys(file: SettingsFile, warnings: list[str]) -> None:
    """Warn of what a file that is not the policy sets in vain: a managed-only key, or (in a
    project's file) a credential helper or a variable of the agent's own configuration."""
    if file.scope == "managed":
        return
    managed_only = (*LOCKS, "availableModels", "enforceAvailableModels")
    warnings.extend(
        f"{file.shown}: {key} has no effect here (only the managed policy sets it)"
        for key in managed_only
        if file.get(key) is not None
    )
    if file.scope not in ("local", "project"):
        return  # the user's own files and acp-agent's: read at start-up (`agent_settings.py`)
    whose = "a project's" if file.project else "a folder's local file's"
    warnings.extend(
        f"{file.shown}: {key} not run ({whose} credential helper never is: the model client is "
        "the agent's, set up at start-up from your user-level and the managed settings)"
        for key in HELPER_KEYS
        if file.get(key) is not None
    )
    env = file.get("env")
    names = sorted(k for k in env or () if agent_variable(k) and not never_from_project(k))
    if names:
        reach = "once trusted they reach" if file.project else "they reach"
        warnings.append(
            f"{file.shown}: env {', '.join(names)} not applied to the agent's platform, credentials or "
            "model (settled at start-up from your environment and your user-level and the managed "
            f"settings); {reach} its hooks and MCP servers only"
        )


def _locked_kinds(locks: set[str], policy: ManagedPolicy | None) -> set[str]:
    """The trust question's kinds of item that a lock keeps from applying anyway."""
    kinds = set()
    if "allowManagedHooksOnly" in locks:
        kinds |= {"hook", "disableAllHooks"}
    if policy is not None and policy.mcp_servers is not None:
        kinds |= {"MCP server", "MCP servers"}
    if "allowManagedMcpServersOnly" in locks:
        kinds.add("MCP allowlist entry")
    return kinds


def _overridden(
    files: tuple[SettingsFile, ...], locks: set[str], rules: Mapping[str, int]
) -> tuple[str, ...]:
    """What the managed policy (the first file, if any) overrides of the others, in words."""
    if not files or files[0].scope != "managed":
        return ()
    managed, others = files[0], files[1:]
    lines = [
        f"allowManagedPermissionRulesOnly: {n} rules of {where} not applied" for where, n in rules.items()
    ]
    if "allowManagedPermissionRulesOnly" in locks:
        lines.append('allowManagedPermissionRulesOnly: no "always" answer is offered or kept')
    if "allowManagedHooksOnly" in locks:
        hooked = [f.shown for f in others if f.get("hooks")]
        lines.append(
            "allowManagedHooksOnly: only the policy's hooks run"
            + (f" ({', '.join(hooked)} not)" if hooked else "")
        )
    if "allowManagedMcpServersOnly" in locks:
        lines.append("allowManagedMcpServersOnly: only the policy's allowedMcpServers apply")
    if managed.get("permissions", "disableBypassPermissionsMode") == "disable":
        lines.append("disableBypassPermissionsMode: bypassPermissions is not offered")
    for keys in (("model",), ("permissions", "defaultMode"), ("outputStyle",)):
        value = managed.get(*keys)
        lower = [(f.get(*keys), f.shown) for f in others if f.get(*keys) not in (None, value)]
        if value is not None and lower:
            lines.append(f"{'.'.join(keys)}: {value} over {', '.join(f'{v} in {w}' for v, w in lower)}")
    env = managed.get("env")
    for name, value in env.items() if isinstance(env, dict) else ():
        lower_env = [
            f.shown for f in others if isinstance(e := f.get("env"), dict) and e.get(name, value) != value
        ]
        if lower_env:
            lines.append(f"env {name} over {', '.join(lower_env)}")
    return tuple(lines)
