"""What a test's editor says back: a permission handler that allows, an editor with terminals, and a
prompt that may die."""

from __future__ import annotations

from typing import Any

import anyio

from tests.support.agent import AgentProcess, RpcError

__all__ = ["TerminalEditor", "allow", "prompt_until_killed"]


async def allow(method: str, params: Any) -> Any:
    """`on_request` of a user who allows every tool call once (and supports nothing else)."""
    if method == "session/request_permission":
        return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
    return RpcError(-32601, method)


class TerminalEditor:
    """An editor with terminals (`clientCapabilities.terminal`), as a test's `on_request`: it allows
    every tool call once, names each terminal `terminal_id`, says the command printed `output`, and
    has it run until `terminal/kill` (or end at once with `exit`, a `terminal/wait_for_exit`
    answer). Every call is kept in `calls`."""

    def __init__(self, output: str, *, terminal_id: str = "term-1", exit: dict[str, Any] | None = None):
        self.output, self.terminal_id, self.exit = output, terminal_id, exit
        self.calls: list[tuple[str, Any]] = []
        self.killed = anyio.Event()

    async def __call__(self, method: str, params: Any) -> Any:
        self.calls.append((method, params))
        if method == "session/request_permission":
            return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        if method == "terminal/create":
            return {"terminalId": self.terminal_id}
        if method == "terminal/wait_for_exit":
            if self.exit is not None:
                return self.exit
            await self.killed.wait()
            return {"signal": "SIGKILL"}
        if method == "terminal/kill":
            self.killed.set()
            return {}
        if method == "terminal/output":
            status = {"exitStatus": self.exit} if self.exit is not None else {}
            return {"output": self.output, "truncated": False, **status}
        if method == "terminal/release":
            return {}
        return RpcError(-32601, method)

    def methods(self) -> list[str]:
        """The methods called so far, in order."""
        return [method for method, _ in self.calls]


async def prompt_until_killed(agent: AgentProcess, session: str, text: str = "work") -> None:
    """Send a prompt whose agent the test is about to SIGKILL: no answer is expected."""
    try:
        await agent.prompt(session, text, timeout=30)
    except BaseException:  # the agent is killed under it
        return
