"""`session/fork` (ACP unstable) and `/fork [N]`: a new session with a copy of another's
conversation, whole or through a prompt, with its own journal, title and options; the source's
journal is never written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.waits import wait_until
from tests.wire.conftest import chunks

UNKNOWN = "sess_" + "0" * 32


def journal(agent_env: dict[str, str], session: str) -> Path:
    return Path(agent_env["ACP_AGENT_STATE_DIR"]) / f"{session}.jsonl"


def fork_params(session: str, workspace: Path, prompt_index: Any = None, **extra: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"sessionId": session, "cwd": str(workspace), **extra}
    if prompt_index is not None:
        params["_meta"] = {"acp-agent": {"promptIndex": prompt_index}}
    return params


def said(request: Any) -> list[str]:
    """Every text of a request's messages, in order."""
    return [
        block["text"]
        for message in request.plain_body["messages"]
        for block in message["content"]
        if block["type"] == "text"
    ]


async def replayed(agent: AgentProcess, session: str, workspace: Path) -> list[tuple[str, str]]:
    """session/load of `session`: the user and agent texts it replays, in order."""
    loaded = await agent.request(
        "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
    )
    assert "result" in loaded, loaded
    return [
        (u["update"]["sessionUpdate"], u["update"]["content"]["text"])
        for u in agent.updates(session)
        if u["update"]["sessionUpdate"] in {"user_message_chunk", "agent_message_chunk"}
    ]


async def test_a_fork_at_prompt_1_and_its_source_diverge_without_touching_each_others_journals(
    agent_env: dict[str, str], acp_unstable_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.text("answer one"), replies.text("answer two"))
    async with AgentProcess.start(env=agent_env, schema=acp_unstable_schema) as agent:
        init = await agent.initialize()
        assert init["agentCapabilities"]["sessionCapabilities"]["fork"] == {}
        source = await agent.new_session(workspace)
        await agent.prompt(source, "first question")
        await agent.prompt(source, "second question")
        before = journal(agent_env, source).read_bytes()
        stat = journal(agent_env, source).stat()
        forked = await agent.request("session/fork", fork_params(source, workspace, 1))
        # Validated against the unstable ForkSessionResponse as it was read.
        result = forked["result"]
        fork = result["sessionId"]
        assert fork != source and {"modes", "configOptions"} <= result.keys()
        after = journal(agent_env, source).stat()
        assert journal(agent_env, source).read_bytes() == before
        assert (after.st_mtime_ns, after.st_ino) == (stat.st_mtime_ns, stat.st_ino)
        # They diverge: each request carries its own session's history only.
        fake_api.script(replies.text("fork's answer"), replies.text("source's answer"))
        assert (await agent.prompt(fork, "fork's own question"))["result"]["stopReason"] == "end_turn"
        assert (await agent.prompt(source, "source's third"))["result"]["stopReason"] == "end_turn"
        listed = await agent.request("session/list", {})
    assert said(fake_api.requests[2]) == ["first question", "answer one", "fork's own question"]
    assert said(fake_api.requests[3]) == [
        "first question",
        "answer one",
        "second question",
        "answer two",
        "source's third",
    ]
    titles = {s["sessionId"]: s.get("title") for s in listed["result"]["sessions"]}
    assert titles[source] == "first question" and titles[fork] == "first question (fork)"
    # session/load of each (in a new process) shows its own history.
    async with AgentProcess.start(env=agent_env, schema=acp_unstable_schema) as again:
        await again.initialize()
        assert await replayed(again, fork, workspace) == [
            ("user_message_chunk", "first question"),
            ("agent_message_chunk", "answer one"),
            ("user_message_chunk", "fork's own question"),
            ("agent_message_chunk", "fork's answer"),
        ]
        assert [
            text for kind, text in await replayed(again, source, workspace) if kind == "user_message_chunk"
        ] == [
            "first question",
            "second question",
            "source's third",
        ]


async def test_a_fork_of_a_session_running_a_turn_holds_its_history_as_of_the_last_finished_turn(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI, agent_env: dict[str, str]
) -> None:
    fake_api.script(replies.text("answer one"), replies.stall())
    source = await agent.new_session(workspace)
    await agent.prompt(source, "first question")
    await agent.send_request(
        "session/prompt",
        {"sessionId": source, "prompt": [{"type": "text", "text": "still running"}]},
        id="p2",
    )
    await wait_until(lambda: fake_api.attempts == 2, "the second turn at the model")
    refused = await agent.request("session/fork", fork_params(source, workspace, 2))
    assert refused["error"]["code"] == -32602 and "running" in refused["error"]["message"], refused
    forked = await agent.request("session/fork", fork_params(source, workspace))
    fork = forked["result"]["sessionId"]
    await agent.notify("session/cancel", {"sessionId": source})
    assert (await agent.response("p2"))["result"]["stopReason"] == "cancelled"
    fake_api.script(replies.text("fork's answer"))
    await agent.prompt(fork, "and the fork")
    assert said(fake_api.requests[-1]) == ["first question", "answer one", "and the fork"]


async def test_fork_bad_input_gets_clear_errors(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI, agent_env: dict[str, str]
) -> None:
    fake_api.script(replies.text("answer one"))
    source = await agent.new_session(workspace)
    await agent.prompt(source, "first question")
    files = set(Path(agent_env["ACP_AGENT_STATE_DIR"]).iterdir())
    unknown = await agent.request("session/fork", fork_params(UNKNOWN, workspace))
    assert unknown["error"]["code"] == -32002, unknown
    for params in (
        fork_params(source, workspace, 2),  # no prompt 2
        fork_params(source, workspace, 0),
        fork_params(source, workspace, "1"),
        fork_params(source, workspace, True),
        {"sessionId": source},  # no cwd
        fork_params(source, Path("relative")),
        {**fork_params(source, workspace), "_meta": {"acp-agent": {"maxTurnRequests": 0}}},
    ):
        answer = await agent.request("session/fork", params)
        assert answer["error"]["code"] == -32602, (params, answer)
    assert set(Path(agent_env["ACP_AGENT_STATE_DIR"]).iterdir()) == files  # no journal left behind
    fake_api.script(replies.text("fine"))
    assert (await agent.prompt(source, "still here"))["result"]["stopReason"] == "end_turn"


async def test_the_fork_command_names_the_new_session_which_holds_the_prompts_through_n(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(replies.text("answer one"), replies.text("answer two"))
    source = await agent.new_session(workspace)
    await agent.prompt(source, "first question")
    await agent.prompt(source, "second question")
    answer = await agent.prompt(source, "/fork 1")
    assert answer["result"]["stopReason"] == "end_turn"
    told = chunks(agent, source)[-1]["content"]["text"]
    fork = re.search(r"sess_[0-9a-f]{32}", told)
    assert fork is not None and "through prompt 1" in told, told
    nope = await agent.prompt(source, "/fork 7")
    assert "Cannot fork" in chunks(agent, source)[-1]["content"]["text"], nope
    assert fake_api.attempts == 2  # no request for either
    shown = await replayed(agent, fork.group(0), workspace)
    assert shown == [("user_message_chunk", "first question"), ("agent_message_chunk", "answer one")]


WRONG_META = ([], [{"promptIndex": 1}], "x", 0, False, 3)
"""`_meta["acp-agent"]` values that are not an object (null is: no overrides)."""


async def test_a_meta_that_is_not_an_object_is_refused_by_every_method_that_reads_it(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI, agent_env: dict[str, str]
) -> None:
    """session/new, load, resume and fork all read `_meta["acp-agent"]`: each answers -32602
    naming it, and leaves no session or journal behind."""
    fake_api.script(replies.text("answer one"))
    source = await agent.new_session(workspace)
    await agent.prompt(source, "first question")
    files = set(Path(agent_env["ACP_AGENT_STATE_DIR"]).iterdir())
    base = {"cwd": str(workspace), "mcpServers": []}
    for method, params in (
        ("session/new", base),
        ("session/load", {**base, "sessionId": source}),
        ("session/resume", {**base, "sessionId": source}),
        ("session/fork", {**base, "sessionId": source}),
    ):
        for meta in WRONG_META:
            answer = await agent.request(method, {**params, "_meta": {"acp-agent": meta}})
            assert answer.get("error", {}).get("code") == -32602, (method, meta, answer)
            assert "_meta.acp-agent" in answer["error"]["message"], answer
        fine = await agent.request(method, {**params, "_meta": {"acp-agent": None}})
        assert "result" in fine, (method, fine)
        if method in {"session/new", "session/fork"}:
            files.add(journal(agent_env, fine["result"]["sessionId"]))
    assert set(Path(agent_env["ACP_AGENT_STATE_DIR"]).iterdir()) == files  # no journal left behind
