"""The session manager owns its task group: the sessions' services run inside `manager.running()`
and end with it; outside it nothing is started in the background."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.config import Config
from acp_agent.errors import JOURNAL_ERROR, RpcError
from acp_agent.journal.store import SessionStore
from acp_agent.model.provider import ModelProvider
from acp_agent.session.manager import SessionManager


class Requester:
    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    async def notify(self, method: str, params: Any) -> None:
        self.sent.append((method, params))

    async def request(self, method: str, params: Any, *, timeout: float | None = None) -> Any:
        raise AssertionError(method)


def _manager() -> SessionManager:
    return SessionManager(Config(), Requester(), model=ModelProvider("claude-x", streaming=True))


@pytest.mark.anyio
async def test_services_run_in_the_managers_task_group_and_end_with_it() -> None:
    manager = _manager()
    assert manager.task_group is None
    started, stopped = anyio.Event(), anyio.Event()

    async def service() -> None:
        try:
            started.set()
            await anyio.sleep_forever()
        finally:
            stopped.set()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as outer, manager.running():
            group = manager.task_group
            assert group is not None
            group.start_soon(service)
            await started.wait()
            outer.cancel_scope.cancel()  # how the app ends: its scope cancelled around the manager's
        assert stopped.is_set()
    assert manager.task_group is None


@pytest.mark.anyio
async def test_the_mode_switch_of_a_session_goes_through_the_manager(tmp_path: Path) -> None:
    """The permissions get their switch at construction: a strategy's switch (phased, "allow
    always") is announced like the client's own."""
    manager = _manager()
    session = manager.create(str(tmp_path), {})
    await session.permissions.switch_mode("acceptEdits")
    assert session.mode == "acceptEdits"
    requester = manager.requester
    assert isinstance(requester, Requester)
    kinds = [params["update"]["sessionUpdate"] for _, params in requester.sent]
    assert kinds == ["current_mode_update", "config_option_update"]


@pytest.mark.anyio
async def test_a_session_whose_journal_cannot_be_created_is_not_kept(tmp_path: Path) -> None:
    """The state dir went away after start-up (a regular file in its place): -32010, nothing kept."""
    state = tmp_path / "state"
    store = SessionStore.open(state, keep_days=None)
    manager = SessionManager(
        Config(), Requester(), model=ModelProvider("claude-x", streaming=True), store=store
    )
    state.rmdir()
    state.write_text("not a directory")
    with pytest.raises(RpcError) as refused:
        manager.create(str(tmp_path), {})
    assert refused.value.code == JOURNAL_ERROR and str(state) in refused.value.message
    assert manager.sessions == {}
    state.unlink()
    state.mkdir()
    session = manager.create(str(tmp_path), {})
    assert list(manager.sessions) == [session.id]


@pytest.mark.anyio
async def test_a_new_sessions_first_checkpoints_do_not_read_its_journal_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Made in this process, the journal holds no prompt and no checkpoint yet: reading it back
    (with the journal's reader, imported behind the SDK by the warm-up) held up the first prompt
    for as long as the SDK took to import (issue 46). A loaded session's journal is read."""
    from acp_agent.session.commands.rewinding import Rewinds
    from acp_agent.tools.hidden import HiddenPaths

    store = SessionStore.open(tmp_path / "state", keep_days=None)
    manager = SessionManager(
        Config(), Requester(), model=ModelProvider("claude-x", streaming=True), store=store
    )
    session = manager.create(str(tmp_path), {})
    read: list[str] = []
    real_read = store.read
    monkeypatch.setattr(store, "read", lambda session_id: read.append(session_id) or real_read(session_id))
    rewinds = Rewinds(store, HiddenPaths())
    assert rewinds.checkpoints(session) is not None
    assert read == []
    loaded = manager.load(session.id, str(tmp_path), {}).session
    assert rewinds.checkpoints(loaded) is not None
    assert read[-1:] == [session.id]


async def test_telling_a_steered_turns_failure_never_builds_the_runtime(tmp_path: Path) -> None:
    """A turn a steering message started and that failed is told to the editor as an error notice;
    when the session's runtime is not built, that notice goes through a relay of its own: building
    the runtime there could ask the trust question outside any turn, where session/cancel cannot
    end it."""
    requester = Requester()
    manager = SessionManager(Config(), requester, model=ModelProvider("claude-x", streaming=True))
    session = manager.create(str(tmp_path), {})
    engine = await manager.engine()
    await engine.tell_failure(session, "it broke")
    assert session.runtime.current is None
    told = [p for m, p in requester.sent if m == "session/update" and "it broke" in str(p)]
    assert told and told[0]["sessionId"] == session.id
