"""`acp-agent login` stores a key the agent then uses; terminal auth is offered when the client can."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess, base_env
from tests.support.zed import zed_initialize


def test_login_stores_the_key_privately(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "acp_agent", "login"],
        input="sk-ant-stored\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    stored = Path(env["XDG_CONFIG_HOME"]) / "acp-agent" / "credentials.json"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert "sk-ant-stored" not in done.stderr + done.stdout


async def test_the_agent_uses_a_stored_key_when_the_environment_has_none(
    tmp_path: Path, acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    env = base_env(
        tmp_path,
        ANTHROPIC_BASE_URL=fake_api.base_url,
        ACP_AGENT_MODEL="claude-test-1",
        ACP_AGENT_STATE_DIR=str(tmp_path / "state"),
    )
    subprocess.run(
        [sys.executable, "-m", "acp_agent", "login"],
        input="sk-ant-stored\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    fake_api.script(replies.text("authenticated"))
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        init = await agent.initialize(auth={"terminal": True})
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "hi")
    assert response["result"]["stopReason"] == "end_turn"
    assert fake_api.requests[0].headers["authorization"] == "Bearer sk-ant-stored"
    terminal = [m for m in init["authMethods"] if m.get("type") == "terminal"]
    assert terminal == [
        {
            "type": "terminal",
            "id": "login",
            "name": "Log in with an API key",
            "description": "Runs `acp-agent login` in a terminal to store a key.",
            "args": ["login"],
            "_meta": {
                "terminal-auth": {
                    "command": sys.executable,
                    "args": ["-P", "-m", "acp_agent", "login"],
                    "label": "acp-agent login",
                }
            },
        }
    ]


async def test_the_terminal_auth_command_logs_in_and_the_running_agent_uses_the_key(
    tmp_path: Path, acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, streaming: bool
) -> None:
    """What Zed does with `_meta["terminal-auth"]`: run that command line in a terminal, then call
    `authenticate` on the agent it already has running, which must pick the key up (no restart)."""
    env = base_env(
        tmp_path,
        ANTHROPIC_BASE_URL=fake_api.base_url,
        ACP_AGENT_MODEL="claude-test-1",
        ACP_AGENT_STREAMING="1" if streaming else "0",
        ACP_AGENT_STATE_DIR=str(tmp_path / "state"),
    )
    fake_api.script(replies.text("authenticated"))
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        init = await zed_initialize(agent)
        method = next(m for m in init["authMethods"] if "terminal-auth" in m.get("_meta", {}))
        launch = method["_meta"]["terminal-auth"]
        done = subprocess.run(
            [launch["command"], *launch["args"]],
            input="sk-ant-from-terminal\n",
            env={**env, **launch.get("env", {})},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        answer = await agent.request("authenticate", {"methodId": method["id"]})
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "hi")
    assert done.returncode == 0, done.stderr
    assert answer["result"] == {}
    assert response["result"]["stopReason"] == "end_turn"
    sent = fake_api.requests[0].headers
    assert "sk-ant-from-terminal" in sent.get("x-api-key", "") + sent.get("authorization", "")


@pytest.mark.model_free
async def test_terminal_auth_is_not_offered_to_a_client_that_cannot_run_it(agent: AgentProcess) -> None:
    result = await agent.initialize()
    assert [m["id"] for m in result["authMethods"]] == ["anthropic-api-key"]


@pytest.mark.model_free
async def test_terminal_auth_is_offered_to_a_client_that_says_so_in_meta(agent: AgentProcess) -> None:
    """The ACP Registry's validator (and some clients) send `_meta["terminal-auth"]` instead."""
    result = await agent.initialize(
        terminal=True,
        fs={"readTextFile": True, "writeTextFile": True},
        _meta={"terminal_output": True, "terminal-auth": True},
    )
    methods = {m["id"]: m for m in result["authMethods"]}
    assert methods["login"]["type"] == "terminal" and methods["login"]["args"] == ["login"]
    assert "type" not in methods["anthropic-api-key"]  # an agent method, as the registry wants
