"""The policy an administrator sets (issue 45 item 4), on the wire: the managed settings in their
directory (`ACP_AGENT_MANAGED_SETTINGS_DIR`, as `base_env` sets it: `tmp_path/managed`) beat the
user's and the project's settings, key by key: `allowManagedPermissionRulesOnly`,
`allowManagedHooksOnly`, `permissions.disableBypassPermissionsMode`, `availableModels` (with
`enforceAvailableModels`), `managed-mcp.json` and `allowManagedMcpServersOnly`; a policy that
cannot be read holds the strictest policy; `/status` and `/permissions` name it."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.conventions import claude_repo
from tests.wire.test_claude_mcp import command_text, server
from tests.wire.test_claude_settings import Editor, calls, write_settings
from tests.wire.test_conventions import status_text


def managed(env: dict[str, str], settings: dict[str, Any], name: str = "managed-settings.json") -> Path:
    """Write the policy file `name` into the agent's managed settings directory."""
    return write_settings(Path(env["ACP_AGENT_MANAGED_SETTINGS_DIR"]) / name, settings)


def user_settings(env: dict[str, str], settings: dict[str, Any]) -> Path:
    return write_settings(Path(env["HOME"]) / ".claude" / "settings.json", settings)


def log_hook(log: Path, word: str) -> dict[str, Any]:
    """A UserPromptSubmit matcher group whose hook appends `word` to `log`."""
    command = f"printf '%s\\n' {word} >> {shlex.quote(str(log))}"
    return {"hooks": [{"type": "command", "command": command}]}


async def test_managed_rules_only_leave_out_the_users_and_the_projects_rules_and_every_always_answer(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    policy = managed(
        agent_env,
        {"allowManagedPermissionRulesOnly": True, "permissions": {"allow": ["Bash(echo managed *)"]}},
    )
    user_settings(agent_env, {"permissions": {"allow": ["Bash(echo user *)"]}})
    write_settings(
        workspace / ".claude" / "settings.json", {"permissions": {"allow": ["Bash(echo project *)"]}}
    )
    commands = ["echo user 1", "echo managed 2", "echo project 3"]
    fake_api.script(
        calls(*(("run_command", {"command": c}) for c in commands)), replies.text("done"), replies.text("ok")
    )
    editor = Editor("allow_once", "allow_once", "allow_once")
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.prompt(session, "run them")
        permissions = await command_text(agent, session, "/permissions")
    # No trust question (the project's allow rule is not read at all), and the policy's rule is the
    # only one: the user's and the project's commands are asked, with no "always" to offer.
    asked = [q["toolCall"]["rawInput"].get("command") for q in editor.asked]
    assert asked == ["echo user 1", "echo project 3"], editor.titles()
    for question in editor.asked:
        assert {o["kind"] for o in question["options"]} == {"allow_once", "reject_once"}
    assert f"Setting sources: Enterprise managed settings (file): {policy}" in permissions
    assert f"Bash(echo managed *)  ({policy})" in permissions
    assert "Bash(echo user *)" not in permissions.split("Setting sources")[0]
    assert "overrides: allowManagedPermissionRulesOnly: 1 rules of ~/.claude/settings.json not applied" in (
        permissions
    )
    assert "1 rules of .claude/settings.json not applied" in permissions


async def test_managed_hooks_only_run_the_policys_hooks_not_the_users_or_the_projects(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    log = workspace / "hooks.log"
    managed(
        agent_env, {"allowManagedHooksOnly": True, "hooks": {"UserPromptSubmit": [log_hook(log, "managed")]}}
    )
    user_settings(agent_env, {"hooks": {"UserPromptSubmit": [log_hook(log, "user")]}})
    write_settings(
        workspace / ".claude" / "settings.json", {"hooks": {"UserPromptSubmit": [log_hook(log, "project")]}}
    )
    fake_api.set_fallback(replies.text("ok"))
    editor = Editor()  # any question (the project's trust) would be refused
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.prompt(session, "hello")
        status = await status_text(agent, session)
    assert log.read_text().split() == ["managed"]
    assert editor.asked == []  # the project's hook is not asked about: it could never run
    assert "locks: allowManagedHooksOnly" in status, status
    assert "only the policy's hooks run (.claude/settings.json, ~/.claude/settings.json not)" in status


@pytest.mark.model_free
async def test_managed_disable_bypass_beats_the_users_and_the_projects_default_mode(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path
) -> None:
    workspace = claude_repo(tmp_path)
    managed(agent_env, {"permissions": {"disableBypassPermissionsMode": "disable"}})
    elsewhere = tmp_path / "no-policy-here"
    elsewhere.mkdir()
    user_settings(  # a settings file's env never moves the policy's directory
        agent_env,
        {
            "permissions": {"defaultMode": "bypassPermissions"},
            "env": {"ACP_AGENT_MANAGED_SETTINGS_DIR": str(elsewhere)},
        },
    )
    local = {"permissions": {"defaultMode": "bypassPermissions"}}
    write_settings(workspace / ".claude" / "settings.local.json", local)  # the folder's local file
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        answer = await agent.request("session/new", {"cwd": str(workspace), "mcpServers": []})
        modes = answer["result"]["modes"]
        refused = await agent.request(
            "session/set_mode", {"sessionId": answer["result"]["sessionId"], "modeId": "bypassPermissions"}
        )
    assert modes["currentModeId"] == "default"
    assert "bypassPermissions" not in [m["id"] for m in modes["availableModes"]]
    assert refused["error"]["code"] == -32602


async def test_managed_available_models_hold_against_the_users_and_the_projects_model(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    env = {**agent_env, "ACP_AGENT_MODEL": ""}  # no explicit model: the settings choose
    managed(env, {"availableModels": ["claude-test-1", "claude-test-2"], "enforceAvailableModels": True})
    user_settings(env, {"model": "claude-test-2"})
    write_settings(workspace / ".claude" / "settings.json", {"model": "claude-test-9"})  # not available
    fake_api.set_fallback(replies.text("ok"))
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        answer = await agent.request("session/new", {"cwd": str(workspace), "mcpServers": []})
        session = answer["result"]["sessionId"]
        [option] = [o for o in answer["result"]["configOptions"] if o["id"] == "model"]
        await agent.prompt(session, "hi")
        refused = await agent.request(
            "session/set_config_option",
            {"sessionId": session, "configId": "model", "value": "claude-opus-5-5"},
        )
        taken = await agent.request(
            "session/set_config_option", {"sessionId": session, "configId": "model", "value": "claude-test-2"}
        )
        await agent.prompt(session, "again")
        status = await status_text(agent, session)
    # The user's model was the start (allowed); the project's is outside the list: the default,
    # which enforceAvailableModels makes the list's first entry.
    assert option["currentValue"] == "claude-test-1", option
    assert {o["value"] for o in option["options"]} == {"claude-test-1", "claude-test-2"}
    assert refused["error"]["code"] == -32602 and "result" in taken
    assert [r.body["model"] for r in fake_api.requests] == ["claude-test-1", "claude-test-2"]
    assert "model claude-test-9 is not in the managed availableModels" in status


@pytest.mark.model_free
async def test_managed_mcp_json_is_the_only_source_of_servers_the_editors_included(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    policy_mcp = managed(agent_env, {"mcpServers": {"company": server()}}, "managed-mcp.json")
    write_settings(tmp_path / "home" / ".claude.json", {"mcpServers": {"usr": server()}})
    write_settings(workspace / ".mcp.json", {"mcpServers": {"proj": server()}})
    editor_server = {"name": "editors", "command": sys.executable, "args": server()["args"], "env": []}
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=Editor()) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace, mcp_servers=[editor_server])
        listing = await command_text(agent, session, "/mcp")
    assert f"- company (managed: {policy_mcp}): connected" in listing, listing
    assert (
        f"- editors (editor): not started (MCP server policy): {policy_mcp} has exclusive control" in listing
    )
    assert "usr" not in listing and "proj" not in listing


@pytest.mark.model_free
async def test_allow_managed_mcp_servers_only_ignores_the_users_allowlist_and_the_deny_list_still_merges(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    policy = managed(
        agent_env,
        {
            "allowManagedMcpServersOnly": True,
            "allowedMcpServers": [{"serverName": "approved"}, {"serverName": "gone"}],
        },
    )
    user_settings(
        agent_env,
        {"allowedMcpServers": [{"serverName": "mine"}], "deniedMcpServers": [{"serverName": "gone"}]},
    )
    servers = {"approved": server(), "mine": server(), "gone": server()}
    write_settings(tmp_path / "home" / ".claude.json", {"mcpServers": servers})
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        listing = await command_text(agent, session, "/mcp")
    assert "- approved (user: ~/.claude.json): connected" in listing, listing
    blocked = "(user: ~/.claude.json): not started (MCP server policy)"
    assert f"- mine {blocked}: not in allowedMcpServers of {policy}" in listing
    assert f"- gone {blocked}: deniedMcpServers in ~/.claude/settings.json" in listing


@pytest.mark.model_free
async def test_a_policy_that_cannot_be_read_holds_the_strictest_policy_and_says_so(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path
) -> None:
    workspace = claude_repo(tmp_path)
    good = managed(agent_env, {"env": {"TEAM": "platform"}}, "managed-settings.d/10-env.json")
    broken = managed(agent_env, {}, "managed-settings.d/20-half-written.json")
    broken.write_text('{"permissions": {"deny": [')  # a push cut short
    user_settings(agent_env, {"permissions": {"defaultMode": "bypassPermissions"}})
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        answer = await agent.request("session/new", {"cwd": str(workspace), "mcpServers": []})
        session = answer["result"]["sessionId"]
        status = await status_text(agent, session)
    assert answer["result"]["modes"]["currentModeId"] == "default"
    assert "bypassPermissions" not in [m["id"] for m in answer["result"]["modes"]["availableModes"]]
    assert f"Setting sources: Enterprise managed settings (drop-ins): {good}" in status
    assert (
        f"not read, so the strictest policy applies until fixed: {broken}: skipped (not valid JSON" in status
    )
    assert (
        "locks: allowManagedPermissionRulesOnly, allowManagedHooksOnly, allowManagedMcpServersOnly" in status
    )


def _requests_models(fake_api: FakeMessagesAPI) -> list[str]:
    return [r.body["model"] for r in fake_api.requests]


async def test_the_model_setting_chooses_a_sessions_model_in_claude_codes_order(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    """Issue 45 item 5: the `model` setting, the project's over the user's, the policy's over
    both; `ANTHROPIC_MODEL` over every file, `--model` (`ACP_AGENT_MODEL`) over it."""
    workspace = claude_repo(tmp_path)
    user_settings(agent_env, {"model": "claude-test-2"})
    project = workspace / ".claude" / "settings.json"
    fake_api.set_fallback(replies.text("ok"))
    runs = [
        ({}, None, "claude-test-2"),  # the user's
        ({}, {"model": "claude-test-3"}, "claude-test-3"),  # the project's over the user's
        ({"ANTHROPIC_MODEL": "claude-test-5"}, {"model": "claude-test-3"}, "claude-test-5"),
        ({"ANTHROPIC_MODEL": "claude-test-5", "ACP_AGENT_MODEL": "claude-test-6"}, None, "claude-test-6"),
    ]
    statuses = []
    for extra, project_settings, _ in runs:
        if project_settings is not None:
            write_settings(project, project_settings)
        env = {**agent_env, "ACP_AGENT_MODEL": "", **extra}
        async with AgentProcess.start(env=env, schema=acp_schema) as agent:
            await agent.initialize()
            session = await agent.new_session(workspace)
            await agent.prompt(session, "hi")
            statuses.append(await status_text(agent, session))
    managed(agent_env, {"model": "claude-test-4"})
    async with AgentProcess.start(env={**agent_env, "ACP_AGENT_MODEL": ""}, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.prompt(session, "hi")
        statuses.append(await status_text(agent, session))
    assert _requests_models(fake_api) == [*(model for _, _, model in runs), "claude-test-4"]
    assert "Session model chosen by: model in ~/.claude/settings.json" in statuses[0]
    assert "Session model chosen by: model in .claude/settings.json" in statuses[1]
    assert "Session model chosen by: ANTHROPIC_MODEL (environment)" in statuses[2]
    assert "overrides: model: claude-test-4 over claude-test-3 in .claude/settings.json" in statuses[4]
