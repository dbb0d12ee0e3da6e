"""The settings' `env` and credential helpers reach the agent's own configuration (issue 45 item 5):
the user's `~/.claude/settings.json` `env` chooses the platform and sets the agent's settings, the
managed policy's `env` and helpers beat the user's, and a project's never reach that
configuration: its `env` (trusted) only its hooks, its credential helper never runs. Each is
named in `/status`. The platform fakes are those of `test_platforms.py`."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from acp_agent.testing import FakeMessagesAPI, replies
from acp_agent.testing.clouds.platform_front import FoundryFront, GatewayFront
from tests.support import base_env
from tests.support.agent import AgentProcess
from tests.support.conventions import claude_repo
from tests.wire.conftest import turn_record
from tests.wire.test_claude_settings import Editor, write_settings
from tests.wire.test_conventions import status_text

USER_KEY = "user-settings-foundry-key-41aa"
MANAGED_KEY = "managed-settings-foundry-key-77bc"


def _env(tmp_path: Path, streaming: bool, **extra: str) -> dict[str, str]:
    """An agent's environment with no platform, model or key of its own."""
    return base_env(
        tmp_path,
        ACP_AGENT_MODEL="claude-test-1",
        ACP_AGENT_STREAMING="1" if streaming else "0",
        ACP_AGENT_STALL_SECONDS="20",
        ACP_AGENT_STATE_DIR=str(tmp_path / "state"),
        **extra,
    )


def _managed(env: dict[str, str], settings: dict[str, Any]) -> Path:
    return write_settings(Path(env["ACP_AGENT_MANAGED_SETTINGS_DIR"]) / "managed-settings.json", settings)


def _user(env: dict[str, str], settings: dict[str, Any]) -> Path:
    return write_settings(Path(env["HOME"]) / ".claude" / "settings.json", settings)


async def test_the_settings_env_chooses_the_platform_and_the_policys_env_beats_the_users(
    fake_api: FakeMessagesAPI, tmp_path: Path, acp_schema: Any, streaming: bool
) -> None:
    workspace = claude_repo(tmp_path)
    fake_api.front = front = FoundryFront(api_key=MANAGED_KEY)
    fake_api.set_fallback(lambda body, n: replies.tool_use("list_files", {"pattern": f"*{n}"}))
    env = _env(tmp_path, streaming)
    log = workspace / "hook-env.log"
    hook = f"printf '%s\\n' \"${{ANTHROPIC_FOUNDRY_API_KEY:-none}}\" >> {shlex.quote(str(log))}"
    user_env = {
        "CLAUDE_CODE_USE_FOUNDRY": "1",
        "ANTHROPIC_FOUNDRY_BASE_URL": f"{fake_api.base_url}/anthropic",
        "ANTHROPIC_FOUNDRY_API_KEY": USER_KEY,
        "ACP_AGENT_MAX_TURN_REQUESTS": "2",  # the agent's own settings too
    }
    _user(
        env,
        {"env": user_env, "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": hook}]}]}},
    )
    _managed(env, {"env": {"ANTHROPIC_FOUNDRY_API_KEY": MANAGED_KEY}})
    project_env = {"CLAUDE_CODE_USE_BEDROCK": "1", "ANTHROPIC_FOUNDRY_API_KEY": "the-projects-key"}
    write_settings(workspace / ".claude" / "settings.json", {"env": project_env})
    editor = Editor("trust_once")
    async with AgentProcess.start(env=env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "loop")
        status = await status_text(agent, session)
    assert response["result"]["stopReason"] == "max_turn_requests", response
    assert turn_record(response)["modelRequests"] == 2 and front.refused == []  # the policy's key
    assert len(editor.asked) == 1  # the project's env was trusted: it reaches its hooks only
    assert log.read_text().split() == ["none"]  # no Claude credential reaches a hook, from any file

    assert "Platform: Microsoft Foundry (CLAUDE_CODE_USE_FOUNDRY)" in status, status
    assert (
        "Settings env applied to the agent: ACP_AGENT_MAX_TURN_REQUESTS (~/.claude/settings.json)" in status
    )
    assert f"ANTHROPIC_FOUNDRY_API_KEY ({Path(env['ACP_AGENT_MANAGED_SETTINGS_DIR'])}" in status
    assert (
        "env ANTHROPIC_FOUNDRY_API_KEY, CLAUDE_CODE_USE_BEDROCK not applied to the agent's platform" in status
    )
    for key in (USER_KEY, MANAGED_KEY):
        assert key not in status and key not in agent.stderr_text()


async def test_the_policys_key_helper_beats_the_users_and_a_projects_never_runs(
    fake_api: FakeMessagesAPI, tmp_path: Path, acp_schema: Any, streaming: bool
) -> None:
    workspace = claude_repo(tmp_path)
    keys = {name: tmp_path / f"{name}-key.txt" for name in ("managed", "user")}
    for name, path in keys.items():
        path.write_text(f"{name}-helper-key-5d2e\n")
    fake_api.front = front = GatewayFront(keys={"managed-helper-key-5d2e"})
    fake_api.set_fallback(replies.text("ok"))
    env = _env(tmp_path, streaming, ANTHROPIC_BASE_URL=fake_api.base_url)
    _managed(env, {"apiKeyHelper": f"cat {keys['managed']}"})
    _user(env, {"apiKeyHelper": f"cat {keys['user']}"})
    marker = tmp_path / "the-projects-helper-ran"
    write_settings(workspace / ".claude" / "settings.json", {"apiKeyHelper": f"touch {marker}"})
    async with AgentProcess.start(env=env, schema=acp_schema, on_request=Editor()) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "hi")
        status = await status_text(agent, session)
    assert response["result"]["stopReason"] == "end_turn", response
    assert front.seen_keys == ["managed-helper-key-5d2e"] and front.refused == []
    assert not marker.exists()
    assert "apiKeyHelper not run (a project's credential helper never is" in status
    assert f"Credential helpers: apiKeyHelper ({Path(env['ACP_AGENT_MANAGED_SETTINGS_DIR'])}" in status
