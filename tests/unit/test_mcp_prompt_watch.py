"""`PromptWatch`: a burst of change notices is one re-list; a failed re-list keeps the old list.

The wire test (`tests/wire/test_mcp_prompt_changes.py`) runs it against the real SDK and server on
both protocol generations; here a stand-in client that counts the re-lists and fails on demand.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from structlog.testing import capture_logs

from acp_agent.tools.mcp import prompt_watch
from acp_agent.tools.mcp.prompt_watch import CHANGED, PromptWatch
from tests.support.waits import wait_until

pytestmark = pytest.mark.anyio

CHANGE = SimpleNamespace(method=CHANGED)


class Server:
    """A client whose server lists `names`, or fails while `failing`."""

    def __init__(self) -> None:
        self.server_capabilities = SimpleNamespace(prompts=SimpleNamespace(list_changed=False))
        self.names = ["a"]
        self.failing = False
        self.lists: list[str] = []

    async def list_prompts(self, *, cursor: Any = None, cache_mode: str = "use") -> Any:
        self.lists.append(cache_mode)
        if self.failing:
            raise RuntimeError("the server broke")
        return SimpleNamespace(prompts=[SimpleNamespace(name=n) for n in self.names], next_cursor=None)


async def watched(server: Server, steps: Any) -> list[list[str]]:
    got: list[list[str]] = []

    async def relisted(listed: list[Any]) -> None:
        got.append([p.name for p in listed])

    watch = PromptWatch("demo", relisted)
    async with anyio.create_task_group() as group:
        group.start_soon(watch.run, server)
        await steps(watch, got)
        group.cancel_scope.cancel()
    return got


async def test_a_burst_of_notices_is_one_relist_past_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    # No quiet time (its sleep is then a checkpoint): once every other task is blocked, the watch
    # has done all that the notices so far made it do, and waits for the next one.
    monkeypatch.setattr(prompt_watch, "QUIET_SECONDS", 0)
    server = Server()

    async def steps(watch: PromptWatch, got: list[list[str]]) -> None:
        watch.notice(SimpleNamespace(method="notifications/tools/list_changed"))  # not a prompt change
        await anyio.wait_all_tasks_blocked()  # a re-list it made would have listed ["a"]
        server.names = ["a", "b"]
        for _ in range(30):
            watch.notice(CHANGE)
        await wait_until(lambda: got, "the re-list")
        await anyio.wait_all_tasks_blocked()  # a second re-list for the same burst has come by now

    assert await watched(server, steps) == [["a", "b"]]
    assert server.lists == ["refresh"]


async def test_a_failed_relist_keeps_the_old_list_with_a_warning_and_the_next_notice_relists(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(prompt_watch, "QUIET_SECONDS", 0.05)
    server = Server()

    async def steps(watch: PromptWatch, got: list[list[str]]) -> None:
        server.failing = True
        watch.notice(CHANGE)
        await wait_until(lambda: server.lists, "the failed re-list")  # it logs before the next await
        server.failing, server.names = False, ["c"]
        watch.notice(CHANGE)
        await wait_until(lambda: got, "the re-list")

    with capture_logs() as logs:
        got = await watched(server, steps)
    assert got == [["c"]]  # nothing handed on for the failure
    [warning] = [e for e in logs if e["event"] == "mcp.prompts_relist_failed"]
    assert warning["log_level"] == "warning" and "the server broke" in warning["error"]
