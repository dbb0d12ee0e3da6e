"""Which wire tests run on both model paths (streaming SSE, one JSON body per request), and the
check that each test is classified right.

A test that reaches the model runs on both paths: the agent's two request paths differ in every
byte they parse. A test that never reaches it (JSON-RPC errors, `initialize`, session bookkeeping)
is marked `model_free` and runs once: its second run would spawn a second agent to do the same
thing. The classification is checked, not trusted: at the end of each test the `fake_api` fixture
hands over how many Messages API requests it received, and

- a `model_free` test whose fake received a request fails (it needs both paths);
- a test run on both paths whose fake received none fails (mark it `model_free`).

A test may also parametrize `streaming` itself (one path on purpose, such as a test of a streamed
reply being cut); it is left alone.
"""

from __future__ import annotations

import pytest

__all__ = ["MODEL_FREE", "check_classification", "parametrize_model_paths", "validate_markers"]

MODEL_FREE = "model_free"
PATHS = {"stream": True, "no-stream": False}


def pins_streaming(node: pytest.Function | pytest.FunctionDefinition) -> bool:
    """Whether the test parametrizes `streaming` itself (`@pytest.mark.parametrize("streaming", ...)`)."""
    for mark in node.iter_markers("parametrize"):
        names = mark.args[0] if mark.args else mark.kwargs.get("argnames", ())
        if isinstance(names, str):
            names = [name.strip() for name in names.split(",")]
        if "streaming" in names:
            return True
    return False


def parametrize_model_paths(metafunc: pytest.Metafunc) -> None:
    """Run a test that uses `streaming` (directly or through `agent_env`) on both paths, unless it
    is `model_free` (once, with the fixture's default) or parametrizes `streaming` itself."""
    if "streaming" not in metafunc.fixturenames or pins_streaming(metafunc.definition):
        return
    if metafunc.definition.get_closest_marker(MODEL_FREE) is not None:
        return
    metafunc.parametrize("streaming", list(PATHS.values()), ids=list(PATHS))


def validate_markers(items: list[pytest.Item]) -> None:
    """A test's own `model_free` mark where it cannot be checked or changes nothing is a mistake:
    say so at collection. (A module's `pytestmark` may cover a test that spawns its own agent.)"""
    wrong = [
        item.nodeid
        for item in items
        if isinstance(item, pytest.Function)
        and any(mark.name == MODEL_FREE for mark in item.own_markers)
        and ("fake_api" not in item.fixturenames or pins_streaming(item))
    ]
    if wrong:
        raise pytest.UsageError(
            "`model_free` needs a test that uses `fake_api` (through `agent_env`) and leaves "
            "`streaming` to the fixture: " + ", ".join(wrong)
        )


def check_classification(node: pytest.Item, model_requests: int) -> None:
    """Fail a test whose fake Messages API saw requests it was declared not to make, or none on a
    path it was made to run on."""
    if node.get_closest_marker(MODEL_FREE) is not None:
        if model_requests:
            pytest.fail(
                f"{node.nodeid} is marked `model_free`, but the fake Messages API received "
                f"{model_requests} request(s): it reaches the model, so it must run on both paths "
                "(remove the mark)",
                pytrace=False,
            )
        return
    callspec = getattr(node, "callspec", None)
    on_both_paths = callspec is not None and "streaming" in callspec.params and not pins_streaming(node)
    if on_both_paths and model_requests == 0:
        pytest.fail(
            f"{node.nodeid} runs on both model paths, but the fake Messages API received no "
            "request: mark it `@pytest.mark.model_free` so that it runs once",
            pytrace=False,
        )
