"""What a spawned agent wrote on stdout, as `client.AgentClient` reads it: split into lines, each
fed to the `wire.Transcript`, responses matched by id to the requests we wait on, the rest kept in
order to be taken once (`take`); the agent's requests and notifications are handed on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream

from acp_agent.harness.process import IO_ERRORS
from acp_agent.harness.wire import Transcript, id_key, message_kind

__all__ = ["Inbox", "MessageHandler"]

MessageHandler = Callable[[dict[str, Any]], None]


class Inbox:
    """The agent's stdout: every message in `messages`, in order; `closed` once stdout ended.

    `on_request` and `on_notification` are called on the reader task, in order; any wait on the
    inbox re-checks after `changed()` (each line read wakes it).
    """

    def __init__(
        self, transcript: Transcript, *, on_request: MessageHandler, on_notification: MessageHandler
    ) -> None:
        self.transcript = transcript
        self.messages = transcript.messages
        self.invalid_lines: list[str] = []  # stdout lines that were not JSON objects
        self.closed = False
        self._on_request, self._on_notification = on_request, on_notification
        self._pending: dict[str, int | None] = {}  # id key → index of its response, once in
        self._answered: set[str] = set()
        self._consumed: set[int] = set()
        self._cursor = 0
        self._changed = anyio.Event()

    # --- our requests ------------------------------------------------------------------------

    def expect(self, id: Any) -> None:
        """Wait for a response to `id` (raises ValueError if one is already awaited)."""
        key = id_key(id)
        if key in self._pending:
            raise ValueError(f"request id {id!r} is already waiting for a response")
        self._pending[key] = None

    def is_waiting(self, id: Any) -> bool:
        return id_key(id) in self._pending

    def response_index(self, id: Any) -> int | None:
        """Where the response to `id` is in `messages`; None until it came."""
        return self._pending.get(id_key(id))

    def forget(self, id: Any) -> None:
        self._pending.pop(id_key(id), None)

    def note_sent(self, payload: dict[str, Any] | bytes) -> None:
        """A message we sent: the ids it asks anew may be answered again."""
        self._answered.difference_update(self.transcript.note_sent(payload))

    # --- taking ------------------------------------------------------------------------------

    def take(self, predicate: Callable[[dict[str, Any]], bool], since: int | None) -> dict[str, Any] | None:
        """The first match from index `since` on (None: only messages nobody consumed yet), marked
        consumed; a predicate raising LookupError or TypeError counts as no match."""
        for index in range(self._cursor if since is None else since, len(self.messages)):
            if since is None and index in self._consumed:
                continue
            with contextlib.suppress(LookupError, TypeError):
                if predicate(self.messages[index]):
                    self._consumed.add(index)
                    self._cursor = index + 1 if since is None else self._cursor
                    return self.messages[index]
        return None

    async def changed(self) -> None:
        """Return after the next line is read (or stdout closes)."""
        await self._changed.wait()

    # --- reading -----------------------------------------------------------------------------

    async def read(self, stdout: ByteReceiveStream) -> None:
        """Read stdout to its end, line by line."""
        buffer, scan_from = bytearray(), 0
        with contextlib.suppress(*IO_ERRORS):
            async for chunk in stdout:
                buffer += chunk
                while (end := buffer.find(b"\n", scan_from)) >= 0:
                    line, scan_from = bytes(buffer[:end]), 0
                    del buffer[: end + 1]
                    self._on_line(line, terminated=True)
                scan_from = len(buffer)
        if buffer:
            self._on_line(bytes(buffer), terminated=False)
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def _on_line(self, raw: bytes, *, terminated: bool) -> None:
        index = self.transcript.feed(raw, terminated=terminated)
        if index is None:
            if raw.strip():
                self.invalid_lines.append(raw.decode("utf-8", "replace")[:300])
            self._wake()
            return
        message = self.messages[index]
        kind, key, method = message_kind(message), id_key(message.get("id")), message.get("method")
        if kind == "response" and "id" in message:
            if self._pending.get(key, -1) is None:
                self._pending[key] = index
                self._consumed.add(index)
                self._answered.add(key)
            elif key in self._answered:
                self.transcript.protocol_violations.append(f"message #{index}: a second response to id {key}")
        elif kind == "request" and isinstance(method, str):
            self._on_request(message)
        elif isinstance(method, str):
            self._on_notification(message)
        self._wake()
