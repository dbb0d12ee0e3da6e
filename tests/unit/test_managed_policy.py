"""The managed policy read as Claude Code reads it (issue 45 item 4): where it is, the drop-ins
merged in name order, the enforcement keys failing closed, a policy that cannot be read holding
the strictest policy, and what its locks do to the other files of a session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_agent.claude_code.hooks.hook_config import read_hooks
from acp_agent.claude_code.settings.agent_settings import read_agent_settings, start_model
from acp_agent.claude_code.settings.managed import (
    MANAGED_DIR_ENV,
    STRICTEST,
    managed_dir,
    merge_settings,
    read_managed_policy,
)
from acp_agent.claude_code.setup.setup import load_claude_setup


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_the_policys_directory_per_os_and_the_override_for_tests_and_packagers() -> None:
    assert managed_dir({}, "linux") == Path("/etc/claude-code")
    assert managed_dir({}, "darwin") == Path("/Library/Application Support/ClaudeCode")
    assert managed_dir({}, "win32") == Path("C:\\Program Files\\ClaudeCode")
    assert managed_dir({MANAGED_DIR_ENV: "/opt/policy"}, "linux") == Path("/opt/policy")
    assert managed_dir({MANAGED_DIR_ENV: " "}, "linux") == Path("/etc/claude-code")


def test_drop_ins_merge_after_the_file_in_name_order_as_claude_code_merges_them(tmp_path: Path) -> None:
    write(tmp_path / "managed-settings.json", {"model": "opus", "permissions": {"deny": ["Bash(a)"]}})
    drop_ins = tmp_path / "managed-settings.d"
    write(drop_ins / "20-b.json", {"model": "haiku", "env": {"B": "2"}, "fallbackModel": ["y"]})
    write(
        drop_ins / "10-a.json", {"permissions": {"deny": ["Bash(a)", "Bash(b)"]}, "env": {"A": "1", "B": "1"}}
    )
    write(drop_ins / "05-c.json", {"fallbackModel": ["x", "z"]})
    write(drop_ins / ".hidden.json", {"model": "hidden"})
    write(drop_ins / "notes.txt", "not a policy")
    policy = read_managed_policy(tmp_path)
    assert [f.name for f in policy.files] == ["managed-settings.json", "05-c.json", "10-a.json", "20-b.json"]
    assert policy.data == {
        "model": "haiku",  # a single value: the later file's
        "permissions": {"deny": ["Bash(a)", "Bash(b)"]},  # lists combine without duplicates
        "env": {"A": "1", "B": "2"},  # objects key by key
        "fallbackModel": ["y"],  # whole
    }
    assert policy.source == "file + drop-ins" and policy.broken == ()


def test_no_policy_at_all(tmp_path: Path) -> None:
    policy = read_managed_policy(tmp_path / "absent")
    assert not policy.present and policy.data == {} and policy.mcp_servers is None
    assert policy.describe() == []


def test_the_enforcement_keys_fail_closed(tmp_path: Path) -> None:
    write(
        tmp_path / "managed-settings.json",
        {
            "allowManagedPermissionRulesOnly": "yes",
            "allowManagedHooksOnly": 1,
            "enforceAvailableModels": "true",
            "availableModels": "sonnet",
            "allowedMcpServers": [{"serverName": "ok"}, {"serverName": "a", "serverUrl": "b"}, "x"],
            "deniedMcpServers": {"serverName": "x"},
            "permissions": {"disableBypassPermissionsMode": True},
        },
    )
    policy = read_managed_policy(tmp_path)
    data = policy.data
    assert data["allowManagedPermissionRulesOnly"] is data["allowManagedHooksOnly"] is True
    assert data["enforceAvailableModels"] is True
    assert data["availableModels"] == []  # an empty allowlist: only the default model
    assert data["allowedMcpServers"] == [{"serverName": "ok"}]  # the valid subset enforced
    assert "deniedMcpServers" not in data  # denying everything would block what it never named
    assert data["permissions"]["disableBypassPermissionsMode"] == "disable"
    assert len(policy.warnings) == 7 and policy.broken == ()


@pytest.mark.parametrize(
    "how",
    [
        "not json",
        "not an object",
        "a directory",
        "a drop-in dir file",
        "a dangling link",
        "a dangling drop-in",
    ],
)
def test_a_policy_that_cannot_be_read_holds_the_strictest_policy(tmp_path: Path, how: str) -> None:
    write(tmp_path / "managed-settings.d" / "10-env.json", {"env": {"TEAM": "x"}, "model": "opus"})
    main = tmp_path / "managed-settings.json"
    if how == "not json":
        write(main, '{"permissions": {"deny": [')
    elif how == "not an object":
        write(main, "[]")
    elif how == "a directory":
        main.mkdir()
    elif how == "a dangling link":  # mid-push of a config-management tool: the policy is there
        main.symlink_to(tmp_path / "missing.json")
    elif how == "a dangling drop-in":
        (tmp_path / "managed-settings.d" / "20-gone.json").symlink_to(tmp_path / "missing.json")
    else:
        (tmp_path / "managed-settings.d" / "20-bad.json").mkdir()
    policy = read_managed_policy(tmp_path)
    assert policy.broken and policy.present
    for key, value in STRICTEST.items():
        assert policy.data[key] == value
    assert policy.data["env"] == {"TEAM": "x"} and policy.data["model"] == "opus"  # what could be read
    assert any("strictest policy applies" in line for line in policy.describe())


def test_managed_mcp_json_claims_every_server_and_a_broken_one_lets_none_start(tmp_path: Path) -> None:
    assert read_managed_policy(tmp_path).mcp_servers is None
    write(tmp_path / "managed-mcp.json", {"mcpServers": {"company": {"command": "srv"}}})
    assert read_managed_policy(tmp_path).mcp_servers == {"company": {"command": "srv"}}
    write(tmp_path / "managed-mcp.json", "{")
    policy = read_managed_policy(tmp_path)
    assert policy.mcp_servers == {} and policy.present and "no MCP server starts" in policy.warnings[0]


def test_merge_settings_keeps_the_base_untouched() -> None:
    base = {"env": {"A": "1"}, "list": [1]}
    assert merge_settings(base, {"env": {"B": "2"}, "list": [1, 2]}) == {
        "env": {"A": "1", "B": "2"},
        "list": [1, 2],
    }
    assert base == {"env": {"A": "1"}, "list": [1]}


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, Path]:
    root, home, policy = tmp_path / "repo", tmp_path / "home", tmp_path / "policy"
    (root / ".git").mkdir(parents=True)
    home.mkdir()
    return {"root": root, "home": home, "policy": policy}


def _hook(word: str) -> dict[str, Any]:
    return {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"echo {word}"}]}]}


def _setup(places: dict[str, Path]) -> Any:
    return load_claude_setup(
        places["root"],
        home=places["home"],
        config_dir=None,
        trust_store=None,
        tracked=lambda root, path: False,
        policy=read_managed_policy(places["policy"]),
    )


def test_the_users_disable_all_hooks_leaves_the_policys_hooks_running(repo: dict[str, Path]) -> None:
    write(repo["policy"] / "managed-settings.json", {"hooks": _hook("managed")})
    write(repo["home"] / ".claude" / "settings.json", {"hooks": _hook("user"), "disableAllHooks": True})
    hooks = read_hooks(_setup(repo), repo["home"])
    assert [h.command for h in hooks.handlers] == ["echo managed"] and hooks.disabled is None
    write(repo["policy"] / "managed-settings.json", {"hooks": _hook("managed"), "disableAllHooks": True})
    hooks = read_hooks(_setup(repo), repo["home"])
    assert hooks.handlers == () and hooks.disabled is not None  # the policy's turns off every one


def test_the_policy_is_the_first_file_and_its_locks_leave_out_the_others(repo: dict[str, Path]) -> None:
    write(
        repo["policy"] / "managed-settings.json",
        {
            "allowManagedPermissionRulesOnly": True,
            "allowManagedHooksOnly": True,
            "permissions": {"ask": ["Bash(git push *)"], "defaultMode": "plan"},
            "hooks": _hook("managed"),
        },
    )
    user = {"permissions": {"allow": ["Bash(npm *)"], "defaultMode": "acceptEdits"}, "hooks": _hook("user")}
    write(repo["home"] / ".claude" / "settings.json", {**user, "allowManagedHooksOnly": False})
    write(repo["root"] / ".claude" / "settings.json", {"hooks": _hook("project"), "apiKeyHelper": "sh x"})
    setup = _setup(repo)
    assert setup.files[0].scope == "managed"
    assert [r.text for r in setup.rules] == ["Bash(git push *)"]
    assert setup.default_mode is not None and setup.default_mode[0] == "plan"
    assert [h.command for h in read_hooks(setup, repo["home"]).handlers] == ["echo managed"]
    assert setup.trust is not None and setup.trust.items == []  # the project's hook could never run
    assert "permissions.defaultMode: plan over acceptEdits in ~/.claude/settings.json" in setup.overridden
    assert any("allowManagedHooksOnly has no effect here" in w for w in setup.warnings)
    assert any(".claude/settings.json: apiKeyHelper not run" in w for w in setup.warnings)


def test_the_start_up_settings_take_the_users_and_the_policys_never_a_projects(tmp_path: Path) -> None:
    home, config, policy_dir = tmp_path / "home", tmp_path / "config", tmp_path / "policy"
    write(home / ".claude" / "settings.json", {"env": {"A": "user", "B": "user"}, "model": "haiku"})
    write(config / "settings.json", {"env": {"B": "own"}, "apiKeyHelper": "own-helper"})
    write(policy_dir / "managed-settings.json", {"env": {"A": "managed"}, "awsAuthRefresh": "aws sso login"})
    settings = read_agent_settings(read_managed_policy(policy_dir), home=home, config_dir=config)
    assert settings.env == {"A": "managed", "B": "own"}
    assert settings.environment({"A": "process", "C": "process"}) == {
        "A": "managed",
        "B": "own",
        "C": "process",
    }
    assert settings.helper_settings()[0] == {"apiKeyHelper": "own-helper", "awsAuthRefresh": "aws sso login"}
    model, chosen = start_model(settings, flag=None, env={}, default="claude-sonnet-5-5")
    assert model == "claude-haiku-5-5" and chosen.model_source == "model in ~/.claude/settings.json"
    assert not chosen.explicit_model
    model, chosen = start_model(settings, flag=None, env={"ANTHROPIC_MODEL": "x-1"}, default="d")
    assert (model, chosen.explicit_model) == ("x-1", True)
    assert start_model(settings, flag="y-2", env={"ANTHROPIC_MODEL": "x-1"}, default="d")[0] == "y-2"


def test_a_model_outside_the_policys_list_is_replaced_by_the_default_at_start(tmp_path: Path) -> None:
    write(tmp_path / "managed-settings.json", {"availableModels": ["sonnet"], "enforceAvailableModels": True})
    settings = read_agent_settings(read_managed_policy(tmp_path), home=None, config_dir=None)
    model, chosen = start_model(settings, flag="claude-opus-5-5", env={}, default="claude-haiku-5-5")
    assert model == "claude-sonnet-5-5"  # enforced: the list's first model, not the default
    assert "claude-opus-5-5 is not in availableModels" in chosen.warnings[0]
    assert start_model(settings, flag="replay:x", env={}, default="d", checked=False)[0] == "replay:x"


def test_a_family_pin_outside_the_policys_list_is_not_used(tmp_path: Path) -> None:
    """Under a managed `availableModels`, `ANTHROPIC_DEFAULT_SONNET_MODEL=claude-opus-…` would send
    Opus for every Sonnet request: a pin the list does not allow is left out (with a warning for
    /status) unless the policy's own `env` sets it (the policy review found it sent)."""
    home, policy_dir = tmp_path / "home", tmp_path / "policy"
    write(policy_dir / "managed-settings.json", {"availableModels": ["sonnet"], "env": {}})
    write(home / ".claude" / "settings.json", {"env": {"ANTHROPIC_DEFAULT_SONNET_MODEL": "claude-opus-4-1"}})
    settings = read_agent_settings(read_managed_policy(policy_dir), home=home, config_dir=None)
    process = {"ANTHROPIC_DEFAULT_HAIKU_MODEL": "arn:aws:bedrock:us-east-1:1:application-inference-profile/x"}
    process["ANTHROPIC_DEFAULT_OPUS_MODEL"] = "claude-sonnet-4-5"  # allowed: kept
    env = settings.environment(process)
    assert "ANTHROPIC_DEFAULT_SONNET_MODEL" not in env and "ANTHROPIC_DEFAULT_HAIKU_MODEL" not in env
    assert env["ANTHROPIC_DEFAULT_OPUS_MODEL"] == "claude-sonnet-4-5"
    warned = settings.with_pins_checked(process).warnings
    assert any(
        w.startswith("ANTHROPIC_DEFAULT_SONNET_MODEL: not in the managed availableModels") for w in warned
    )
    write(
        policy_dir / "managed-settings.json",
        {"availableModels": ["sonnet"], "env": {"ANTHROPIC_DEFAULT_SONNET_MODEL": "claude-opus-4-1"}},
    )
    managed = read_agent_settings(read_managed_policy(policy_dir), home=home, config_dir=None)
    assert managed.environment({})["ANTHROPIC_DEFAULT_SONNET_MODEL"] == "claude-opus-4-1"  # the admin's own
    free = read_agent_settings(read_managed_policy(tmp_path / "none"), home=home, config_dir=None)
    assert free.environment({})["ANTHROPIC_DEFAULT_SONNET_MODEL"] == "claude-opus-4-1"  # no list: as set
