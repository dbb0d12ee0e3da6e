"""Every settings key the agent reads is classified, and a project's file cannot widen anything
without the trust question listing exactly that (issue 41, "Done when").

Three checks hold the list to the code:
- the source: every settings key read with a literal (`file.get("permissions", "allow")`,
  `setup.value("outputStyle")`, `setup.listed(...)`) in a module that reads settings is in
  `SETTINGS_KEYS` (a key read later without a line there fails here, and at its first read:
  `SettingsFile.get` refuses it);
- the table: each key has samples here, with whether the value widens and the line the trust
  question then shows (a key added to the table without them fails here);
- the behaviour: a project's `.claude/settings.json` holding just that sample, read by
  `load_claude_setup`, lists exactly those lines for the trust question, and nothing when the
  value does not widen.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

import acp_agent
from acp_agent.claude_code.settings.settings_files import SettingsFile
from acp_agent.claude_code.settings.settings_keys import SETTINGS_KEYS, UnclassifiedKey
from acp_agent.claude_code.setup.setup import load_claude_setup

WHERE = "(.claude/settings.json)"
SAMPLES: dict[str, list[tuple[Any, list[str]]]] = {
    "permissions.allow": [(["Bash(npm test *)"], ["allow rule: Bash(npm test *)"])],
    "permissions.ask": [(["Bash(git push *)"], [])],
    "permissions.deny": [(["Read(./.env)"], [])],
    "permissions.defaultMode": [
        ("acceptEdits", ["defaultMode: acceptEdits"]),
        ("bypassPermissions", ["defaultMode: bypassPermissions"]),
        ("plan", []),
        ("dontAsk", []),
        ("default", []),
    ],
    "permissions.additionalDirectories": [(["../common"], ["additional directory: ../common"])],
    "permissions.disableBypassPermissionsMode": [("disable", [])],
    "hooks": [
        ({"Stop": [{"hooks": [{"type": "command", "command": "make lint"}]}]}, ["hook: Stop: make lint"])
    ],
    "disableAllHooks": [(True, ["disableAllHooks: turns off every hook, your own included"]), (False, [])],
    "env": [({"NODE_ENV": "dev", "LD_PRELOAD": "/tmp/x.so"}, ["env: NODE_ENV=dev"])],  # LD_*: never
    "enabledMcpjsonServers": [(["github"], ["MCP server: github"])],
    "enableAllProjectMcpServers": [(True, ["MCP servers: every server of .mcp.json"]), (False, [])],
    "disabledMcpjsonServers": [(["github"], [])],
    "enabledPlugins": [({"fmt@team": True}, ["plugin: fmt@team"]), ({"fmt@team": False}, [])],
    "outputStyle": [("Explanatory", [])],
    "claudeMdExcludes": [(["**/other/CLAUDE.md"], [])],
    "model": [("opus", [])],
    "allowedMcpServers": [([{"serverName": "github"}], ['MCP allowlist entry: {"serverName": "github"}'])],
    "deniedMcpServers": [([{"serverName": "github"}], [])],
    "allowManagedPermissionRulesOnly": [(True, [])],  # managed only: a project's does nothing
    "allowManagedHooksOnly": [(False, [])],
    "allowManagedMcpServersOnly": [(False, [])],
    "availableModels": [(["opus"], [])],
    "enforceAvailableModels": [(False, [])],
    "apiKeyHelper": [("sh ./get-key.sh", [])],  # never run from a project: named in /status
    "awsAuthRefresh": [("aws sso login", [])],
    "awsCredentialExport": [("sh ./creds.sh", [])],
}
"""Per key: (a value, the trust question's lines for it: none when it does not widen)."""


def test_every_key_in_the_table_has_samples_and_each_classification_matches_them() -> None:
    assert set(SAMPLES) == set(SETTINGS_KEYS)
    for key, samples in SAMPLES.items():
        widening = {bool(lines) for _, lines in samples}
        expected = {"always": {True}, "never": {False}, "by value": {True, False}}[SETTINGS_KEYS[key].widens]
        assert widening == expected, key


@pytest.mark.parametrize(
    ("key", "value", "lines"),
    [(key, value, lines) for key, samples in SAMPLES.items() for value, lines in samples],
)
def test_a_projects_file_widens_exactly_what_the_trust_question_lists(
    tmp_path: Path, key: str, value: Any, lines: list[str]
) -> None:
    root, home = tmp_path / "repo", tmp_path / "home"
    (root / ".git").mkdir(parents=True)
    plugin = home / ".claude" / "plugins" / "cache" / "team" / "fmt" / "1.0.0"
    (plugin / "commands").mkdir(parents=True)
    (plugin / "commands" / "fmt.md").write_text("---\ndescription: Format\n---\nFormat it.\n")
    data: dict[str, Any] = {}
    *parents, last = key.split(".")
    holder = data
    for name in parents:
        holder = holder.setdefault(name, {})
    holder[last] = value
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text(json.dumps(data))
    setup = load_claude_setup(root, home=home, config_dir=None, trust_store=None)
    assert setup.trust is not None
    assert [item.line() for item in setup.trust.items] == [f"{line} {WHERE}" for line in lines]


def test_an_unclassified_key_is_never_read() -> None:
    file = SettingsFile("project", Path("/x/.claude/settings.json"), "x", Path("/x"), {"statusLine": {}})
    with pytest.raises(UnclassifiedKey, match="statusLine"):
        file.get("statusLine")


READERS = ("get", "value", "listed")
RECEIVERS = frozenset({"file", "f", "setup", "own", "self.setup", "session.claude"})


def _literal_reads(tree: ast.AST, receivers: frozenset[str]) -> list[str]:
    """Dotted settings keys read with literals: `<receiver>.get|value|listed("a", "b", ...)`."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in READERS or ast.unparse(node.func.value) not in receivers:
            continue
        args = node.args
        if args and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in args):
            found.append(".".join(str(a.value) for a in args if isinstance(a, ast.Constant)))
    return found


def test_every_key_read_in_the_source_is_classified() -> None:
    package = Path(acp_agent.__file__).parent
    read: dict[str, list[str]] = {}
    # the settings are read in claude_code/ and session/ alone
    paths = [*(package / "claude_code").rglob("*.py"), *(package / "session").rglob("*.py")]
    for path in paths:
        receivers = RECEIVERS | {"self"} if path.name == "setup.py" else RECEIVERS  # ClaudeSetup's own
        for key in _literal_reads(ast.parse(path.read_text(encoding="utf-8")), receivers):
            read.setdefault(key, []).append(str(path.relative_to(package)))
    assert {"claudeMdExcludes", "outputStyle", "permissions.additionalDirectories"} <= set(read), read
    assert {k: v for k, v in read.items() if k not in SETTINGS_KEYS} == {}
