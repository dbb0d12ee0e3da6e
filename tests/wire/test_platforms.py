"""Claude on Bedrock, Vertex AI, Foundry and behind a gateway with an `apiKeyHelper` (issue 45): the
real agent, the real SDK platform clients, and the loopback fake behind each platform's front
(`acp_agent/testing/clouds/bedrock.py`, `vertex.py`, `platform_front.py`), which checks what the service
checks: Bedrock's SigV4 signature recomputed with botocore and its event-stream framing, Vertex's
path and a token its token endpoint issued for a service account's signed JWT, Foundry's key
headers, the gateway's key. Each runs a tool loop with `maxTurnRequests` exact, on both paths."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from acp_agent.testing.clouds.bedrock import AwsCredentials, BedrockFront
from acp_agent.testing.clouds.platform_front import FoundryFront, GatewayFront, PlatformFront
from acp_agent.testing.clouds.vertex import VertexFront
from acp_agent.testing.recorded import RecordedRequest
from tests.support import base_env
from tests.support.agent import AgentProcess
from tests.support.client import allow
from tests.wire.conftest import chunks, turn_record

MODEL = "claude-test-1"
FOUNDRY_KEY = "foundry-marker-key-7c1d2e"
HELPER_KEY = "gateway-marker-key-from-the-helper-93ab"
CREDENTIALS = AwsCredentials(
    "AKIAMARKERACCESSKEY1", "marker/secret/access/key/5e6f7a8b", "marker-session-token-2b3c4d"
)


@dataclass
class Platform:
    """One platform's fake front, the agent's variables for it, and what each request must show."""

    name: str
    front: PlatformFront
    env: dict[str, str]
    check: Callable[[RecordedRequest], None]
    secrets: list[str] = field(default_factory=list)
    """Credentials that must reach no tool, hook, command, log line or journal."""
    files: list[Path] = field(default_factory=list)
    """Credential files no command may read."""


def _bedrock(fake: FakeMessagesAPI, home: Path) -> Platform:
    front = BedrockFront(region="us-west-2", credentials=CREDENTIALS)
    env = {
        "CLAUDE_CODE_USE_BEDROCK": "1",
        "AWS_REGION": "us-west-2",
        "AWS_ACCESS_KEY_ID": CREDENTIALS.access_key,
        "AWS_SECRET_ACCESS_KEY": CREDENTIALS.secret_key,
        "AWS_SESSION_TOKEN": str(CREDENTIALS.session_token),
        "ANTHROPIC_BEDROCK_BASE_URL": fake.base_url,
    }

    def check(request: RecordedRequest) -> None:
        kind = "invoke-with-response-stream" if request.is_stream else "invoke"
        assert request.platform_path == f"/model/us.anthropic.{MODEL}/{kind}", request.platform_path
        assert request.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIAMARKER")

    return Platform("bedrock", front, env, check, [CREDENTIALS.secret_key, str(CREDENTIALS.session_token)])


def _vertex(fake: FakeMessagesAPI, home: Path) -> Platform:
    front = VertexFront(project="acme-proj", region="us-east5")
    account = front.service_account_file(home / "vertex-sa.json", fake.base_url)
    env = {
        "CLAUDE_CODE_USE_VERTEX": "1",
        "CLOUD_ML_REGION": "us-east5",
        "ANTHROPIC_VERTEX_PROJECT_ID": "acme-proj",
        "GOOGLE_APPLICATION_CREDENTIALS": str(account),
        "ANTHROPIC_VERTEX_BASE_URL": fake.base_url,  # a bare host, as Claude Code's docs write it
    }
    key = json.loads(account.read_text())["private_key"]

    def check(request: RecordedRequest) -> None:
        kind = "streamRawPredict" if request.is_stream else "rawPredict"
        expected = f"/v1/projects/acme-proj/locations/us-east5/publishers/anthropic/models/{MODEL}:{kind}"
        assert request.platform_path == expected, request.platform_path
        assert request.headers["authorization"].startswith("Bearer ya29.fake-vertex-token-")

    marker = key.splitlines()[5]  # a line of the private key
    return Platform("vertex", front, env, check, [marker, "ya29.fake-vertex-token-1"], [account])


def _foundry(fake: FakeMessagesAPI, home: Path) -> Platform:
    env = {
        "CLAUDE_CODE_USE_FOUNDRY": "1",
        "ANTHROPIC_FOUNDRY_BASE_URL": f"{fake.base_url}/anthropic",
        "ANTHROPIC_FOUNDRY_API_KEY": FOUNDRY_KEY,
    }

    def check(request: RecordedRequest) -> None:
        assert request.platform_path == "/anthropic/v1/messages"
        assert request.headers["x-api-key"] == request.headers["api-key"] == FOUNDRY_KEY

    return Platform("foundry", FoundryFront(api_key=FOUNDRY_KEY), env, check, [FOUNDRY_KEY])


def _gateway(fake: FakeMessagesAPI, home: Path) -> Platform:
    key_file = home / "gateway-key.txt"
    key_file.write_text(HELPER_KEY + "\n")
    _user_settings(home, {"apiKeyHelper": f"cat {key_file}"})

    def check(request: RecordedRequest) -> None:
        assert request.platform_path == "/v1/messages"
        assert request.headers["x-api-key"] == HELPER_KEY
        assert request.headers["authorization"] == f"Bearer {HELPER_KEY}"

    front = GatewayFront(keys={HELPER_KEY})
    return Platform("gateway", front, {"ANTHROPIC_BASE_URL": fake.base_url}, check, [HELPER_KEY])


PLATFORMS = {"bedrock": _bedrock, "vertex": _vertex, "foundry": _foundry, "gateway": _gateway}


def _user_settings(home: Path, settings: dict[str, Any]) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    existing = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps({**existing, **settings}))


def _env(tmp_path: Path, streaming: bool, platform: Platform, **extra: str) -> dict[str, str]:
    return base_env(
        tmp_path,
        ACP_AGENT_MODEL=MODEL,
        ACP_AGENT_STREAMING="1" if streaming else "0",
        ACP_AGENT_STALL_SECONDS="20",
        ACP_AGENT_STATE_DIR=str(tmp_path / "state"),
        ACP_AGENT_LOG_LEVEL="debug",
        **platform.env,
        **extra,
    )


@pytest.fixture(params=list(PLATFORMS))
def platform(request: pytest.FixtureRequest, fake_api: FakeMessagesAPI, tmp_path: Path) -> Platform:
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    chosen = PLATFORMS[request.param](fake_api, home)
    fake_api.front = chosen.front
    return chosen


async def test_a_tool_loop_runs_through_each_platform_with_max_turn_requests_exact(
    platform: Platform,
    fake_api: FakeMessagesAPI,
    tmp_path: Path,
    workspace: Path,
    acp_schema: Any,
    streaming: bool,
) -> None:
    fake_api.set_fallback(lambda body, n: replies.tool_use("list_files", {"pattern": f"*{n}"}))
    env = _env(tmp_path, streaming, platform)
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace, meta={"acp-agent": {"maxTurnRequests": 3}})
        response = await agent.prompt(session, "loop")
    assert "result" in response and response["result"]["stopReason"] == "max_turn_requests", response
    record = turn_record(response)
    assert record["modelRequests"] == 3 and record["retries"] == 0, record
    assert fake_api.attempts == 3 and platform.front.refused == []
    for request in fake_api.requests:
        platform.check(request)
        assert request.is_stream is streaming
    if isinstance(platform.front, VertexFront):
        assert platform.front.tokens_issued == 1  # one token, kept for its hour
    if isinstance(platform.front, BedrockFront):
        assert all(b["anthropic_version"] for b in platform.front.raw_bodies)
    assert not any(
        r.path.startswith("/v1/models") for r in fake_api.other_requests if platform.name != "gateway"
    )


async def test_no_credential_reaches_a_tool_a_hook_a_command_a_log_line_or_the_journal(
    platform: Platform,
    fake_api: FakeMessagesAPI,
    tmp_path: Path,
    workspace: Path,
    acp_schema: Any,
    streaming: bool,
) -> None:
    home = tmp_path / "home"
    _user_settings(
        home, {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "env"}]}]}}
    )
    reads = " ".join(f"cat {p};" for p in platform.files)
    command = f"env; cat /proc/$PPID/environ | tr '\\0' '\\n'; {reads} echo done"
    fake_api.script(replies.tool_use("run_command", {"command": command}, id="toolu_env"), replies.text("ok"))
    env = _env(tmp_path, streaming, platform)
    async with AgentProcess.start(env=env, schema=acp_schema, on_request=allow) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "show me your environment")
    assert response["result"]["stopReason"] == "end_turn", response
    sent = json.dumps([r.body for r in fake_api.requests])
    assert "PATH=" in sent and "done" in sent  # the hook's and the command's output reached the model
    journals = [p for p in (tmp_path / "state").rglob("*") if p.is_file()]
    assert journals
    for secret in platform.secrets:
        assert secret not in sent, f"{platform.name}: a tool, hook or command read a credential"
        assert secret not in json.dumps(agent.messages) and secret not in agent.stderr_text()
        assert all(secret.encode() not in p.read_bytes() for p in journals)
    for name in (
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "ANTHROPIC_FOUNDRY_API_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ):
        assert f"{name}=" not in sent


# ── Bedrock's failures, each a message the user can act on ─────────────────────────────────
@pytest.fixture
def bedrock(fake_api: FakeMessagesAPI, tmp_path: Path) -> Platform:
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    chosen = _bedrock(fake_api, home)
    fake_api.front = chosen.front
    return chosen


async def _one_prompt(
    env: dict[str, str], workspace: Path, acp_schema: Any, text: str = "hi"
) -> dict[str, Any]:
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        return await agent.prompt(session, text)


async def test_a_model_not_enabled_on_bedrock_says_so_and_is_not_an_auth_failure(
    bedrock: Platform,
    fake_api: FakeMessagesAPI,
    tmp_path: Path,
    workspace: Path,
    acp_schema: Any,
    streaming: bool,
) -> None:
    fake_api.script(
        replies.error(
            403, "AccessDeniedException", "You don't have access to the model with the specified model ID."
        )
    )
    response = await _one_prompt(_env(tmp_path, streaming, bedrock), workspace, acp_schema)
    error = response["error"]
    assert (
        "not enabled for this account in us-west-2" in error["message"] and "Model access" in error["message"]
    )
    assert error["data"]["acp-agent"]["kind"] == "model_unavailable"
    assert error["data"]["acp-agent"]["turn"]["modelRequests"] == 1 and fake_api.attempts == 1
    assert "Traceback" not in error["message"]


async def test_a_bedrock_throttle_is_retried_after_the_time_it_asks(
    bedrock: Platform,
    fake_api: FakeMessagesAPI,
    tmp_path: Path,
    workspace: Path,
    acp_schema: Any,
    streaming: bool,
) -> None:
    fake_api.script(
        replies.error(429, "ThrottlingException", "Too many requests", retry_after=0.2), replies.text("fine")
    )
    response = await _one_prompt(_env(tmp_path, streaming, bedrock), workspace, acp_schema)
    assert response["result"]["stopReason"] == "end_turn", response
    record = turn_record(response)
    assert record["modelRequests"] == 1 and record["retries"] == 1 and fake_api.attempts == 2


@pytest.mark.parametrize("streaming", [True], ids=["stream"])
async def test_a_bedrock_stream_cut_short_before_any_output_is_retried(
    bedrock: Platform,
    fake_api: FakeMessagesAPI,
    tmp_path: Path,
    workspace: Path,
    acp_schema: Any,
    streaming: bool,
) -> None:
    fake_api.script(replies.text("lost", chunks=4, truncate_after=2), replies.text("whole"))
    response = await _one_prompt(_env(tmp_path, streaming, bedrock), workspace, acp_schema)
    assert response["result"]["stopReason"] == "end_turn", response
    assert turn_record(response)["retries"] == 1 and fake_api.attempts == 2


@pytest.mark.parametrize("streaming", [True], ids=["stream"])
async def test_a_bedrock_exception_frame_mid_stream_is_retried_before_output(
    bedrock: Platform,
    fake_api: FakeMessagesAPI,
    tmp_path: Path,
    workspace: Path,
    acp_schema: Any,
    streaming: bool,
) -> None:
    fake_api.script(replies.text("lost", chunks=4, error_event_after=1), replies.text("whole"))
    response = await _one_prompt(_env(tmp_path, streaming, bedrock), workspace, acp_schema)
    assert response["result"]["stopReason"] == "end_turn", response
    assert turn_record(response)["retries"] == 1 and fake_api.attempts == 2


@pytest.mark.model_free
async def test_an_expired_aws_sso_login_runs_aws_auth_refresh_then_says_what_to_run(
    fake_api: FakeMessagesAPI, tmp_path: Path, workspace: Path, acp_schema: Any
) -> None:
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "config").write_text(
        "[profile corp-dev]\nsso_session = corp\nsso_account_id = 123456789012\nsso_role_name = Dev\n"
        "region = eu-west-1\n[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\n"
        "sso_region = eu-west-1\n"
    )
    refreshed = home / "refreshed"
    _user_settings(home, {"awsAuthRefresh": f"touch {refreshed}"})
    fake_api.front = BedrockFront(region="eu-west-1")
    env = base_env(
        tmp_path,
        ACP_AGENT_MODEL=MODEL,
        ACP_AGENT_STATE_DIR=str(tmp_path / "state"),
        CLAUDE_CODE_USE_BEDROCK="1",
        AWS_PROFILE="corp-dev",
        ANTHROPIC_BEDROCK_BASE_URL=fake_api.base_url,
    )
    response = await _one_prompt(env, workspace, acp_schema)
    error = response["error"]
    assert "aws sso login --profile corp-dev" in error["message"], error
    assert error["data"]["acp-agent"]["kind"] == "auth_required"
    assert refreshed.exists(), "awsAuthRefresh ran once before giving up"
    assert fake_api.attempts == 0


@pytest.mark.model_free
async def test_vertex_without_a_project_says_which_variable_to_set_and_status_names_the_platform(
    fake_api: FakeMessagesAPI, tmp_path: Path, workspace: Path, acp_schema: Any
) -> None:
    fake_api.front = VertexFront()
    env = base_env(
        tmp_path,
        ACP_AGENT_MODEL=MODEL,
        ACP_AGENT_STATE_DIR=str(tmp_path / "state"),
        CLAUDE_CODE_USE_VERTEX="1",
        CLOUD_ML_REGION="europe-west4",
    )
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "hi")
        await agent.prompt(session, "/status")
        status = "".join(c["content"]["text"] for c in chunks(agent, session))
    assert "ANTHROPIC_VERTEX_PROJECT_ID" in response["error"]["message"], response
    assert (
        "Platform: Google Vertex AI (CLAUDE_CODE_USE_VERTEX), region europe-west4 (from CLOUD_ML_REGION)"
        in status
    )
    assert "Not available on this platform: the Models API" in status and "web fetch" in status
    assert "Problem: Vertex AI: set ANTHROPIC_VERTEX_PROJECT_ID" in status
    assert fake_api.attempts == 0


async def test_a_gateway_key_helper_is_run_again_after_a_401_and_the_request_retried(
    fake_api: FakeMessagesAPI, tmp_path: Path, workspace: Path, acp_schema: Any, streaming: bool
) -> None:
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    gateway = _gateway(fake_api, home)
    assert isinstance(gateway.front, GatewayFront)
    fake_api.front = gateway.front
    key_file = home / "gateway-key.txt"

    def rotate_then_answer(body: dict[str, Any], n: int) -> replies.Message:
        key_file.write_text("rotated-key-2\n")  # the helper's next answer
        assert isinstance(gateway.front, GatewayFront)
        gateway.front.rotate("rotated-key-2")  # the old key is refused from now on
        return replies.text("first")

    fake_api.script(rotate_then_answer, replies.text("second"))
    async with AgentProcess.start(env=_env(tmp_path, streaming, gateway), schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        first = await agent.prompt(session, "one")
        second = await agent.prompt(session, "two")
    assert first["result"]["stopReason"] == second["result"]["stopReason"] == "end_turn", second
    assert turn_record(second)["retries"] == 1 and fake_api.attempts == 2
    assert gateway.front.refused == ["unknown key"]
    assert gateway.front.seen_keys == [HELPER_KEY, HELPER_KEY, "rotated-key-2"]
