"""Claude Code's plugins (issue 33 item 9): which the settings enable, where their installed copies
are, what they offer (namespaced `plugin:name`), and every bad input skipped with a warning."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.claude_code.conventions.convention_files import read_conventions
from acp_agent.claude_code.conventions.conventions import Conventions, ConventionsSlot
from acp_agent.claude_code.settings.settings_files import SettingsFile
from acp_agent.claude_code.setup.plugins import MAX_PLUGINS, Plugin, find_plugins
from acp_agent.claude_code.setup.setup import ClaudeSetup, load_claude_setup
from acp_agent.claude_code.setup.trust import TrustStore


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def settings(scope: str, enabled: dict[str, Any], *, project: bool = False) -> SettingsFile:
    path = Path(f"/{scope}/settings.json")
    return SettingsFile(scope, path, f"{scope}.json", path.parent, {"enabledPlugins": enabled}, project)


def install(plugins: Path, key: str, version: str = "1.0.0", manifest: Any = None) -> Path:
    """A plugin in the cache layout, with a command, a skill and an agent in a group."""
    name, marketplace = key.split("@")
    root = plugins / "cache" / marketplace / name / version
    write(root / "commands" / "fmt.md", f"---\ndescription: Format ({version})\n---\nFormat $ARGUMENTS\n")
    write(root / "skills" / "lint" / "SKILL.md", "---\nname: lint\ndescription: Lints code.\n---\nLint it.\n")
    write(
        root / "agents" / "review" / "security.md", "---\nname: security\ndescription: Audits.\n---\nAudit.\n"
    )
    if manifest is not None:
        write(root / ".claude-plugin" / "plugin.json", manifest)
    return root


def found(files: list[SettingsFile], plugins: Path) -> tuple[tuple[Plugin, ...], list[str]]:
    warnings: list[str] = []
    return find_plugins(files, plugins, warnings.append), warnings


def test_the_cache_layout_gives_the_newest_version_and_the_manifest_names_it(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    install(plugins, "fmt@team", "1.9.0")
    newest = install(plugins, "fmt@team", "1.10.0", manifest={"name": "formatter", "hooks": "./h.json"})
    write(newest / "hooks" / "hooks.json", {"hooks": {}})
    [plugin], warnings = found([settings("user", {"fmt@team": True})], plugins)
    assert warnings == []
    assert (plugin.key, plugin.name, plugin.root, plugin.version) == (
        "fmt@team",
        "formatter",
        newest,
        "1.10.0",
    )
    assert plugin.widening is None and plugin.enabled_by == "user.json"
    assert plugin.not_honoured == ("hooks",)  # said in /status: read, not acted on


def test_installed_plugins_json_says_where_and_a_malformed_one_falls_back_to_the_cache(
    tmp_path: Path,
) -> None:
    plugins = tmp_path / "plugins"
    install(plugins, "fmt@team", "1.0.0")
    pinned = install(plugins, "fmt@team", "0.5.0")
    index = {
        "version": 2,
        "plugins": {"fmt@team": [{"scope": "user", "installPath": str(pinned), "version": "0.5.0"}]},
    }
    write(plugins / "installed_plugins.json", index)
    files = [settings("user", {"fmt@team": True, "gone@team": True})]
    [plugin], warnings = found(files, plugins)
    assert plugin.root == pinned and plugin.version == "0.5.0"
    index_file = plugins / "installed_plugins.json"
    assert warnings == [
        f"plugin gone@team (enabled by user.json) skipped: not installed (not in {index_file})"
    ]
    write(plugins / "installed_plugins.json", "{not json")
    [plugin], warnings = found(files, plugins)
    assert plugin.version == "1.0.0"  # the cache layout's newest
    assert "installed_plugins.json: skipped (not valid JSON" in warnings[0]
    assert "gone@team (enabled by user.json) skipped: not installed (no " in warnings[1]


def test_bad_plugins_are_each_skipped_with_a_warning(tmp_path: Path) -> None:
    plugins, outside = tmp_path / "plugins", tmp_path / "outside"
    install(plugins, "good@m")
    install(outside, "out@m")
    (plugins / "cache" / "m" / "out").mkdir(parents=True)
    os.symlink(outside / "cache" / "m" / "out" / "1.0.0", plugins / "cache" / "m" / "out" / "1.0.0")
    (plugins / "cache" / "m" / "pipe").mkdir(parents=True)
    os.mkfifo(plugins / "cache" / "m" / "pipe" / "1.0.0")
    install(plugins, "broken@m", manifest="{oops")
    install(plugins, "nameless@m", manifest={"description": "no name"})
    enabled = dict.fromkeys(("good@m", "out@m", "pipe@m", "broken@m", "nameless@m", "missing@m"), True)
    enabled |= {"no-marketplace": True, "odd@m": "yes", "../x@m": True}
    [plugin], warnings = found([settings("user", enabled)], plugins)
    assert plugin.key == "good@m"
    said = "\n".join(warnings)
    assert (
        f"out@m (enabled by user.json) skipped: its directory {plugins}/cache/m/out/1.0.0 resolves to" in said
    )
    assert f"pipe@m (enabled by user.json) skipped: {plugins}/cache/m/pipe/1.0.0 is not a directory" in said
    assert "broken@m (enabled by user.json) skipped: " in said and "not valid JSON" in said
    assert "nameless@m (enabled by user.json) skipped: " in said and "`name` is missing" in said
    assert "missing@m (enabled by user.json) skipped: not installed" in said
    assert "'no-marketplace' skipped (not plugin@marketplace)" in said
    assert "enabledPlugins['odd@m'] skipped (must be true or false)" in said
    assert "'../x@m' skipped (not plugin@marketplace)" in said
    assert len(warnings) == 8


def test_a_thousand_enabled_plugins_read_the_first_fifty_and_say_so(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    write(plugins / "installed_plugins.json", {"plugins": {}})
    for i in range(MAX_PLUGINS):
        write(plugins / "cache" / "m" / f"p{i:04}" / "1.0.0" / "commands" / "x.md", "x\n")
    enabled = {f"p{i:04}@m": True for i in range(1000)}
    index = {k: [{"installPath": str(plugins / "cache" / "m" / k[:5] / "1.0.0")}] for k in enabled}
    write(plugins / "installed_plugins.json", {"plugins": index})
    result, warnings = found([settings("user", enabled)], plugins)
    assert len(result) == MAX_PLUGINS and result[-1].key == f"p{MAX_PLUGINS - 1:04}@m"
    first = ", ".join(f"p{i:04}@m" for i in range(MAX_PLUGINS, MAX_PLUGINS + 5))
    assert warnings == [f"950 enabled plugins not read (the cap of {MAX_PLUGINS}): {first}…"]


def test_a_projects_enabling_waits_for_trust_and_its_false_applies_at_once(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    for key in ("a@m", "b@m", "c@m", "d@m"):
        install(plugins, key)
    project = settings("project", {"a@m": True, "b@m": True, "c@m": False}, project=True)
    user = settings("user", {"b@m": True, "c@m": True, "d@m": False})
    result, warnings = found([project, user], plugins)
    assert warnings == []
    by_key = {p.key: p for p in result}
    assert set(by_key) == {"a@m", "b@m"}  # c: the project's false wins; d: the user's false
    assert (
        by_key["a@m"].widening is not None and by_key["a@m"].widening.line() == "plugin: a@m (project.json)"
    )
    assert by_key["b@m"].widening is None and by_key["b@m"].enabled_by == "user.json"  # the user's own too


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, Path]:
    root, home = tmp_path / "repo", tmp_path / "home"
    (root / ".git").mkdir(parents=True)
    home.mkdir()
    return {"root": root, "home": home, "plugins": home / ".claude" / "plugins"}


def setup_of(repo: dict[str, Path], store: TrustStore) -> ClaudeSetup:
    return load_claude_setup(
        repo["root"], home=repo["home"], config_dir=None, trust_store=store, tracked=lambda r, p: False
    )


async def test_a_project_plugin_is_a_trust_item_and_is_in_force_once_trusted(
    repo: dict[str, Path], tmp_path: Path
) -> None:
    install(repo["plugins"], "fmt@team", manifest={"name": "formatter"})
    install(repo["plugins"], "mine@team")
    write(repo["root"] / ".claude" / "settings.json", {"enabledPlugins": {"fmt@team": True}})
    write(repo["home"] / ".claude" / "settings.json", {"enabledPlugins": {"mine@team": True}})
    store = TrustStore(tmp_path / "trust.json")
    setup = setup_of(repo, store)
    assert setup.trust is not None
    assert [i.line() for i in setup.trust.items] == ["plugin: fmt@team (.claude/settings.json)"]
    assert [p.key for p in setup.plugins_in_force()] == ["mine@team"]
    assert (
        "fmt@team (/formatter:…" in setup.describe_files()
        and "(waits for the project's trust)" in setup.describe_files()
    )
    await setup.trust.answer("trusted", remember=True)
    assert [p.key for p in setup.plugins_in_force()] == ["fmt@team", "mine@team"]
    assert [p.key for p in setup_of(repo, store).plugins_in_force()] == [
        "fmt@team",
        "mine@team",
    ]  # remembered


def test_a_plugins_commands_skills_and_agents_are_namespaced_and_confined(
    repo: dict[str, Path], tmp_path: Path
) -> None:
    root = install(repo["plugins"], "fmt@team", manifest={"name": "formatter"})
    secret = write(tmp_path / "secret.md", "---\ndescription: SECRET\n---\nSECRET\n")
    os.symlink(secret, root / "commands" / "leak.md")
    os.mkfifo(root / "commands" / "pipe.md")
    write(root / "agents" / "bad.md", "---\ndescription: no name\n---\nbody\n")
    write(repo["root"] / ".claude" / "commands" / "fmt.md", "the project's own /fmt\n")
    write(repo["home"] / ".claude" / "settings.json", {"enabledPlugins": {"fmt@team": True}})
    setup = setup_of(repo, TrustStore(tmp_path / "trust.json"))
    conventions = read_conventions(
        repo["root"], home=repo["home"], config_dir=None, plugins=setup.plugins_in_force()
    )
    assert [c.name for c in conventions.commands] == ["fmt", "formatter:fmt"]  # both stay available
    command = conventions.find("formatter:fmt")
    assert command is not None and "Format $ARGUMENTS" in command.body  # type: ignore[union-attr]
    assert [s.name for s in conventions.skills] == ["formatter:lint"]
    assert [a.name for a in conventions.agents] == ["formatter:review:security"]  # its group joins the name
    assert {c["name"] for c in conventions.available_commands()} >= {"formatter:fmt", "formatter:lint"}
    skipped = "\n".join((*conventions.skipped, *conventions.agents_skipped))
    assert f"leak.md (refused: it resolves to {secret}, outside {root})" in skipped
    assert "pipe.md (refused: it is a FIFO" in skipped
    assert "bad.md (skipped: `name` is missing" in skipped
    assert "SECRET" not in str(conventions.commands)


async def test_a_read_that_trust_overtook_is_not_kept() -> None:
    """The menu task may be reading the files when the trust answer makes a plugin's offer current:
    that read's result (without the plugin) must not be the session's."""
    started, release = anyio.Event(), anyio.Event()
    reads: list[int] = []

    async def read() -> Conventions:
        reads.append(len(reads))
        if len(reads) == 1:
            started.set()
            await release.wait()
            return Conventions(skipped=("stale",))
        return Conventions(skipped=("fresh",))

    slot = ConventionsSlot(read)
    got: list[Conventions] = []
    async with anyio.create_task_group() as group:

        async def first() -> None:
            got.append(await slot.current())

        group.start_soon(first)
        await started.wait()
        slot.forget()  # the trust answer, while the first read runs
        release.set()
    assert got[0].skipped == ("fresh",) and (await slot.current()).skipped == ("fresh",)
    assert reads == [0, 1]
