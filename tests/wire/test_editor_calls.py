"""The editor's own answers reach the model whole: a terminal command killed by a cancel says how
long it ran and what it printed; an `fs/*` refusal keeps its `error.data` details."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess, RpcError
from tests.support.client import TerminalEditor
from tests.wire.conftest import turn_record


def tool_results(fake_api: FakeMessagesAPI) -> list[dict[str, Any]]:
    return [
        b
        for m in fake_api.requests[-1].body["messages"]
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]


async def test_a_terminal_command_killed_by_cancel_reports_how_long_it_ran_and_its_output(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    editor = TerminalEditor("compiling 1 of 40\ncompiling 2 of 40\n", terminal_id="term-9")

    fake_api.script(replies.tool_use("run_command", {"command": "make all"}, id="toolu_make"))
    fake_api.set_fallback(replies.text("ok"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize(terminal=True)
        session = await agent.new_session(workspace)
        results: dict[str, Any] = {}

        async def run() -> None:
            results["r"] = await agent.prompt(session, "build it")

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await agent.wait_for(
                lambda m: any(c.get("type") == "terminal" for c in m["params"]["update"]["content"])
            )
            await anyio.sleep(0.3)  # deliberate: how long it runs, which its last word must show
            await agent.notify("session/cancel", {"sessionId": session})
        live = [p["update"] for p in agent.updates(session) if p["update"].get("toolCallId") == "toolu_make"]
        final = live[-1]
        await agent.prompt(session, "what happened?")
        mark = len(agent.messages)
        await agent.request("session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []})
        replayed = [
            m["params"]["update"]
            for m in agent.messages[mark:]
            if m.get("method") == "session/update" and m["params"]["update"].get("toolCallId") == "toolu_make"
        ]
    assert results["r"]["result"]["stopReason"] == "cancelled"
    assert turn_record(results["r"])["abortedDuring"] == "tools"
    calls = editor.methods()
    assert calls.index("terminal/kill") < calls.index("terminal/output") < calls.index("terminal/release")
    assert final["status"] == "failed"
    shown = final["content"][-1]["content"]["text"]
    assert shown.startswith("cancelled after ") and "not executed" not in shown
    assert float(shown.split()[2]) >= 0.3
    assert "compiling 2 of 40" in shown
    [result] = tool_results(fake_api)
    assert result["tool_use_id"] == "toolu_make" and result["is_error"]
    assert str(result["content"]) == shown
    # session/load shows the cancelled call as the live turn did.
    assert replayed[0] == live[0] and replayed[0]["title"] == "Run `make all`"
    assert (replayed[-1]["status"], replayed[-1]["content"]) == ("failed", final["content"])


async def test_an_fs_refusal_keeps_the_editors_error_data_for_the_model(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    async def editor(method: str, params: Any) -> Any:
        if method == "fs/read_text_file":
            raise RpcError(
                -32603,
                "Internal error",
                {"reason": "the file is excluded by the project's private_files", "path": params["path"]},
            )
        return RpcError(-32601, method)

    fake_api.script(replies.tool_use("read_file", {"path": "notes.txt"}), replies.text("I see"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize(fs={"readTextFile": True})
        session = await agent.new_session(workspace)
        await agent.prompt(session, "read notes")
    [result] = tool_results(fake_api)
    text = str(result["content"])
    assert result["is_error"] and "refused fs/read_text_file: Internal error" in text
    assert "excluded by the project's private_files" in text
    assert str((workspace / "notes.txt").resolve()) in text
