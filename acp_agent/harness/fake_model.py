"""The model a harness script names in its first step: the packaged loopback fake of the
Messages API, started for the run and stopped after it.

It runs as its own process (`python -m acp_agent.testing`, as a person would start it by hand),
prints its base URL on its first stdout line, and is stopped with SIGTERM. The agent gets the
environment that points it there, and a temporary journal dir (a scripted run against a fake is
not a conversation to keep in the user's session list); `--env` options still win.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from subprocess import DEVNULL, PIPE

import anyio

from acp_agent.errors import HarnessError
from acp_agent.harness.steps import ModelStep
from acp_agent.process.lifetime import owned_env

__all__ = ["FAKE_MODEL_ID", "FakeModelError", "fake_model"]

PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
"""Put on the fake's PYTHONPATH, so a checkout runs it without an install."""
FAKE_MODEL_ID = "claude-test-1"
"""A made-up model id: a real, deprecated one would make the SDK warn (D2)."""
START_SECONDS = 30.0
STOP_SECONDS = 5.0


class FakeModelError(HarnessError):
    """The fake could not be started."""


@asynccontextmanager
async def fake_model(step: ModelStep) -> AsyncIterator[dict[str, str]]:
    """Start the fake; yield the agent's environment for it; stop it on the way out."""
    paths = [PACKAGE_ROOT, *filter(None, [os.environ.get("PYTHONPATH")])]
    env = owned_env({**os.environ, "PYTHONPATH": os.pathsep.join(paths)})  # it dies with us
    command = [sys.executable, "-m", step.fake, *step.fake_args()]
    try:
        process = await anyio.open_process(command, stdin=DEVNULL, stdout=PIPE, stderr=None, env=env)
    except OSError as exc:
        raise FakeModelError(f"cannot start {step.fake}: {exc}") from exc
    try:
        url = await _first_line(process, START_SECONDS)
        with tempfile.TemporaryDirectory(prefix="acp-harness-state-") as state:
            yield {
                "ANTHROPIC_API_KEY": "test-key",
                "ANTHROPIC_BASE_URL": url,
                "ACP_AGENT_MODEL": FAKE_MODEL_ID,
                "ACP_AGENT_STATE_DIR": state,
                "NO_PROXY": "127.0.0.1,localhost",
                "no_proxy": "127.0.0.1,localhost",
            }
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                process.terminate()
                with anyio.move_on_after(STOP_SECONDS):
                    await process.wait()
            if process.returncode is None:
                process.kill()
            await process.aclose()


async def _first_line(process: anyio.abc.Process, timeout: float) -> str:
    assert process.stdout is not None
    data = b""
    with anyio.move_on_after(timeout):
        async for chunk in process.stdout:
            data += chunk
            if b"\n" in data:
                url = data.split(b"\n", 1)[0].decode().strip()
                if url.startswith("http://"):
                    return url
                break
    raise FakeModelError(
        f"the fake Messages API did not print its URL within {timeout:g} s (got {data[:200]!r})"
    )
