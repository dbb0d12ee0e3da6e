"""Shared fixtures: anyio backend, ACP schema, a workspace, the fake Messages API, agent env."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support import base_env
from tests.support.examples import load_profile
from tests.support.model_paths import check_classification, parametrize_model_paths, validate_markers
from tests.support.module_size import report_long_modules
from tests.support.schema import AcpSchema
from tests.support.skips import register as register_skip_check

if TYPE_CHECKING:
    from acp_agent.testing.messages_api import FakeMessagesAPI

_LOCAL = "127.0.0.1,localhost"

load_profile()  # Hypothesis's `ci` or `fast` profile (support/examples.py), before test modules import


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--max-skips",
        type=int,
        default=None,
        help="fail the run when more tests skip than this (CI: 0); any skip must give a reason "
        "listed in tests/support/skips.py",
    )


def pytest_configure(config: pytest.Config) -> None:
    register_skip_check(config)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    parametrize_model_paths(metafunc)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    validate_markers(items)
    # Slow tests first: in parallel (`make test`), one started last would be the run's long tail.
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    report_long_modules(terminalreporter)


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def _no_proxy_for_local_servers() -> Iterator[None]:
    """In-process HTTP clients reach the fakes on 127.0.0.1 directly, whatever proxy is set."""
    saved = {name: os.environ.get(name) for name in ("NO_PROXY", "no_proxy")}
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = _LOCAL
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def acp_schema() -> AcpSchema:
    """The ACP v1 schema the agent speaks (stable), from the SDK the test extra installs
    (`support/schema_sdk.py`)."""
    return AcpSchema.load()


@pytest.fixture(scope="session")
def acp_unstable_schema() -> AcpSchema:
    """The ACP v1 schema with its unstable parts, for tests of what the agent sends only to a client
    that advertised an unstable capability (`subagents`)."""
    return AcpSchema.load(unstable=True)


@pytest.fixture
def streaming() -> bool:
    """The agent's model path. `support/model_paths.py` parametrizes it (stream, no-stream) for every test
    that reaches the model; a `model_free` test runs once, with the default (streaming)."""
    return True


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A small project directory to use as a session's cwd."""
    root = tmp_path / "workspace"
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# demo\n\nA tiny project for tests.\n", encoding="utf-8")
    (root / "src" / "app.py").write_text(
        'def greet(name: str) -> str:\n    return f"hello, {name}"\n', encoding="utf-8"
    )
    (root / "notes.txt").write_text("alpha\nbeta\ngamma\n", encoding="utf-8")
    return root


@pytest.fixture
def fake_api(request: pytest.FixtureRequest) -> Iterator[FakeMessagesAPI]:
    """A started fake Messages API on 127.0.0.1 (imported here: unit tests run without it).

    At the end of the test (the agent has exited by then), what it received must match the test's
    model classification (`model_paths.check_classification`).
    """
    from acp_agent.testing.messages_api import FakeMessagesAPI

    with FakeMessagesAPI() as api:
        yield api
        check_classification(request.node, len(api.requests))


@pytest.fixture
def agent_env(tmp_path: Path, fake_api: Any, streaming: bool) -> dict[str, str]:
    """The env of an agent talking to `fake_api`, streaming or not.

    The stall limit is well past anything a test does while a `replies.stall()` hangs (a cancel, a
    close, a queue of prompts on a loaded box): a shorter one would end that stall with a retry
    first, and the retry would take the next scripted reply. `test_model_faults.py` sets its own
    short limit to test the stall itself.
    """
    return base_env(
        tmp_path,
        ANTHROPIC_API_KEY="test-key",
        ANTHROPIC_BASE_URL=str(fake_api.base_url),
        ACP_AGENT_MODEL="claude-test-1",
        ACP_AGENT_STREAMING="1" if streaming else "0",
        ACP_AGENT_STALL_SECONDS="20",
        ACP_AGENT_STATE_DIR=str(tmp_path / "state"),
    )
