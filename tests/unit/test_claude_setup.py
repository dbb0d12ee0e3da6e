"""The settings files as Claude Code reads them, the project's trust, and "always" answers written
back (issue 33 items 1 and 3)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from acp_agent.claude_code.settings.saved_rules import save_rules
from acp_agent.claude_code.settings.settings_files import repository_root
from acp_agent.claude_code.setup.setup import ClaudeSetup, load_claude_setup
from acp_agent.claude_code.setup.trust import ProjectTrust, TrustAnswer, TrustQuestion, TrustStore, Widening
from acp_agent.claude_code.setup.widenings import file_widenings
from acp_agent.errors import ToolError
from acp_agent.model.server_tools import WebTools
from acp_agent.permissions.engine import RuleEngine
from acp_agent.permissions.question import PermissionQuestion
from acp_agent.tools.files.gitdir import find_repository, index_tracks


def write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    """A repository with a starting directory below its root, a home and acp-agent's config dir."""
    root, home, config = tmp_path / "repo", tmp_path / "home", tmp_path / "config"
    (root / ".git").mkdir(parents=True)
    (root / "pkg").mkdir()
    for path in (home, config):
        path.mkdir()
    return {"root": root, "cwd": root / "pkg", "home": home, "config": config}


def load(places: dict[str, Path], *, tracked: bool = False, store: TrustStore | None = None) -> ClaudeSetup:
    return load_claude_setup(
        places["cwd"],
        home=places["home"],
        config_dir=places["config"],
        trust_store=store,
        tracked=lambda root, path: tracked,
    )


def test_the_files_their_precedence_and_how_they_merge(places: dict[str, Path]) -> None:
    root, cwd, home = places["root"], places["cwd"], places["home"]
    write(root / ".claude" / "settings.local.json", {"model": "local", "permissions": {"deny": ["Bash(a)"]}})
    write(cwd / ".claude" / "settings.local.json", {"model": "legacy", "outputStyle": "legacy"})
    write(cwd / ".claude" / "settings.json", {"model": "project", "permissions": {"ask": ["Bash(b)"]}})
    write(places["config"] / "settings.json", {"permissions": {"deny": ["Bash(c)"]}, "env": {"A": "own"}})
    write(home / ".claude" / "settings.json", {"outputStyle": "user", "env": {"A": "user", "B": "user"}})
    write(root / ".claude" / "settings.json", {"model": "not read: only the starting directory's"})
    setup = load(places)
    assert [(f.scope, f.shown) for f in setup.files] == [
        ("local", ".claude/settings.local.json"),
        ("local", "pkg/.claude/settings.local.json"),
        ("project", "pkg/.claude/settings.json"),
        ("acp-agent", str(places["config"] / "settings.json")),
        ("user", "~/.claude/settings.json"),
    ]
    assert setup.value("model") is not None and setup.value("model")[0] == "local"  # the root copy wins
    assert setup.value("outputStyle")[0] == "legacy"  # type: ignore[index]
    assert setup.env() == {"A": "own", "B": "user"}  # per variable
    assert [(r.text, r.origin.shown) for r in setup.rules] == [
        ("Bash(a)", ".claude/settings.local.json"),
        ("Bash(b)", "pkg/.claude/settings.json"),
        ("Bash(c)", str(places["config"] / "settings.json")),
    ]
    assert setup.root == root


def test_claude_config_dir_moves_the_users_file(
    places: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(places["home"] / "elsewhere" / "settings.json", {"permissions": {"deny": ["WebSearch"]}})
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(places["home"] / "elsewhere"))
    assert [r.text for r in load(places).rules] == ["WebSearch"]


def test_a_worktree_keeps_its_local_file_in_the_main_checkout(tmp_path: Path) -> None:
    main = tmp_path / "main"
    (main / ".git" / "worktrees" / "w").mkdir(parents=True)
    (main / ".git" / "worktrees" / "w" / "commondir").write_text("../..\n")
    tree = tmp_path / "w"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'w'}\n")
    assert repository_root(tree) == main
    assert repository_root(tmp_path / "w") != tmp_path


async def test_what_a_project_widens_waits_for_trust_and_what_restricts_does_not(
    places: dict[str, Path],
) -> None:
    project = {
        "permissions": {
            "allow": ["Bash(npm test *)"],
            "deny": ["Read(./.env)"],
            "ask": ["Bash(git push *)"],
            "defaultMode": "acceptEdits",
            "additionalDirectories": ["../common"],
            "disableBypassPermissionsMode": "disable",
        },
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}]
        },
        "enabledMcpjsonServers": ["github"],
    }
    write(places["cwd"] / ".claude" / "settings.json", project)
    setup = load(places)
    assert setup.trust is not None and not setup.trust.settled
    assert [i.kind for i in setup.trust.items] == [
        "allow rule",
        "defaultMode",
        "additional directory",
        "hook",
        "MCP server",
    ]
    assert [r.text for r in setup.rules_in_force()] == ["Read(./.env)", "Bash(git push *)"]
    assert setup.default_mode is None and setup.additional_directories() == [] and setup.hooks() == []
    assert setup.bypass_disabled  # it only restricts
    await setup.trust.answer("trusted", remember=False)
    assert [r.text for r in setup.rules_in_force()] == [
        "Read(./.env)",
        "Bash(git push *)",
        "Bash(npm test *)",
    ]
    assert setup.default_mode is not None and setup.default_mode[0] == "acceptEdits"
    assert [d for d, _ in setup.additional_directories()] == ["../common"]


async def test_an_item_of_a_file_expected_after_the_answer_keeps_that_file_out_until_answered(
    places: dict[str, Path],
) -> None:
    """The answer covers what the question listed: once a loader expects one more item of a trusted
    file (here what the file would enable with a hook added), that file's allow rules and mode stay
    out until an answer covers it; another file's items do not hold it back (issue 44)."""
    project = {"permissions": {"allow": ["Bash(npm test *)"], "defaultMode": "acceptEdits"}}
    write(places["cwd"] / ".claude" / "settings.json", project)
    setup = load(places)
    assert setup.trust is not None
    await setup.trust.answer("trusted", remember=False)
    file = next(f for f in setup.files if f.project)
    assert setup.in_force(file) and setup.default_mode is not None
    assert [r.text for r in setup.rules_in_force()] == ["Bash(npm test *)"]

    setup.trust.expect(Widening("import outside the workspace", "memory files", "/elsewhere/notes.md"))
    assert setup.in_force(file)  # an item of no settings file holds back only itself

    hook = {"PreToolUse": [{"hooks": [{"type": "command", "command": "./later.sh"}]}]}
    later = replace(file, data={**file.data, "hooks": hook})
    for item in file_widenings(later, setup.rules, places["cwd"], places["root"]):
        setup.trust.expect(item)  # the file's hook, expected after the answer: not in the question
    assert not setup.in_force(file)
    assert setup.default_mode is None
    assert list(setup.rules_in_force()) == []
    assert setup.additional_directories() == [] and setup.env() == {}

    await setup.trust.answer("trusted", remember=False)  # the next answer covers it
    assert setup.in_force(file) and setup.default_mode is not None
    assert [r.text for r in setup.rules_in_force()] == ["Bash(npm test *)"]


async def test_settle_asks_only_what_no_answer_covers_and_records_the_answer(
    places: dict[str, Path], tmp_path: Path
) -> None:
    store = TrustStore(tmp_path / "state" / "trust.json")
    write(places["cwd"] / ".claude" / "settings.json", {"permissions": {"allow": ["Bash(make)"]}})
    asked: list[list[str]] = []

    def answering(answer: TrustAnswer, remember: bool) -> TrustQuestion:
        async def ask(trust: ProjectTrust) -> tuple[TrustAnswer, bool]:
            asked.append([i.text for i in trust.items])
            return answer, remember

        return ask

    first = load(places, store=store).trust
    assert first is not None and await first.settle(answering("trusted", True))
    assert asked == [["Bash(make)"]] and first.settled and not first.declined
    assert not await first.settle(answering("declined", False)) and len(asked) == 1  # covered: not asked
    again = load(places, store=store).trust
    assert again is not None and not await again.settle(answering("declined", False))  # remembered
    assert len(asked) == 1 and all(again.allows(i) for i in again.items)
    again.expect(Widening("import outside the workspace", "memory files", "/elsewhere/notes.md"))
    assert not again.settled
    assert not await again.settle(answering("declined", False))
    assert len(asked) == 2 and again.declined and again.settled and again.left_off() == tuple(again.items)


def test_a_local_file_git_tracks_is_the_projects(places: dict[str, Path]) -> None:
    write(places["root"] / ".claude" / "settings.local.json", {"permissions": {"allow": ["Bash(make)"]}})
    assert load(places, tracked=False).trust.items == []  # type: ignore[union-attr]
    tracked = load(places, tracked=True)
    assert [i.text for i in tracked.trust.items] == ["Bash(make)"]  # type: ignore[union-attr]
    assert list(tracked.rules_in_force()) == []


async def test_the_answer_is_remembered_per_folder_and_content(
    places: dict[str, Path], tmp_path: Path
) -> None:
    store = TrustStore(tmp_path / "state" / "trust.json")
    hook = {
        "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt " + "x" * 300}]}]
    }
    write(places["cwd"] / ".claude" / "settings.json", {"hooks": hook})
    first = load(places, store=store)
    assert first.trust is not None and not first.trust.settled
    await first.trust.answer("trusted", remember=True)
    again = load(places, store=store)
    assert again.trust is not None and again.trust.remembered
    assert again.trust.settled and all(again.trust.allows(i) for i in again.trust.items)
    hook["PostToolUse"][0]["hooks"][0]["command"] += "y"  # past what the question shows
    write(places["cwd"] / ".claude" / "settings.json", {"hooks": hook})
    changed = load(places, store=store)
    assert changed.trust is not None and not changed.trust.settled
    await changed.trust.answer("declined", remember=True)
    assert load(places, store=store).trust.declined  # type: ignore[union-attr]
    assert oct(os.stat(store.path).st_mode & 0o777) in ("0o600", "0o644", "0o640")


def question(command: str) -> PermissionQuestion:
    return PermissionQuestion("c", "run_command", "Run", "execute", "execute", {"command": command})


async def test_always_answers_are_written_as_claude_code_writes_them(places: dict[str, Path]) -> None:
    root = places["root"]
    local = root / ".claude" / "settings.local.json"
    write(local, {"env": {"A": "1"}, "permissions": {"allow": ["Bash(git status)"], "ask": ["Bash(x)"]}})
    engine = RuleEngine(load(places), roots=lambda: (places["cwd"],))
    assert await engine.remember(question("pytest -q tests/x.py && git status"), allow=True) == (
        ".claude/settings.local.json"
    )
    assert (
        await engine.remember(question("pytest -q tests/y.py"), allow=True) == ".claude/settings.local.json"
    )
    assert await engine.remember(question("rm -rf build"), allow=False) == ".claude/settings.local.json"
    assert await engine.remember(question("python script.py"), allow=True) == ".claude/settings.local.json"
    assert await engine.remember(question("echo $HOME"), allow=True) == "this session"  # no rule can name it
    saved = json.loads(local.read_text())
    assert saved == {
        "env": {"A": "1"},
        "permissions": {
            "allow": ["Bash(git status)", "Bash(pytest *)", "Bash(python script.py)"],  # each once
            "ask": ["Bash(x)"],
            "deny": ["Bash(rm -rf build)"],
        },
    }
    assert (root / ".git" / "info" / "exclude").read_text() == "/.claude/settings.local.json\n"
    assert engine.decide(question("pytest tests/z.py"), "default").action == "allow"
    assert engine.decide(question("rm -rf build"), "bypassPermissions").action == "deny"
    assert engine.decide(question("echo $HOME"), "default").action == "allow"


async def test_a_local_file_that_is_no_object_is_never_overwritten(places: dict[str, Path]) -> None:
    local = places["root"] / ".claude" / "settings.local.json"
    write(local, "[1, 2]")
    with pytest.raises(ToolError, match="not a JSON object"):
        await save_rules(places["root"], "allow", ["Bash(ls)"])
    assert local.read_text() == "[1, 2]"
    engine = RuleEngine(load(places), roots=lambda: (places["cwd"],))
    assert await engine.remember(question("ls"), allow=True) == "this session"


async def test_a_local_file_nested_too_deep_is_never_overwritten(places: dict[str, Path]) -> None:
    local = places["root"] / ".claude" / "settings.local.json"
    deep = '{"permissions": ' + "[" * 5000 + "]" * 5000 + "}"
    write(local, deep)
    with pytest.raises(ToolError, match="nested deeper than 100 levels"):
        await save_rules(places["root"], "allow", ["Bash(ls)"])
    assert local.read_text() == deep
    engine = RuleEngine(load(places), roots=lambda: (places["cwd"],))
    assert await engine.remember(question("ls"), allow=True) == "this session"


def test_web_rules_become_the_server_tools_domain_lists(places: dict[str, Path]) -> None:
    write(
        places["home"] / ".claude" / "settings.json",
        {
            "permissions": {
                "deny": ["WebFetch(domain:*.evil.example)", "WebFetch(domain:bad.*)"],
                "allow": ["WebFetch(domain:ok.example)"],
            }
        },
    )
    engine = RuleEngine(load(places), roots=lambda: (places["cwd"],))
    web = engine.web(WebTools(search="s", fetch="f"))
    assert web.blocked_domains == ("evil.example",) and web.names == frozenset({"web_search"})  # `bad.*`: off
    allowed = engine.web(WebTools(search="s", fetch="f", allowed_domains=("evil.example", "docs.python.org")))
    assert allowed.allowed_domains == ("docs.python.org",) and not allowed.blocked_domains


GIT = shutil.which("git")


@pytest.mark.skipif(GIT is None, reason="git is not installed")
@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_the_index_is_read_without_running_git(tmp_path: Path, version: str) -> None:
    """Whether git tracks the local file is read from the index itself: git would read the
    repository's config first (and could run what it names) before the user trusts it."""
    assert GIT is not None
    root = tmp_path / "repo"
    root.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    for name in (
        "a.txt",
        "deep/er/b.txt",
        "deep/er/c.txt",
        ".claude/settings.json",
        ".claude/settings.local.json",
    ):
        write(root / name, "x")

    def git(*args: str) -> None:
        subprocess.run([GIT, *args], cwd=root, env=env, check=True, capture_output=True, timeout=30)

    git("init", "-q")
    git("add", "a.txt", "deep", ".claude/settings.json")
    if version == "3":  # an entry with extended flags (intent to add) makes the index version 3
        git("add", "-N", ".claude/settings.local.json")
    git("update-index", "--index-version", version)
    repository = find_repository(root)
    assert repository is not None
    for name in ("a.txt", "deep/er/b.txt", "deep/er/c.txt", ".claude/settings.json"):
        assert index_tracks(repository, name), name
    assert index_tracks(repository, ".claude/settings.local.json") is (version == "3")
    assert not index_tracks(repository, "deep/er") and not index_tracks(repository, "b.txt")
    (repository.git_dir / "index").write_bytes(b"DIRC\x00\x00\x00\x09garbage")  # unreadable: tracked
    assert index_tracks(repository, "anything")


def test_a_fifo_or_a_huge_file_is_skipped_without_waiting(places: dict[str, Path]) -> None:
    os.mkfifo(places["cwd"] / ".claude-fifo")
    (places["cwd"] / ".claude").mkdir()
    os.rename(places["cwd"] / ".claude-fifo", places["cwd"] / ".claude" / "settings.json")  # nobody writes
    write(places["home"] / ".claude" / "settings.json", " " * (2 << 20) + "{}")
    setup = load(places)
    assert setup.files == () and setup.warnings == (
        "pkg/.claude/settings.json: skipped (not a regular file)",
        "~/.claude/settings.json: skipped (larger than 1024 KiB)",
    )
