"""The smoke runner's editor side: it answers the agent's permission questions and file requests,
and turns the person's Ctrl-C into `session/cancel`.

Permissions follow `--yes` / `--no`; otherwise a person at a terminal is asked. A stdin that is
not a terminal is never waited on: the question is rejected, with a line saying so (D8). Files
are read anywhere but written only inside the session's cwd, so a smoke run cannot surprise.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import anyio

from acp_agent.harness.client import AgentClient
from acp_agent.harness.render import TurnPrinter

__all__ = ["Editor", "Policy", "pick_option"]

Policy = Literal["allow", "reject", "ask", "no-tty"]
_WANT = {"allow": ("allow_once", "allow_always"), "reject": ("reject_once", "reject_always")}


class _Refusal(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.error = {"code": code, "message": message, **({"data": data} if data is not None else {})}


def pick_option(
    options: Sequence[Mapping[str, Any]], want: Literal["allow", "reject"]
) -> Mapping[str, Any] | None:
    """The option of the wanted kind, preferring the one-time kind over the always kind."""
    for kind in _WANT[want]:
        for option in options:
            if option.get("kind") == kind:
                return option
    return None


class Editor:
    """Answers `session/request_permission` and `fs/*`; anything else is "method not found"."""

    def __init__(
        self, printer: TurnPrinter, *, policy: Policy, cwd: Path, fs: bool, stdin_fd: int | None = None
    ) -> None:
        self.printer, self.policy, self.cwd, self.fs = printer, policy, cwd.resolve(), fs
        self.stdin_fd = stdin_fd
        self.cancelled = False
        self._ask_lock = anyio.Lock()
        self._questions: set[anyio.CancelScope] = set()
        self.asked = 0

    def cancel_questions(self) -> None:
        """The turn is being cancelled: open questions are answered `cancelled` (ACP requires it)."""
        self.cancelled = True
        for scope in self._questions:
            scope.cancel()

    async def watch_interrupts(self, client: AgentClient, session_id: str) -> None:
        """The person's Ctrl-C: the first cancels the turn the ACP way; the second kills the agent."""
        try:
            receiver = anyio.open_signal_receiver(signal.SIGINT)
        except (RuntimeError, ValueError):  # not the main thread: no signal handling
            return
        with receiver as signals:
            count = 0
            async for _ in signals:
                count += 1
                if count == 1:
                    self.printer.line("cancelling the turn (Ctrl-C again to kill the agent)", "yellow")
                    self.cancel_questions()
                    await client.notify("session/cancel", {"sessionId": session_id})
                else:
                    self.printer.line("killing the agent", "yellow")
                    client.send_signal(signal.SIGKILL)

    async def handle(self, client: AgentClient, message: dict[str, Any]) -> None:
        method, params, rid = message.get("method"), message.get("params") or {}, message.get("id")
        try:
            if method == "session/request_permission":
                result: Any = {"outcome": await self.permission(params)}
            elif method == "fs/read_text_file" and self.fs:
                result = self.read(params)
            elif method == "fs/write_text_file" and self.fs:
                result = self.write(params)
            else:
                raise _Refusal(-32601, "Method not found", {"method": method})
        except _Refusal as exc:
            await client.respond(rid, error=exc.error)
            return
        await client.respond(rid, result=result)

    # --- permission ------------------------------------------------------------------------

    async def permission(self, params: Mapping[str, Any]) -> dict[str, Any]:
        async with self._ask_lock:  # one question on the terminal at a time
            self.asked += 1
            options = [o for o in params.get("options") or [] if isinstance(o, Mapping)]
            call = params.get("toolCall") or {}
            title = call.get("title") or call.get("toolCallId") or "a tool call"
            self.printer.line(f"? permission: {title}", "yellow")
            for number, option in enumerate(options, start=1):
                self.printer.line(f"    [{number}] {option.get('name')} ({option.get('kind')})")
            if self.cancelled:
                return self._answer(None, "the turn is being cancelled")
            if self.policy in ("allow", "reject"):
                flag = "--yes" if self.policy == "allow" else "--no"
                return self._answer(pick_option(options, self.policy), flag)
            if self.policy == "no-tty":
                self.printer.line(
                    "  rejected: stdin is not a terminal, so nobody can answer "
                    "(pass --yes to allow or --no to reject without this line)",
                    "yellow",
                )
                return self._answer(pick_option(options, "reject"), "no terminal")
            return self._answer(*await self._ask(options))

    def _answer(self, option: Mapping[str, Any] | None, why: str) -> dict[str, Any]:
        if option is None:
            self.printer.line(f"  -> cancelled ({why})", "yellow")
            return {"outcome": "cancelled"}
        self.printer.line(f"  -> {option.get('name')} ({why})", "yellow")
        return {"outcome": "selected", "optionId": option.get("optionId")}

    async def _ask(self, options: Sequence[Mapping[str, Any]]) -> tuple[Mapping[str, Any] | None, str]:
        for _ in range(3):
            self.printer.out.write(f"  choose 1-{len(options)}, y (allow) or n (reject): ")
            self.printer.out.flush()
            line = await self._read_line()
            if line is None:
                self.printer.line()
                if self.cancelled:
                    return None, "the turn is being cancelled"
                return pick_option(options, "reject"), "end of input"
            answer = line.strip().lower()
            if answer.isdigit() and 1 <= int(answer) <= len(options):
                return options[int(answer) - 1], "your choice"
            if answer in ("y", "yes", "n", "no"):
                return pick_option(options, "allow" if answer.startswith("y") else "reject"), "your choice"
        return pick_option(options, "reject"), "no valid answer"

    async def _read_line(self) -> str | None:
        """One line from the terminal, given up when the turn is cancelled; None at EOF."""
        if self.stdin_fd is None:
            return None
        with anyio.CancelScope() as scope:
            self._questions.add(scope)
            try:
                await anyio.wait_readable(self.stdin_fd)
                data = os.read(self.stdin_fd, 4096)
            finally:
                self._questions.discard(scope)
            return data.decode("utf-8", "replace") if data else None
        return None

    # --- files -------------------------------------------------------------------------------

    def _path(self, params: Mapping[str, Any]) -> Path:
        path = params.get("path")
        if not isinstance(path, str) or not os.path.isabs(path):
            raise _Refusal(-32602, "Invalid params: path must be an absolute path", {"path": path})
        return Path(path)

    def read(self, params: Mapping[str, Any]) -> dict[str, Any]:
        path = self._path(params)
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            raise _Refusal(-32002, "Resource not found", {"uri": str(path)}) from None
        except OSError as exc:
            raise _Refusal(-32603, f"cannot read {path}: {exc.strerror}") from None
        line, limit = params.get("line"), params.get("limit")
        lines = text.splitlines(keepends=True)
        start = max(int(line) - 1, 0) if isinstance(line, int) else 0
        end = start + int(limit) if isinstance(limit, int) else None
        content = "".join(lines[start:end])
        self.printer.line(f"   (the agent read {path} through us: {len(content)} characters)", "dim")
        return {"content": content}

    def write(self, params: Mapping[str, Any]) -> dict[str, Any]:
        path = self._path(params)
        content = params.get("content")
        if not isinstance(content, str):
            raise _Refusal(-32602, "Invalid params: content must be a string")
        if not path.resolve().is_relative_to(self.cwd):
            raise _Refusal(-32602, f"the smoke runner writes only inside {self.cwd}", {"path": str(path)})
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        except OSError as exc:
            raise _Refusal(-32603, f"cannot write {path}: {exc.strerror}") from None
        self.printer.line(f"   (the agent wrote {path} through us: {len(content)} characters)", "dim")
        return {}
