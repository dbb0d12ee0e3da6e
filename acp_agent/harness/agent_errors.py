"""What driving a spawned agent can raise: it could not start, it answered an error, or it closed its
stdout while we waited (all `HarnessError`s; see the tree in `acp_agent/errors.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acp_agent.errors import HarnessError

__all__ = ["AgentExitedError", "AgentRpcError", "AgentSpawnError"]


class AgentRpcError(HarnessError):
    """The agent answered one of our requests with a JSON-RPC error."""

    def __init__(self, method: str, error: Mapping[str, Any]) -> None:
        self.method = method
        self.code: Any = error.get("code")
        self.message = str(error.get("message", ""))
        self.data: Any = error.get("data")
        super().__init__(f"{method}: error {self.code}: {self.message}")


class AgentExitedError(HarnessError):
    """The agent closed its stdout (usually: it exited) while we were waiting for it."""

    def __init__(self, when: str, returncode: int | None, stderr_tail: str, context: str = "") -> None:
        self.returncode, self.stderr_tail = returncode, stderr_tail
        status = "is still running" if returncode is None else f"exited with code {returncode}"
        super().__init__(f"the agent closed its stdout {when} (it {status}){context}")


class AgentSpawnError(HarnessError):
    """The agent command could not be started at all."""
