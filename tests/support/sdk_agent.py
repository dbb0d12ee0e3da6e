"""A tiny ACP agent built on the official `acp` SDK, to show our client tools work with any agent.

The `agent-client-protocol` wheel ships no example agent (decisions D8), so this is ours. Words in
the prompt pick what it does, in order:

    think        an agent_thought_chunk
    plan         a plan with three entries
    edit         a tool call with a diff, a permission question, then completed (and, with the
                 client's fs.writeTextFile, hello.txt written through the client) or failed
    read         reads notes.txt in the session cwd through the client's fs/read_text_file
    junk         writes a line that is not JSON to stdout
    wait         waits (≤ 30 s) for session/cancel, then ends the turn `cancelled`
    error        answers the prompt with a JSON-RPC error
    crash        exits with code 3 in the middle of the turn
    stop:REASON  ends the turn with that stop reason (default end_turn)

Run it with `python -m tests.support.sdk_agent` (the repo root on PYTHONPATH).
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any, Literal

import acp
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ToolCallUpdate,
)

__all__ = ["SdkTestAgent", "main"]


class SdkTestAgent:
    def __init__(self) -> None:
        self._conn: Any = None
        self._cwd: dict[str, str] = {}
        self._can_write = self._can_read = False
        self._cancelled = asyncio.Event()

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **kwargs: Any
    ) -> InitializeResponse:
        fs = getattr(client_capabilities, "fs", None)
        self._can_read = bool(getattr(fs, "read_text_file", False))
        self._can_write = bool(getattr(fs, "write_text_file", False))
        return InitializeResponse(
            protocol_version=1,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name="sdk-test-agent", version="0.0.1"),
        )

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        session_id = f"sdk-session-{len(self._cwd) + 1}"
        self._cwd[session_id] = cwd
        return NewSessionResponse(session_id=session_id)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self._cancelled.set()

    async def _say(self, session_id: str, *pieces: str) -> None:
        for piece in pieces:
            await self._conn.session_update(session_id, acp.update_agent_message_text(piece))

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        text = " ".join(getattr(block, "text", "") for block in prompt)
        stop = "end_turn"
        for word in text.split():
            if word == "think":
                await self._conn.session_update(session_id, acp.update_agent_thought_text("pondering"))
            elif word == "plan":
                await self._conn.session_update(
                    session_id,
                    acp.update_plan(
                        [
                            acp.plan_entry("look around", status="completed"),
                            acp.plan_entry("make the edit", status="in_progress", priority="high"),
                            acp.plan_entry("report back"),
                        ]
                    ),
                )
            elif word == "edit":
                await self._edit(session_id)
            elif word == "read" and self._can_read:
                path = os.path.join(self._cwd[session_id], "notes.txt")
                answer = await self._conn.read_text_file(session_id=session_id, path=path, line=2, limit=1)
                await self._say(session_id, f"line 2 of notes.txt is {answer.content.strip()!r}. ")
            elif word == "junk":
                os.write(1, b"this is not JSON-RPC\n")
            elif word == "wait":
                await self._say(session_id, "waiting for cancel")
                try:
                    await asyncio.wait_for(self._cancelled.wait(), 30)
                    stop = "cancelled"
                except TimeoutError:
                    pass
            elif word == "error":
                raise acp.RequestError(-32603, "the test agent failed on purpose", {"word": word})
            elif word == "crash":
                sys.stderr.write("sdk-test-agent: crashing on purpose\n")
                sys.stderr.flush()
                os._exit(3)
            elif word.startswith("stop:"):
                stop = word.removeprefix("stop:")
        if stop != "cancelled":
            await self._say(session_id, "Hello ", "from the ", "SDK agent.")
        return PromptResponse(stop_reason=stop, field_meta={"sdk-test-agent": {"words": len(text.split())}})

    async def _edit(self, session_id: str) -> None:
        path = os.path.join(self._cwd[session_id], "hello.txt")
        diff = acp.tool_diff_content(path, "hello\nworld\n", "hello\n")
        await self._conn.session_update(
            session_id,
            acp.start_tool_call(
                "edit-1",
                "Edit hello.txt",
                kind="edit",
                status="pending",
                content=[diff],
                raw_input={"path": path},
            ),
        )
        answer = await self._conn.request_permission(
            session_id=session_id,
            tool_call=ToolCallUpdate(tool_call_id="edit-1", title="Edit hello.txt"),
            options=[
                PermissionOption(option_id="yes", name="Allow once", kind="allow_once"),
                PermissionOption(option_id="always", name="Always allow", kind="allow_always"),
                PermissionOption(option_id="no", name="Reject", kind="reject_once"),
            ],
        )
        outcome = answer.outcome
        allowed = getattr(outcome, "option_id", None) in ("yes", "always")
        if allowed and self._can_write:
            await self._conn.write_text_file(session_id=session_id, path=path, content="hello\nworld\n")
        status: Literal["completed", "failed"] = "completed" if allowed else "failed"
        note = acp.tool_content(acp.text_block(f"edit {'allowed' if allowed else 'rejected'}"))
        await self._conn.session_update(
            session_id, acp.update_tool_call("edit-1", status=status, content=[note])
        )


async def main() -> None:
    await acp.run_agent(SdkTestAgent())  # type: ignore[arg-type]  # only what the tests use


if __name__ == "__main__":
    asyncio.run(main())
