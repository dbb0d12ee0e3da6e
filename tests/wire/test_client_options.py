"""acpx's `--system-prompt`, `--max-turns` and `--allowed-tools`, as it sends them on `session/new`
(`_meta.systemPrompt`, `_meta.claudeCode.options.maxTurns` / `.allowedTools`), and ACP's unstable
`systemPrompt`: honoured on the wire, malformed values refused with -32602 (issue 29, item 16)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess


def acpx_meta(**options: Any) -> dict[str, Any]:
    """`_meta` as acpx's `buildClaudeCodeOptionsMeta` builds it."""
    meta: dict[str, Any] = {}
    system = options.pop("systemPrompt", None)
    if options:
        meta["claudeCode"] = {"options": options}
    if system is not None:
        meta["systemPrompt"] = system
    return meta


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system")
    if isinstance(system, list):
        return "".join(block.get("text", "") for block in system)
    return str(system or "")


def reads(n: int) -> list[replies.Message]:
    """n replies that each read a file (varied, so no repeat detection), then an answer."""
    return [replies.tool_use("read_file", {"path": "notes.txt", "offset": i + 1}) for i in range(n)]


async def test_max_turns_2_sends_exactly_2_requests(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(*reads(4), replies.text("done"))
    session = await agent.new_session(workspace, meta=acpx_meta(maxTurns=2))
    response = await agent.prompt(session, "read the notes again and again")
    assert response["result"]["stopReason"] == "max_turn_requests", response
    assert fake_api.attempts == 2
    assert "at most 2 model requests" in system_text(fake_api.requests[0].body)


async def test_the_agents_own_max_turn_requests_wins_over_max_turns(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(*reads(4), replies.text("done"))
    meta = {**acpx_meta(maxTurns=1), "acp-agent": {"maxTurnRequests": 3}}
    session = await agent.new_session(workspace, meta=meta)
    response = await agent.prompt(session, "go")
    assert response["result"]["stopReason"] == "max_turn_requests"
    assert fake_api.attempts == 3


async def test_allowed_tools_are_the_tools_offered(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        replies.tool_use("write_file", {"path": "x.txt", "content": "no"}, id="toolu_write"),
        replies.text("ok"),
    )
    allowed = ["Read", "grep", "Bash(git status)", "mcp__docs__search", "Task", "NotebookEdit", "list_files"]
    session = await agent.new_session(workspace, meta=acpx_meta(allowedTools=allowed))
    response = await agent.prompt(session, "write x.txt")
    assert response["result"]["stopReason"] == "end_turn"
    first = fake_api.requests[0].body
    assert [t["name"] for t in first["tools"]] == [
        "read_file",
        "list_files",
        "search_text",
        "run_command",
        "command_output",  # with run_command: the model reads and stops what it starts
        "stop_command",
        "task",
    ]
    assert "- write_file" not in system_text(first) and "- read_file" in system_text(first)
    result = json.dumps(fake_api.requests[1].body["messages"][-1])
    assert "toolu_write" in result and "write_file" in result  # refused as unknown: not offered
    assert not (workspace / "x.txt").exists()
    assert "session.tools_unknown" in agent.stderr_text() and "NotebookEdit" in agent.stderr_text()


async def test_an_empty_allowed_tools_list_offers_no_tools(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.text("no tools"))
    session = await agent.new_session(workspace, meta=acpx_meta(allowedTools=[]))
    assert (await agent.prompt(session, "hi"))["result"]["stopReason"] == "end_turn"
    assert "tools" not in fake_api.requests[0].body


@pytest.mark.parametrize(
    "system",
    [
        "Answer in French.",
        {"append": "Answer in French."},
        {"type": "preset", "preset": "claude_code", "append": "Answer in French."},
    ],
    ids=["string", "append", "preset-append"],
)
async def test_the_system_prompt_is_appended_and_stays_the_same_on_every_request(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI, system: Any
) -> None:
    fake_api.script(*reads(1), replies.text("fini"), replies.text("encore"))
    session = await agent.new_session(workspace, meta=acpx_meta(systemPrompt=system))
    await agent.prompt(session, "read the notes")
    await agent.prompt(session, "again")
    texts = [system_text(r.plain_body) for r in fake_api.requests]
    assert len(texts) == 3 and len(set(texts)) == 1  # one system text: the prompt cache holds
    assert texts[0].endswith("Instructions from the client:\nAnswer in French.")
    assert texts[0].startswith("You are acp-agent")  # appended to the agent's own, not in place


async def test_acps_system_prompt_append_is_honoured_with_acpxs(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.text("ok"))
    session = await agent.new_session(
        workspace,
        meta=acpx_meta(systemPrompt="From _meta."),
        systemPrompt={"mode": "append", "content": [{"type": "text", "text": "From ACP."}]},
    )
    await agent.prompt(session, "hi")
    assert system_text(fake_api.requests[0].body).endswith("From _meta.\n\nFrom ACP.")


MALFORMED: dict[str, tuple[dict[str, Any], str]] = {
    "maxTurns 0": ({"_meta": acpx_meta(maxTurns=0)}, "_meta.claudeCode.options.maxTurns"),
    "maxTurns as text": ({"_meta": acpx_meta(maxTurns="2")}, "_meta.claudeCode.options.maxTurns"),
    "maxTurns 2.5": ({"_meta": acpx_meta(maxTurns=2.5)}, "_meta.claudeCode.options.maxTurns"),
    "maxTurns true": ({"_meta": acpx_meta(maxTurns=True)}, "_meta.claudeCode.options.maxTurns"),
    "allowedTools as text": (
        {"_meta": acpx_meta(allowedTools="Read")},
        "_meta.claudeCode.options.allowedTools",
    ),
    "a number as a tool": (
        {"_meta": acpx_meta(allowedTools=["Read", 7])},
        "_meta.claudeCode.options.allowedTools[1]",
    ),
    "an empty tool name": (
        {"_meta": acpx_meta(allowedTools=[""])},
        "_meta.claudeCode.options.allowedTools[0]",
    ),
    "claudeCode as text": ({"_meta": {"claudeCode": "x"}}, "_meta.claudeCode"),
    "options as a list": ({"_meta": {"claudeCode": {"options": []}}}, "_meta.claudeCode.options"),
    "systemPrompt a number": ({"_meta": {"systemPrompt": 5}}, "_meta.systemPrompt"),
    "append a number": ({"_meta": {"systemPrompt": {"append": 3}}}, "_meta.systemPrompt.append"),
    "systemPrompt too long": ({"_meta": {"systemPrompt": "x" * 100_001}}, "_meta.systemPrompt"),
    "ACP override": (
        {"systemPrompt": {"mode": "override", "content": [{"type": "text", "text": "x"}]}},
        "systemPrompt.mode",
    ),
    "ACP unknown mode": (
        {"systemPrompt": {"mode": "_mine", "content": [{"type": "text", "text": "x"}]}},
        "systemPrompt.mode",
    ),
    "ACP empty content": ({"systemPrompt": {"mode": "append", "content": []}}, "systemPrompt.content"),
    "ACP image content": (
        {
            "systemPrompt": {
                "mode": "append",
                "content": [{"type": "image", "data": "", "mimeType": "image/png"}],
            }
        },
        "systemPrompt.content[0]",
    ),
}


@pytest.mark.model_free
async def test_malformed_values_are_32602_naming_the_field_and_make_no_session(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    answers = {
        name: await agent.request("session/new", {"cwd": str(workspace), "mcpServers": [], **extra})
        for name, (extra, _) in MALFORMED.items()
    }
    listed = await agent.request("session/list", {})
    for name, (_, field) in MALFORMED.items():
        error = answers[name].get("error")
        assert error is not None and error["code"] == -32602, (name, answers[name])
        assert field in error["message"] and error["data"]["field"] == field, (name, error)
    assert listed["result"]["sessions"] == []
    assert fake_api.attempts == 0


@pytest.mark.parametrize("method", ["session/load", "session/resume"])
async def test_load_and_resume_take_the_options_of_their_own_request(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI, method: str
) -> None:
    session = await agent.new_session(workspace, meta=acpx_meta(systemPrompt="Before."))
    fake_api.script(*reads(3), replies.text("done"))
    params = {
        "sessionId": session,
        "cwd": str(workspace),
        "mcpServers": [],
        "_meta": acpx_meta(maxTurns=1, allowedTools=["Read"], systemPrompt="After."),
    }
    assert "result" in await agent.request(method, params)
    response = await agent.prompt(session, "go")
    assert response["result"]["stopReason"] == "max_turn_requests"
    assert fake_api.attempts == 1
    body = fake_api.requests[0].body
    assert [t["name"] for t in body["tools"]] == ["read_file"]
    assert system_text(body).endswith("Instructions from the client:\nAfter.")
    bad = await agent.request(method, {**params, "_meta": acpx_meta(maxTurns=-1)})
    assert bad["error"]["code"] == -32602 and bad["error"]["data"]["field"].endswith("maxTurns")
