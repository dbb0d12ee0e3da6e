"""The test-support layer itself: the ACP schema validator, and the driver against a stand-in."""

from __future__ import annotations

import io
import os
import signal
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from acp_agent.harness.client import AgentSpawnError, spawn_agent
from acp_agent.process.lifetime import OWNER
from tests.support.agent import AgentExitedError, AgentProcess, RpcError, base_env
from tests.support.procs import alive
from tests.support.schema import AcpSchema, check_envelope, parse_line
from tests.support.waits import wait_until

# A stand-in agent: answers every request with `{}` (or params._meta.reply); obeys `stand_in/*`.
STAND_IN = r"""
import json, os, subprocess, sys, time

def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()

held = []
for line in sys.stdin:
    msg = json.loads(line)
    method, params, mid = msg.get("method"), msg.get("params") or {}, msg.get("id")
    reply = params.get("_meta", {}).get("reply", {})
    if method == "stand_in/raw":
        sys.stdout.write(params["text"])
        sys.stdout.flush()
    elif method == "stand_in/send":
        send(params["message"])
    elif method == "stand_in/ask":
        ask = {"method": params["method"], "params": params["params"]}
        send({"jsonrpc": "2.0", "id": "agent-1", **ask})
        reply = {"client_said": json.loads(sys.stdin.readline())}
    elif method == "stand_in/hold":
        held.append(mid)
        continue
    elif method == "stand_in/release":
        send({"jsonrpc": "2.0", "id": mid, "result": {"released": held}})
        for other in held:
            send({"jsonrpc": "2.0", "id": other, "result": {"held": True}})
        held = []
        continue
    elif method == "stand_in/stderr":
        data = b"e" * params["bytes"]
        os.set_blocking(2, False)
        written = 0
        try:
            while written < len(data):
                written += os.write(2, data[written:])
        except BlockingIOError:
            pass
        reply = {"written": written}
    elif method == "stand_in/env":
        reply = dict(os.environ)
    elif method == "stand_in/spawn":  # a child still running when the agent exits
        reply = {"pid": subprocess.Popen(["sleep", "60"], stdout=subprocess.DEVNULL).pid}
    elif method == "stand_in/exit":
        sys.exit(params["code"])
    if "id" in msg:
        send({"jsonrpc": "2.0", "id": mid, "result": reply})
if os.environ.get("STAND_IN_IGNORE_EOF"):  # an agent that stays after EOF, until it is killed
    time.sleep(3600)
sys.exit(int(sys.argv[sys.argv.index("--exit-code") + 1]) if "--exit-code" in sys.argv else 0)
"""


@pytest.fixture
def stand_in(tmp_path: Path) -> list[str]:
    script = tmp_path / "stand_in_agent.py"
    script.write_text(STAND_IN, encoding="utf-8")
    return [sys.executable, str(script)]


def _ok(schema: AcpSchema, msg: dict[str, Any], method: str | None = None) -> list[str]:
    return schema.check_agent_message(msg, request_method_for_id=lambda _id: method)


def _update(update: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s1", "update": update},
    }


# ---- the validator ---------------------------------------------------------------------------


def test_prompt_response_end_turn_is_accepted(acp_schema: AcpSchema) -> None:
    response = {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}
    assert _ok(acp_schema, response, "session/prompt") == []


def test_prompt_response_with_unknown_stop_reason_is_rejected(acp_schema: AcpSchema) -> None:
    problems = _ok(
        acp_schema, {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "done"}}, "session/prompt"
    )
    assert len(problems) == 1
    assert "PromptResponse" in problems[0] and "stopReason" in problems[0] and "'end_turn'" in problems[0]


def test_agent_message_chunk_notification_is_accepted(acp_schema: AcpSchema) -> None:
    chunk = {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "hi"},
        "messageId": "m1",
    }
    assert _ok(acp_schema, _update(chunk)) == []


def test_current_mode_update_needs_current_mode_id_not_mode_id(acp_schema: AcpSchema) -> None:
    assert _ok(acp_schema, _update({"sessionUpdate": "current_mode_update", "currentModeId": "ask"})) == []
    problems = _ok(acp_schema, _update({"sessionUpdate": "current_mode_update", "modeId": "ask"}))
    assert problems and "'currentModeId' is a required property" in problems[0]


def test_tool_call_status_cancelled_is_rejected(acp_schema: AcpSchema) -> None:
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "failed"}
    assert _ok(acp_schema, _update(update)) == []
    problems = _ok(acp_schema, _update({**update, "status": "cancelled"}))
    assert problems and "$.update.status" in problems[0]


def test_unknown_session_update_kind_is_rejected(acp_schema: AcpSchema) -> None:
    assert _ok(acp_schema, _update({"sessionUpdate": "announcement", "text": "x"}))


def test_session_load_result_must_be_an_object(acp_schema: AcpSchema) -> None:
    assert _ok(acp_schema, {"jsonrpc": "2.0", "id": 2, "result": {}}, "session/load") == []
    problems = _ok(acp_schema, {"jsonrpc": "2.0", "id": 2, "result": None}, "session/load")
    assert problems and "LoadSessionResponse" in problems[0]


@pytest.mark.parametrize(
    ("method", "definition"),
    [
        ("initialize", "InitializeResponse"),
        ("session/new", "NewSessionResponse"),
        ("session/prompt", "PromptResponse"),
        ("session/load", "LoadSessionResponse"),
        ("session/set_mode", "SetSessionModeResponse"),
        ("authenticate", "AuthenticateResponse"),
        ("session/set_config_option", "SetSessionConfigOptionResponse"),
        ("session/list", "ListSessionsResponse"),
    ],
)
def test_response_definitions_are_derived_from_the_schema(
    acp_schema: AcpSchema, method: str, definition: str
) -> None:
    assert method in acp_schema.agent_methods
    assert acp_schema.def_name(method, "Response") == definition


@pytest.mark.parametrize(
    ("method", "definition"),
    [
        ("session/request_permission", "RequestPermissionRequest"),
        ("fs/read_text_file", "ReadTextFileRequest"),
        ("fs/write_text_file", "WriteTextFileRequest"),
        ("terminal/create", "CreateTerminalRequest"),
        ("terminal/wait_for_exit", "WaitForTerminalExitRequest"),
        ("terminal/release", "ReleaseTerminalRequest"),
    ],
)
def test_agent_request_definitions_are_derived_from_the_schema(
    acp_schema: AcpSchema, method: str, definition: str
) -> None:
    assert method in acp_schema.client_methods
    assert acp_schema.def_name(method, "Request") == definition


def test_agent_requests_are_checked_against_their_definition(acp_schema: AcpSchema) -> None:
    read = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "fs/read_text_file",
        "params": {"sessionId": "s", "path": "/a"},
    }
    assert _ok(acp_schema, read) == []
    ask = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/request_permission",
        "params": {"sessionId": "s", "toolCall": {"toolCallId": "t"}},
    }
    assert any("'options' is a required property" in p for p in _ok(acp_schema, ask))


def test_extension_methods_and_unknown_requests_are_not_schema_checked(
    acp_schema: AcpSchema,
) -> None:
    assert _ok(acp_schema, {"jsonrpc": "2.0", "method": "_vendor/x", "params": {"any": 1}}) == []
    assert (
        _ok(
            acp_schema,
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
        )
        == []
    )
    assert _ok(acp_schema, {"jsonrpc": "2.0", "id": 9, "result": None}, None) == []


def test_wrong_direction_and_wrong_kind_are_flagged(acp_schema: AcpSchema) -> None:
    prompt = {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {}}
    assert any("handled by the agent" in p for p in _ok(acp_schema, prompt))
    update_as_request = {**_update({"sessionUpdate": "plan", "entries": []}), "id": 4}
    assert any("is a notification but was sent as a request" in p for p in _ok(acp_schema, update_as_request))


@pytest.mark.parametrize(
    ("message", "fragment"),
    [
        ({"id": 1, "result": {}}, '"jsonrpc" must be "2.0"'),
        (
            {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}},
            "exactly one of",
        ),
        ({"jsonrpc": "2.0", "id": 1}, "exactly one of"),
        (
            {"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}},
            "error.code must be an integer",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "error": {"code": True, "message": "m"}},
            "error.code must be an integer",
        ),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": 1}}, "error.message must be a string"),
        ({"jsonrpc": "2.0", "id": 1.5, "result": {}}, '"id" must be'),
        ({"jsonrpc": "2.0", "result": {}}, "must carry an id"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_broken_envelopes_are_reported(message: Any, fragment: str) -> None:
    assert any(fragment in p for p in check_envelope(message)), check_envelope(message)


@pytest.mark.parametrize(
    ("raw", "terminated", "fragment"),
    [
        (b"", True, "blank line"),
        (b"  ", True, "blank line"),
        (b"hello", True, "not JSON"),
        (b'{"jsonrpc":"2.0","id":1,"result":NaN}', True, "not JSON"),
        (b"42", True, "must be a JSON object"),
        (b'{"jsonrpc":"2.0","id":1,"result":"\xff"}', True, "not valid UTF-8"),
        (b'{"jsonrpc":"2.0","id":1,"result":{}}', False, "no newline"),
    ],
)
def test_bad_stdout_lines_are_reported(raw: bytes, terminated: bool, fragment: str) -> None:
    _, _, problems = parse_line(raw, terminated=terminated)
    assert any(fragment in p for p in problems), problems


# ---- the driver, against the stand-in agent -------------------------------------------------


async def test_responses_are_matched_to_their_requests_even_out_of_order(
    stand_in: list[str],
) -> None:
    async with AgentProcess.start(command=stand_in) as agent:
        held: dict[str, Any] = {}

        async def hold() -> None:
            held.update(await agent.request("stand_in/hold"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(hold)
            await anyio.wait_all_tasks_blocked()  # the hold request is out and waiting
            released = await agent.request("stand_in/release")
        assert released["id"] == 2 and released["result"] == {"released": [1]}
        assert held == {"jsonrpc": "2.0", "id": 1, "result": {"held": True}}


async def test_explicit_ids_keep_their_json_type(stand_in: list[str]) -> None:
    async with AgentProcess.start(command=stand_in, first_id=0) as agent:
        assert (await agent.request("ping"))["id"] == 0
        assert (await agent.request("ping", id="abc"))["id"] == "abc"
        assert (await agent.request("ping", id=-5))["id"] == -5


async def test_agent_requests_get_method_not_found_by_default(stand_in: list[str]) -> None:
    async with AgentProcess.start(command=stand_in) as agent:
        resp = await agent.request("stand_in/ask", {"method": "fs/read_text_file", "params": {"path": "/x"}})
        said = resp["result"]["client_said"]
        assert said["id"] == "agent-1" and said["error"]["code"] == -32601
        asked = await agent.wait_for(lambda m: m["method"] == "fs/read_text_file")
        assert asked["id"] == "agent-1"


async def test_agent_requests_are_answered_by_on_request(stand_in: list[str]) -> None:
    async def client(method: str, params: Any) -> Any:
        if method == "fs/read_text_file":
            return {"content": f"text of {params['path']}"}
        raise RpcError(-32002, "Resource not found", {"method": method})

    async with AgentProcess.start(command=stand_in, on_request=client) as agent:
        resp = await agent.request("stand_in/ask", {"method": "fs/read_text_file", "params": {"path": "/x"}})
        assert resp["result"]["client_said"]["result"] == {"content": "text of /x"}
        resp = await agent.request("stand_in/ask", {"method": "terminal/create", "params": {}})
        assert resp["result"]["client_said"]["error"] == {
            "code": -32002,
            "message": "Resource not found",
            "data": {"method": "terminal/create"},
        }


async def test_a_crashing_on_request_handler_fails_the_exit_check(stand_in: list[str]) -> None:
    async def client(method: str, params: Any) -> Any:
        raise KeyError("oops")

    with pytest.raises(AssertionError, match="on_request handler"):
        async with AgentProcess.start(command=stand_in, on_request=client) as agent:
            resp = await agent.request("stand_in/ask", {"method": "fs/read_text_file", "params": {}})
            assert resp["result"]["client_said"]["error"]["code"] == -32603


async def test_stdout_lines_that_are_not_json_rpc_objects_are_violations(
    stand_in: list[str],
) -> None:
    async with AgentProcess.start(command=stand_in, check_on_exit=False) as agent:
        await agent.request("stand_in/raw", {"text": "Hello from a print()\n\n[1]\n"})
        await agent.request("stand_in/send", {"message": {"id": 99, "result": {}}})
    assert agent.stdout_lines[:3] == ["Hello from a print()", "", "[1]"]
    assert [v.split(":")[0] for v in agent.protocol_violations] == [
        "stdout line 1",
        "stdout line 2",
        "stdout line 3",
        "stdout line 5",
    ]
    assert "not JSON" in agent.protocol_violations[0] and "blank line" in agent.protocol_violations[1]
    assert '"jsonrpc" must be "2.0"' in agent.protocol_violations[3]


async def test_the_exit_check_fails_on_a_protocol_violation(stand_in: list[str]) -> None:
    with pytest.raises(AssertionError, match=r"stdout line 1: not JSON: banner"):
        async with AgentProcess.start(command=stand_in) as agent:
            await agent.request("stand_in/raw", {"text": "banner\n"})


async def test_schema_problems_are_collected_per_message(stand_in: list[str], acp_schema: AcpSchema) -> None:
    async with AgentProcess.start(command=stand_in, schema=acp_schema, check_on_exit=False) as agent:
        await agent.request("session/prompt", {"sessionId": "s1", "prompt": []})  # the stand-in answers {}
        await agent.request(
            "stand_in/send",
            {"message": _update({"sessionUpdate": "current_mode_update", "modeId": "ask"})},
        )
    assert len(agent.schema_problems) == 2, agent.schema_problems
    assert "result of session/prompt" in agent.schema_problems[0] and "stopReason" in agent.schema_problems[0]
    assert "(session/update)" in agent.schema_problems[1] and "currentModeId" in agent.schema_problems[1]


async def test_answers_to_raw_requests_are_schema_checked_too(
    stand_in: list[str], acp_schema: AcpSchema
) -> None:
    async with AgentProcess.start(command=stand_in, schema=acp_schema, check_on_exit=False) as agent:
        line = '{"jsonrpc":"2.0","id":"raw-7","method":"session/load","params":{}}\n'
        await agent.send_raw(line)
        answer = await agent.next_message()
    assert answer == {"jsonrpc": "2.0", "id": "raw-7", "result": {}}
    assert agent.schema_problems == []  # {} is a valid LoadSessionResponse
    async with AgentProcess.start(command=stand_in, schema=acp_schema, check_on_exit=False) as agent:
        await agent.send_raw('{"jsonrpc":"2.0","id":8,"method":"session/prompt","params":{}}\n')
        await agent.next_message()
    assert len(agent.schema_problems) == 1 and "result of session/prompt" in agent.schema_problems[0]


async def test_a_second_response_to_one_request_is_a_violation(stand_in: list[str]) -> None:
    async with AgentProcess.start(command=stand_in, check_on_exit=False) as agent:
        await agent.request("ping")
        await agent.request("stand_in/send", {"message": {"jsonrpc": "2.0", "id": 1, "result": {}}})
    assert agent.protocol_violations == ["message #1: a second response to id 1"]


async def test_a_raw_request_reusing_an_answered_id_may_be_answered_again(
    stand_in: list[str],
) -> None:
    async with AgentProcess.start(command=stand_in) as agent:
        await agent.request("ping")
        await agent.send_raw('{"jsonrpc":"1.0","id":1,"method":"ping"}\n')
        assert (await agent.next_message())["id"] == 1


async def test_valid_traffic_passes_the_exit_check(stand_in: list[str], acp_schema: AcpSchema) -> None:
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}
    async with AgentProcess.start(command=stand_in, schema=acp_schema) as agent:
        await agent.request("stand_in/send", {"message": _update(chunk)})
        resp = await agent.prompt("s1", "hello", meta={"reply": {"stopReason": "end_turn"}})
        assert resp["result"] == {"stopReason": "end_turn"}
        assert agent.updates("s1") == [{"sessionId": "s1", "update": chunk}]
        assert agent.updates("other") == []
        assert agent.schema_problems == [] and agent.protocol_violations == []


async def test_next_message_and_wait_for_see_past_and_future_messages(stand_in: list[str]) -> None:
    note = {"jsonrpc": "2.0", "method": "_x/note", "params": {"n": 1}}
    async with AgentProcess.start(command=stand_in) as agent:
        await agent.notify("stand_in/send", {"message": note})
        assert await agent.next_message() == note
        await agent.request("stand_in/send", {"message": {**note, "params": {"n": 2}}})
        assert (await agent.wait_for(lambda m: m["params"]["n"] == 2))["params"] == {"n": 2}
        assert (await agent.wait_for(lambda m: m["params"]["n"] == 1))["params"] == {"n": 1}
        with pytest.raises(TimeoutError, match="no new message"):
            await agent.next_message(timeout=0.2)


async def test_unread_stderr_is_a_pipe_nobody_drains(stand_in: list[str]) -> None:
    async with AgentProcess.start(command=stand_in, stderr="unread") as agent:
        resp = await agent.request("stand_in/stderr", {"bytes": 1 << 20})
    assert 0 < resp["result"]["written"] < 1 << 20  # the pipe filled up and stayed full
    assert agent.stderr_text() == ""


async def test_devnull_stderr_never_blocks(stand_in: list[str]) -> None:
    async with AgentProcess.start(command=stand_in, stderr="devnull") as agent:
        resp = await agent.request("stand_in/stderr", {"bytes": 1 << 20})
    assert resp["result"]["written"] == 1 << 20


async def test_default_stderr_is_drained_into_a_buffer(stand_in: list[str]) -> None:
    async with AgentProcess.start(command=stand_in) as agent:
        resp = await agent.request("stand_in/stderr", {"bytes": 1000})
        assert resp["result"]["written"] == 1000
    assert agent.stderr_text() == "e" * 1000


async def test_eof_on_stdin_lets_the_agent_exit_with_its_own_code(stand_in: list[str]) -> None:
    async with AgentProcess.start(command=stand_in, args=["--exit-code", "3"]) as agent:
        await agent.request("ping")
        await agent.close_stdin()
        assert await agent.wait_exit() == 3
    assert agent.returncode == 3


async def test_a_pending_request_fails_fast_when_the_agent_exits(stand_in: list[str]) -> None:
    async with AgentProcess.start(command=stand_in) as agent:
        with pytest.raises(AgentExitedError, match="exit code 5"):
            await agent.request("stand_in/exit", {"code": 5}, timeout=50)
        assert await agent.wait_exit() == 5


async def test_an_agent_ignoring_eof_is_killed_on_exit(stand_in: list[str], tmp_path: Path) -> None:
    env = base_env(tmp_path, STAND_IN_IGNORE_EOF="1")
    async with AgentProcess.start(command=stand_in, env=env, exit_timeout=0.5) as agent:
        await agent.request("ping")
    assert agent.returncode == -9


async def test_nothing_the_agent_spawned_outlives_it(stand_in: list[str]) -> None:
    async with AgentProcess.start(command=stand_in) as agent:
        child = (await agent.request("stand_in/spawn"))["result"]["pid"]
    # SIGKILL is sent; the orphan's reaping by init has no event to wait on.
    await wait_until(lambda: not alive(child), "the agent's child to be gone")


async def test_env_is_the_whole_environment_and_base_env_is_minimal(
    stand_in: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-developer-own")
    env = base_env(tmp_path, EXTRA="1", ACP_AGENT_LOG_LEVEL=None)
    assert "ANTHROPIC_API_KEY" not in env and "ACP_AGENT_LOG_LEVEL" not in env and env["EXTRA"] == "1"
    for name in (
        "HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
        "ANTHROPIC_CONFIG_DIR",
    ):
        assert Path(env[name]).is_dir() and Path(env[name]).is_relative_to(tmp_path)
    assert env["NO_PROXY"] == "127.0.0.1,localhost" and Path(env["PYTHONPATH"], "acp_agent").is_dir()
    async with AgentProcess.start(command=stand_in, env=env) as agent:
        seen = (await agent.request("stand_in/env"))["result"]
    # Python's own C-locale coercion may add LC_CTYPE; the harness marks the agent as its child.
    assert set(seen) - set(env) <= {"LC_CTYPE", OWNER}
    assert seen["HOME"] == env["HOME"]


# ---- the same client with the harness's defaults ------------------------------------------------


async def test_the_harness_client_records_bad_lines_and_answers_with_results(stand_in: list[str]) -> None:
    notes: list[dict[str, Any]] = []
    async with spawn_agent(stand_in, on_notification=notes.append) as client:
        assert await client.call("stand_in/raw", {"text": "banner\n"}) == {}
        note = {"jsonrpc": "2.0", "method": "_x/note", "params": {"n": 1}}
        await client.call("stand_in/send", {"message": note})
        asked = await client.call("stand_in/ask", {"method": "fs/read_text_file", "params": {}})
    assert client.invalid_lines == ["banner"]
    assert client.protocol_violations == ["stdout line 1: not JSON: banner"]
    assert notes == [note]  # and the agent's request got "method not found", the default answer
    assert asked["client_said"]["error"]["code"] == -32601


async def test_the_harness_client_keeps_a_tail_of_stderr_and_copies_all_of_it(stand_in: list[str]) -> None:
    sink = io.BytesIO()
    async with spawn_agent(stand_in, stderr=sink, stderr_keep=100) as client:
        assert (await client.call("stand_in/stderr", {"bytes": 1000}))["written"] == 1000
    assert client.stderr_text() == "e" * 100 and sink.getvalue() == b"e" * 1000


async def test_the_harness_client_stops_an_agent_ignoring_eof_with_sigterm(
    stand_in: list[str], tmp_path: Path
) -> None:
    env = base_env(tmp_path, STAND_IN_IGNORE_EOF="1")
    async with spawn_agent(stand_in, env=env, grace=0.5) as client:
        await client.call("ping")
    assert client.returncode == -signal.SIGTERM


async def test_the_harness_client_cannot_start_a_missing_command(tmp_path: Path) -> None:
    with pytest.raises(AgentSpawnError, match="cannot start"):
        async with spawn_agent([str(tmp_path / "no-such-agent")]):
            pass


def test_agent_env_points_the_agent_at_the_fake_api(tmp_path: Path, agent_env: dict[str, str]) -> None:
    env = agent_env
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9/" and env["ANTHROPIC_API_KEY"] == "test-key"
    assert env["ACP_AGENT_MODEL"] == "claude-test-1" and env["ACP_AGENT_STREAMING"] in {"0", "1"}
    assert env["ACP_AGENT_STATE_DIR"] == str(tmp_path / "state")


@pytest.fixture
def fake_api() -> Any:
    """For this module only: a stand-in for the fake Messages API, to check `agent_env` alone."""
    return SimpleNamespace(base_url="http://127.0.0.1:9/")


def test_the_no_proxy_guard_is_on() -> None:
    assert os.environ["NO_PROXY"] == "127.0.0.1,localhost"
