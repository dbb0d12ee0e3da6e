"""The warm-up builds the model client before the first prompt, and the client says when the API
first answered (the Models API question waits for that: `session/options/catalog.py`)."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest

from acp_agent.model.base import TextDelta
from acp_agent.model.provider import ModelProvider
from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.waits import wait_until
from tests.unit.test_anthropic_model import KEY, REQUEST


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeMessagesAPI]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    with FakeMessagesAPI() as api:
        yield api


def test_after_the_warm_up_the_first_request_builds_nothing_in_a_thread(
    fake: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = ModelProvider("claude-test-1", streaming=True, api_key=KEY, base_url=fake.base_url)
    provider.warm()  # what the warm-up thread runs once `initialize` is answered
    fake.script(replies.text("Hello."))

    async def no_thread(*args: object, **kwargs: object) -> object:
        raise AssertionError("the first request waited for a worker thread")

    monkeypatch.setattr(anyio.to_thread, "run_sync", no_thread)

    async def first_request() -> str:
        model = await provider()
        try:
            return "".join([e.text async for e in model.respond(REQUEST) if isinstance(e, TextDelta)])
        finally:
            await provider.aclose()

    assert anyio.run(first_request) == "Hello."


def test_without_the_warm_up_the_first_request_builds_the_client_itself(fake: FakeMessagesAPI) -> None:
    provider = ModelProvider("claude-test-1", streaming=False, api_key=KEY, base_url=fake.base_url)
    fake.script(replies.text("Hi."))

    async def first_request() -> str:
        model = await provider()
        try:
            return "".join([e.text async for e in model.respond(REQUEST) if isinstance(e, TextDelta)])
        finally:
            await provider.aclose()

    assert anyio.run(first_request) == "Hi."


async def test_answered_once_returns_when_the_api_begins_to_answer(
    fake: FakeMessagesAPI, streaming: bool
) -> None:
    provider = ModelProvider("claude-test-1", streaming=streaming, api_key=KEY, base_url=fake.base_url)
    model = await provider()
    fake.script(replies.text("One."), replies.text("Two."))
    answered_after: list[int] = []

    async def wait() -> None:
        await model.answered_once()  # type: ignore[attr-defined]
        answered_after.append(len(fake.requests))

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(wait)
            await anyio.wait_all_tasks_blocked()  # the waiter has gone as far as it can
            assert answered_after == []  # nothing sent yet: it waits
            async for _ in model.respond(REQUEST):
                pass
        await model.answered_once()  # type: ignore[attr-defined]  # answered already: at once
    finally:
        await provider.aclose()
    assert answered_after == [1]


async def test_the_warm_ups_last_steps_wait_for_the_first_answer(fake: FakeMessagesAPI) -> None:
    """`after_first_answer` (a warm-up step, in its thread) returns once the API has begun to
    answer the first request, so what the warm-up loads after it never shares the GIL with that
    request; without a client built it waits for nothing."""
    import threading

    assert ModelProvider("claude-test-1", streaming=True, api_key=KEY).after_first_answer() is None
    provider = ModelProvider("claude-test-1", streaming=True, api_key=KEY, base_url=fake.base_url)
    provider.warm()
    fake.script(replies.text("One."))
    waited: list[int] = []
    step = threading.Thread(target=lambda: (provider.after_first_answer(), waited.append(len(fake.requests))))
    step.start()
    try:
        await anyio.sleep(0.2)  # deliberate: a step that did not wait would be done by now
        assert waited == []
        model = await provider()
        async for _ in model.respond(REQUEST):
            pass
        await wait_until(lambda: not step.is_alive(), "the step to return once answered")
    finally:
        await provider.aclose()
    assert waited == [1]


async def test_initialize_starts_the_warm_up_before_answering() -> None:
    """The warm-up starts when `initialize` is handled (not at spawn: measured, docs/decisions.md D4)."""
    from acp_agent.config import Config
    from acp_agent.session.acp.handlers import AcpHandler
    from acp_agent.session.manager import SessionManager

    class Requester:
        async def notify(self, method: str, params: object) -> None:
            pass

        async def request(self, method: str, params: object, *, timeout: float | None = None) -> object:
            raise AssertionError(method)

    started: list[str] = []
    manager = SessionManager(Config(), Requester(), model=ModelProvider("claude-x", streaming=True))
    handler = AcpHandler(manager, warm_up=lambda: started.append("warm-up"))
    assert started == []
    answer = await handler.handle_request("initialize", {"protocolVersion": 1})
    assert started == ["warm-up"] and answer["protocolVersion"] == 1
