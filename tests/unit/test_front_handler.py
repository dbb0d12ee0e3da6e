"""The front handler: `initialize` answered at once, the session layer built once, then delegated to."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from acp_agent.errors import RpcError
from acp_agent.protocol.lifecycle import InitializeRequest
from acp_agent.session.acp.front import FrontHandler, SessionLayer, Sessions, session_layer
from acp_agent.session.acp.handshake import initialize_answer
from acp_agent.startup import collector, dataclass_code

HELLO = {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": True}}}


class FakeManager:
    def __init__(self) -> None:
        self.running_now = False
        self.cancelled = 0
        self.closed = False

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        self.running_now = True
        try:
            yield
        finally:
            self.running_now = False

    def cancel_all(self) -> None:
        self.cancelled += 1

    async def aclose(self) -> None:
        self.closed = True


class FakeHandler:
    def __init__(self) -> None:
        self.accepted: list[InitializeRequest] = []
        self.calls: list[tuple[str, Any]] = []

    def accept(self, request: InitializeRequest) -> None:
        self.accepted.append(request)

    def route(self, method: str) -> Callable[[Any], Awaitable[Any]]:
        async def handle(params: Any) -> Any:
            self.calls.append((method, params))
            return {"method": method}

        return handle

    async def handle_notification(self, method: str, params: Any) -> None:
        self.calls.append((method, params))

    def cancel_request(self, method: str, params: Any) -> bool:
        self.calls.append(("cancel", method))
        return True


class Recipe:
    """The app's `build`, counting its calls; fails `failures` times first."""

    def __init__(self, failures: int = 0) -> None:
        self.layers: list[SessionLayer] = []
        self.failures = failures
        self.manager = FakeManager()
        self.handler = FakeHandler()

    def __call__(self, layer: SessionLayer) -> Sessions:
        self.layers.append(layer)
        if self.failures:
            self.failures -= 1
            raise RuntimeError("broken recipe")
        return Sessions(self.manager, self.handler)  # type: ignore[arg-type]


async def test_initialize_is_answered_with_the_one_answer_and_builds_the_layer_once() -> None:
    recipe = Recipe()
    front = FrontHandler(recipe, journaled=True)
    async with front.running():
        answer = await front.handle_request("initialize", HELLO)
        results = []
        async with anyio.create_task_group() as tg:
            for method in ("session/new", "session/list", "authenticate"):
                tg.start_soon(lambda m: _append(results, front.handle_request(m, {})), method)
        assert front.manager is recipe.manager and recipe.manager.running_now
    assert answer == initialize_answer(InitializeRequest.model_validate(HELLO), journaled=True)
    assert len(recipe.layers) == 1 and recipe.layers[0] is session_layer.now()
    assert sorted(r["method"] for r in results) == ["authenticate", "session/list", "session/new"]
    assert [r.client_capabilities.fs.read_text_file for r in recipe.handler.accepted] == [True]
    assert not recipe.manager.running_now  # the manager's running() ended with the front's


async def _append(results: list[Any], call: Any) -> None:
    results.append(await call)


async def test_before_the_layer_exists_notifications_and_cancels_have_nothing_to_act_on() -> None:
    recipe = Recipe()
    front = FrontHandler(recipe, journaled=False)
    async with front.running():
        await front.handle_notification("session/cancel", {"sessionId": "s"})
        assert front.cancel_request("session/prompt", {"sessionId": "s"}) is False
        front.cancel_turns()
        await front.aclose()
        assert recipe.layers == []  # none of that built the layer
        await front.handle_request("session/new", {})
        await front.handle_notification("session/cancel", {"sessionId": "s"})
        assert front.cancel_request("session/prompt", {"sessionId": "s"}) is True
        front.cancel_turns()
        await front.aclose()
    assert recipe.handler.calls == [
        ("session/new", {}),
        ("session/cancel", {"sessionId": "s"}),
        ("cancel", "session/prompt"),
    ]
    assert recipe.manager.cancelled == 1 and recipe.manager.closed


async def test_a_second_initialize_reaches_the_built_handler() -> None:
    recipe = Recipe()
    front = FrontHandler(recipe, journaled=False)
    async with front.running():
        await front.handle_request("initialize", {"protocolVersion": 1})
        await front.handle_request("session/new", {})
        await front.handle_request("initialize", HELLO)
    assert len(recipe.handler.accepted) == 2 and len(recipe.layers) == 1


async def test_a_failed_build_answers_internal_error_and_the_next_request_tries_again() -> None:
    recipe = Recipe(failures=1)
    front = FrontHandler(recipe, journaled=False)
    async with front.running():
        with pytest.raises(RpcError) as failed:
            await front.handle_request("session/new", {})
        again = await front.handle_request("session/new", {})
    assert failed.value.code == -32603
    assert again == {"method": "session/new"} and len(recipe.layers) == 2


async def test_with_a_warm_up_the_build_waits_for_its_import_of_the_layer(monkeypatch) -> None:
    """The warm-up thread imports the layer; the request waits for it and never imports itself."""
    started: list[list[Any]] = []

    def no_thread(steps: Any) -> None:
        started.append(list(steps))

    monkeypatch.setattr("acp_agent.session.acp.front.warm_up", no_thread)
    imports_on_the_loop: list[str] = []
    real_call = type(session_layer).__call__

    async def watched(self: Any) -> Any:
        imports_on_the_loop.append("called before the warm-up's signal" if not signalled else "ok")
        return await real_call(self)

    monkeypatch.setattr(type(session_layer), "__call__", watched)
    signalled = False
    recipe = Recipe()
    front = FrontHandler(recipe, journaled=False, warm_up_steps=())
    async with front.running():
        await front.handle_request("initialize", HELLO)
        steps = started[0]
        assert steps[0] is session_layer
        with anyio.move_on_after(0.2):  # the request waits: the warm-up has not imported yet
            await front.handle_request("session/new", {})
        assert recipe.layers == [] and imports_on_the_loop == []

        signalled = True
        await anyio.to_thread.run_sync(steps[1])  # the warm-up's next step: the layer is imported
        assert await front.handle_request("session/new", {}) == {"method": "session/new"}
    assert imports_on_the_loop == ["ok"] and len(recipe.layers) == 1


async def test_the_collector_paused_at_start_up_collects_again_once_the_layer_is_built() -> None:
    recipe = Recipe(failures=1)
    front = FrontHandler(recipe, journaled=False)
    collector.pause()
    try:
        async with front.running():
            await front.handle_request("initialize", HELLO)
            assert not gc.isenabled()  # the build under way is still start-up
            with pytest.raises(RpcError):
                await front.handle_request("session/new", {})
            assert gc.isenabled() and not collector.paused()  # even when the build failed
    finally:
        collector.resume()
        gc.unfreeze()
        gc.enable()


async def test_with_a_warm_up_the_collector_stays_paused_until_the_warm_up_resumes_it(monkeypatch) -> None:
    """The warm-up goes on importing after `session/new` (the turn machinery, the SDK): collecting
    then would cost the first prompt, so the layer's build only freezes start-up's objects and the
    warm-up's own step, after the steps it was given, turns the collector on again."""
    started: list[list[Any]] = []
    monkeypatch.setattr("acp_agent.session.acp.front.warm_up", lambda steps: started.append(list(steps)))
    front = FrontHandler(Recipe(), journaled=False, warm_up_steps=(print,))
    frozen_before = gc.get_freeze_count()
    collector.pause()
    try:
        async with front.running():
            await front.handle_request("initialize", HELLO)
            steps = started[0]
            await anyio.to_thread.run_sync(steps[1])  # the layer is imported: the build goes on
            assert await front.handle_request("session/new", {}) == {"method": "session/new"}
            assert not gc.isenabled() and collector.paused()
            assert gc.get_freeze_count() > frozen_before  # start-up's objects, frozen by the build
            resume = steps.index(collector.resume)
            assert steps.index(print) < resume < len(steps) - 1  # after the app's steps, before the parsers
            assert steps[-1] is dataclass_code.keep  # last: the parsers' classes are kept too
            steps[resume]()
            assert gc.isenabled() and not collector.paused()
    finally:
        collector.resume()
        gc.unfreeze()
        gc.enable()
