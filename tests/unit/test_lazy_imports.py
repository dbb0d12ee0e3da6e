"""The handshake loads none of the turn machinery; deferred imports are safe from two threads at once.

`initialize` and `session/new` are answered by the real handler in a fresh interpreter, with no
warm-up, and the modules it loaded are listed (decisions D4: session/new never waits for the loop,
the tools, the model client or the SDK).
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

from acp_agent import lazy
from tests.support.fresh import fresh_answer
from tests.support.waits import wait_until_sync

REPO_ROOT = Path(__file__).resolve().parents[2]

DEFERRED = (
    "acp_agent.session.machinery.engine",
    "acp_agent.turn.runner",
    "acp_agent.turn.strategies.select",
    "acp_agent.tools.registry",
    "acp_agent.model.anthropic",
    "acp_agent.model.factory",
    "anthropic",
    "regex",
    "pathspec",
    "mcp",
)

LOAD_ONLY = (
    "acp_agent.session.loading.reload",
    "acp_agent.session.loading.replay",
    "acp_agent.turn.context.compaction",
    "acp_agent.turn.server_calls",
    "acp_agent.turn.meter",
    "acp_agent.model.base",
    "acp_agent.turn.events",
)
"""What the session layer imports only on use, not for session/new: reading a journal back
(session/load, session/resume) and the turn's events (a model switch's notice)."""

HANDSHAKE = textwrap.dedent("""
    import json, sys, anyio
    from acp_agent.config import Config
    from acp_agent.model.provider import ModelProvider
    from acp_agent.session.acp.handlers import AcpHandler
    from acp_agent.session.manager import SessionManager
    from acp_agent.journal.store import SessionStore
    from pathlib import Path

    class Requester:
        async def notify(self, method, params): pass
        async def request(self, method, params, *, timeout=None): raise AssertionError(method)

    async def main():
        store = SessionStore.open(Path(sys.argv[1]) / "state")
        manager = SessionManager(Config(), Requester(), model=ModelProvider("claude-x", streaming=True),
                                 store=store)
        handler = AcpHandler(manager)
        init = await handler.handle_request("initialize", {"protocolVersion": 1})
        new = await handler.handle_request("session/new", {"cwd": sys.argv[1], "mcpServers": []})
        deferred = json.loads(sys.argv[2])
        print(json.dumps({"init": init["protocolVersion"], "session": new["sessionId"],
                          "loaded": [m for m in deferred if m in sys.modules]}))

    anyio.run(main)
""")


def handshake_answer(code: str, tmp_path: Path, modules: tuple[str, ...]) -> dict[str, Any]:
    """Run `code` (HANDSHAKE or a variant) in a fresh interpreter; its last stdout line, parsed."""
    answer: dict[str, Any] = fresh_answer(code, [str(tmp_path), json.dumps(modules)], timeout=60)
    return answer


def test_the_handshake_loads_none_of_the_turn_machinery(tmp_path: Path) -> None:
    answer = handshake_answer(HANDSHAKE, tmp_path, DEFERRED)
    assert answer["init"] == 1 and answer["session"].startswith("sess_")
    assert answer["loaded"] == []


def test_session_new_loads_none_of_what_only_load_resume_and_a_turn_need(tmp_path: Path) -> None:
    answer = handshake_answer(HANDSHAKE, tmp_path, LOAD_ONLY)
    assert answer["session"].startswith("sess_")
    assert (tmp_path / "state" / f"{answer['session']}.jsonl").exists()  # journaled, and still none of them
    assert answer["loaded"] == []


def test_session_load_loads_the_journal_reading(tmp_path: Path) -> None:
    """The counterpart: the same modules are what session/load needs."""
    code = HANDSHAKE.replace(
        "    deferred = json.loads",
        "    await handler.handle_request('session/load', {'sessionId': new['sessionId'], 'cwd': sys.argv[1],"
        " 'mcpServers': []})\n"
        "    deferred = json.loads",
    )
    assert code != HANDSHAKE
    loaded = handshake_answer(code, tmp_path, LOAD_ONLY)["loaded"]
    assert set(loaded) >= {
        "acp_agent.session.loading.reload",
        "acp_agent.session.loading.replay",
        "acp_agent.turn.context.compaction",
        "acp_agent.model.base",
    }


def test_the_engine_and_the_model_load_on_the_first_turn(tmp_path: Path) -> None:
    """The counterpart: the same modules are what a turn needs (else the list above proves nothing)."""
    code = HANDSHAKE.replace(
        "    deferred = json.loads", "    await manager.engine()\n    deferred = json.loads"
    )
    assert code != HANDSHAKE
    loaded = handshake_answer(code, tmp_path, DEFERRED)["loaded"]
    assert {
        "acp_agent.session.machinery.engine",
        "acp_agent.turn.runner",
        "acp_agent.model.anthropic",
    } <= set(loaded)


def test_regex_loads_with_the_first_expression_it_compiles() -> None:
    """`regex` is not the turn machinery's (a first request never waits for it): a hook matcher
    that is an expression loads it, as the Python search does (`regex_bounds.regex_module`)."""
    code = textwrap.dedent("""
        import sys
        from acp_agent.claude_code.hooks.hook_config import Matcher
        before = "regex" in sys.modules
        Matcher.read("Edit|Write")  # names: no expression
        names = "regex" in sys.modules
        assert Matcher.read("Ed.t").matches("Edit")
        print(before, names, "regex" in sys.modules)
    """)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=60, check=True
    )
    assert out.stdout.split() == ["False", "False", "True"]


def _slow_module(tmp_path: Path, monkeypatch, name: str) -> lazy.Deferred[ModuleType]:
    """A module that takes 0.3 s to import (its sleep is the slowness under test, not a wait), and the
    deferred import that loads it."""
    (tmp_path / f"{name}.py").write_text(
        "import time\nSTARTED = time.monotonic()\ntime.sleep(0.3)\nDONE = True\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return lazy.deferred(lambda: importlib.import_module(name))


def _gated_module(tmp_path: Path, monkeypatch, name: str) -> tuple[lazy.Deferred[ModuleType], Path]:
    """A module whose import waits until the returned gate file exists (10 s at most), and the
    deferred import that loads it."""
    gate = tmp_path / f"{name}.gate"
    (tmp_path / f"{name}.py").write_text(
        f"import pathlib, time\nGATE = pathlib.Path({str(gate)!r})\nSTARTED = True\n"
        "for _ in range(1000):\n    if GATE.exists():\n        break\n    time.sleep(0.01)\n"
        "DONE = GATE.exists()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return lazy.deferred(lambda: importlib.import_module(name)), gate


def test_a_first_use_during_a_warm_up_waits_for_the_whole_module(tmp_path: Path, monkeypatch) -> None:
    probe, gate = _gated_module(tmp_path, monkeypatch, "acp_lazy_probe_a")
    thread = lazy.warm_up([probe])
    wait_until_sync(
        lambda: hasattr(sys.modules.get("acp_lazy_probe_a"), "STARTED"),
        "the warm-up inside the module's import",
    )
    assert not hasattr(sys.modules["acp_lazy_probe_a"], "DONE")  # in sys.modules, but not finished

    async def first_use() -> ModuleType:
        ticks = 0

        async def tick() -> None:
            """Opens the gate after 5 ticks: the import can only end if the loop runs while the
            first use waits."""
            nonlocal ticks
            while True:
                ticks += 1
                if ticks == 5:
                    gate.touch()
                await anyio.sleep(0.01)  # deliberate: a tick of the loop, the clock that opens the gate

        async with anyio.create_task_group() as tg:
            tg.start_soon(tick)
            module = await probe()
            tg.cancel_scope.cancel()
        return module

    module = anyio.run(first_use)
    thread.join(30)  # a hang guard, for a loaded box
    assert module.DONE is True  # the whole module, whose import the event loop's own ticks ended
    assert probe.now() is module


def test_warm_up_survives_a_broken_module_and_goes_on(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "acp_lazy_probe_broken.py").write_text("raise RuntimeError('broken')\n")
    broken = lazy.deferred(lambda: importlib.import_module("acp_lazy_probe_broken"))
    probe = _slow_module(tmp_path, monkeypatch, "acp_lazy_probe_b")
    thread = lazy.warm_up([broken, probe])
    thread.join(30)  # a hang guard, for a loaded box
    assert not thread.is_alive()
    assert getattr(sys.modules.get("acp_lazy_probe_b"), "DONE", False) is True
    assert "acp_lazy_probe_broken" not in sys.modules
    with pytest.raises(RuntimeError, match="broken"):  # the first use raises it again
        broken.now()


def test_two_threads_loading_one_module_get_one_module(tmp_path: Path, monkeypatch) -> None:
    probe = _slow_module(tmp_path, monkeypatch, "acp_lazy_probe_c")
    calls: list[int] = []
    counted = lazy.deferred(lambda: calls.append(1) or probe.now())
    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(counted.now())) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)  # a hang guard, for a loaded box
    assert len(results) == 3 and all(r is results[0] for r in results)
    assert len(calls) == 1  # the others waited for the first one's import, and got its result


def test_a_loaded_import_answers_on_the_event_loop(monkeypatch) -> None:
    """After the first load no thread is used: deferred imports are awaited on the hot path."""
    loaded = lazy.deferred(object)
    value = loaded.now()

    async def no_thread(*args: object, **kwargs: object) -> object:
        raise AssertionError("a thread for an import already done")

    monkeypatch.setattr(anyio.to_thread, "run_sync", no_thread)
    assert anyio.run(loaded) is value
