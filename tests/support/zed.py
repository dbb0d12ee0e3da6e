"""Play Zed: the `initialize` Zed 1.16 sends (zed#62890, `crates/agent_servers/src/acp.rs`), and
an editor that answers the agent's forms (`elicitation/create`) the way a test says.

Use `await zed_initialize(agent)` instead of `agent.initialize(...)`; make the agent's `on_request`
with `Editor(...)` to fill in forms, decline or dismiss them, and allow tool calls.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess, RpcError

__all__ = ["ZED_CAPABILITIES", "ZED_CLIENT_INFO", "Editor", "answer_each", "zed_initialize"]

ZED_CAPABILITIES: dict[str, Any] = {
    "fs": {"readTextFile": True, "writeTextFile": True},
    "terminal": True,
    "auth": {"terminal": True},
    "session": {"configOptions": {"boolean": {}}},
    "elicitation": {"form": {}, "url": {}},
    "_meta": {"terminal_output": True, "terminal-auth": True},
}
"""`clientCapabilities` exactly as Zed 1.16.1 sends them."""
ZED_CLIENT_INFO: dict[str, Any] = {"name": "zed", "title": "Zed", "version": "1.16.1"}


async def zed_initialize(agent: AgentProcess, **changes: Any) -> dict[str, Any]:
    """`initialize` as Zed 1.16 sends it (`protocolVersion: 1`); `changes` replace capabilities
    (a value of None removes one), for the tests of a client that lacks something."""
    caps = copy.deepcopy(ZED_CAPABILITIES)
    for name, value in changes.items():
        if value is None:
            caps.pop(name, None)
        else:
            caps[name] = value
    return await agent.initialize(protocol_version=1, client_info=dict(ZED_CLIENT_INFO), **caps)


Answer = dict[str, Any] | Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class Editor:
    """An `on_request` handler: allows every tool call once and answers each `elicitation/create`
    with the next of `answers` (a result, or an async function of the params), keeping every
    question it was asked in `forms`. With no answer left, a form stays open until cancelled."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.forms: list[dict[str, Any]] = []
        self.asked = anyio.Event()

    async def __call__(self, method: str, params: Any) -> Any:
        if method == "session/request_permission":
            return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        if method != "elicitation/create":
            return RpcError(-32601, method)
        self.forms.append(params)
        self.asked.set()
        if not self.answers:
            await anyio.sleep_forever()
        answer = self.answers.pop(0)
        return answer if isinstance(answer, dict) else await answer(params)


async def answer_each(
    env: dict[str, str],
    schema: Any,
    workspace: Path,
    fake_api: FakeMessagesAPI,
    answers: Mapping[str, Answer],
    call: tuple[str, dict[str, Any]],
    mcp_servers: Sequence[dict[str, Any]] = (),
) -> tuple[AgentProcess, str, list[tuple[str, str, dict[str, Any]]]]:
    """One prompt per answer in one session of a Zed-like agent: the model makes `call` (a tool
    name and its input), the editor answers the question it asks with the next of `answers`.
    Returns the agent (stopped: its messages stay readable), the session, and each answer's
    (name, tool call id, prompt response)."""
    editor = Editor(*answers.values())
    ran = []
    async with AgentProcess.start(env=env, schema=schema, on_request=editor) as agent:
        await zed_initialize(agent)
        session = await agent.new_session(workspace, mcp_servers=mcp_servers)
        for n, case in enumerate(answers):
            call_id = f"toolu_answer{n}"
            fake_api.script(replies.tool_use(*call, id=call_id), replies.text("noted"))
            ran.append((case, call_id, await agent.prompt(session, f"case {case}", timeout=60)))
    assert len(editor.forms) == len(answers)
    return agent, session, ran
