"""The harness runner: runs script steps in order against one spawned agent and reports each.

A step passes or fails (with a diff of what differed); the run stops at the first failure. The
agent's requests are held until a `respond` step or an `answer` rule answers them.
"""

from __future__ import annotations

import fnmatch
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

import anyio

from acp_agent.errors import HarnessError
from acp_agent.harness.client import AgentClient, AgentExitedError, id_key
from acp_agent.harness.pattern import PatternError, format_mismatches, match, substitute
from acp_agent.harness.steps import (
    AnswerStep,
    CancelStep,
    CloseStep,
    ExpectStep,
    NotifyStep,
    RequestStep,
    RespondStep,
    Step,
    WaitStep,
)

__all__ = ["ScriptRunner", "StepFailed", "describe"]

_DEFAULT_RESPONSE = {"result": "*"}
HOLD_WAIT_SECONDS = 1.0


class StepFailed(HarnessError):
    """A step did not get what it expected; the message is the report's detail."""

    def __init__(self, message: str, stderr_tail: str = "") -> None:
        super().__init__(message)
        self.stderr_tail = stderr_tail


def _short(value: Any, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(step: Step) -> str:
    """The step's label in the report."""
    if step.note:
        return step.note
    if isinstance(step, RequestStep | NotifyStep | AnswerStep):
        return f"{step.op} {step.method}"
    if isinstance(step, ExpectStep):
        if step.response:
            return f"expect response to {step.response}"
        pattern: dict[str, Any] = step.match if isinstance(step.match, dict) else {}
        params = pattern.get("params")
        update = params.get("update") if isinstance(params, dict) else None
        update = update if isinstance(update, dict) else {}
        return " ".join(
            str(p) for p in ("expect", pattern.get("method", "a message"), update.get("sessionUpdate")) if p
        )
    if isinstance(step, CancelStep):
        return f"cancel {step.request}" if step.request else "cancel session"
    return step.op


@dataclass(slots=True)
class _Rule:
    step: AnswerStep
    used: int = 0


@dataclass(slots=True)
class ScriptRunner:
    """Runs steps in order against one client; keeps the captured `$names` in `variables`."""

    out: TextIO
    variables: dict[str, Any]
    timeout: float = 30.0
    client: AgentClient | None = None
    consumed: set[int] = field(default_factory=set)  # id() of messages an earlier step matched
    named: dict[str, Any] = field(default_factory=dict)  # request name → its id
    sent_at: dict[str, int] = field(default_factory=dict)  # request name → messages before it
    held: dict[str, dict[str, Any]] = field(default_factory=dict)  # unanswered agent requests
    rules: list[_Rule] = field(default_factory=list)
    held_changed: anyio.Event | None = None  # set when a request is held (see _until_held)

    # --- the agent's requests --------------------------------------------------------------

    async def on_request(self, client: AgentClient, message: dict[str, Any]) -> None:
        self.held[id_key(message.get("id"))] = message
        if self.held_changed is not None:
            self.held_changed.set()
        await self._apply_rules()

    async def _apply_rules(self) -> None:
        assert self.client is not None
        for key, message in list(self.held.items()):
            if key not in self.held:  # another task answered it while we were sending
                continue
            for rule in self.rules:
                step = rule.step
                if step.times is not None and rule.used >= step.times:
                    continue
                if not fnmatch.fnmatchcase(str(message.get("method")), step.method):
                    continue
                mismatches, captured = match(step.match, message.get("params"), self.variables)
                if mismatches:
                    continue
                rule.used += 1
                self.held.pop(key, None)
                answer = substitute(step.answer(), {**self.variables, **captured})
                await self.client.respond(message.get("id"), **answer)
                break

    # --- steps ---------------------------------------------------------------------------

    async def run(self, client: AgentClient, steps: Sequence[Step]) -> bool:
        """Run every step against `client`, reporting each; stop at the first failure. True when all
        passed. (The client is given here, not at construction: it is spawned with `on_request`.)"""
        self.client = client
        for index, step in enumerate(steps, start=1):
            started = time.perf_counter()
            try:
                detail = await self.run_step(step)
            except (StepFailed, PatternError, AgentExitedError, TimeoutError, ValueError) as exc:
                self._line("FAIL", index, describe(step), started, "")
                self.out.write(f"    {exc}\n".replace("\n", "\n    ").rstrip(" ") + self._context(exc))
                skipped = len(steps) - index
                self.out.write(f"{index - 1} passed, 1 failed, {skipped} skipped\n")
                return False
            self._line("PASS", index, describe(step), started, detail)
        self.out.write(f"{len(steps)} passed\n")
        return True

    def _line(self, status: str, index: int, label: str, started: float, detail: str) -> None:
        ms = (time.perf_counter() - started) * 1000
        tail = f"  {detail}" if detail else ""
        self.out.write(f"{status} {index:3d}  {label}{tail}  ({ms:.0f} ms)\n")
        self.out.flush()

    def _context(self, exc: BaseException) -> str:
        lines = []
        if self.held:
            waiting = ", ".join(f"{m.get('method')} (id {_short(m.get('id'))})" for m in self.held.values())
            lines.append(f"    the agent is waiting for answers to: {waiting}")
        if stderr := getattr(exc, "stderr_tail", ""):
            tail = stderr.rstrip()[-1500:].replace("\n", "\n    | ")
            lines.append(f"    agent stderr (tail):\n    | {tail}")
        return "".join(line + "\n" for line in lines)

    async def run_step(self, step: Step) -> str:
        """Run one step; return a short detail for the report or raise `StepFailed`."""
        client = self.client
        assert client is not None
        timeout = getattr(step, "timeout", None) or self.timeout
        if isinstance(step, RequestStep):
            params = substitute(step.params, self.variables)
            sent_at = len(client.messages)
            rid = await client.send_request(step.method, params, id=substitute(step.id, self.variables))
            self.named[step.name or step.method] = rid
            self.sent_at[step.name or step.method] = sent_at
            if not step.wait:
                return f"(id {_short(rid)}, not waiting)"
            answer = await client.response(rid, timeout)
            return self._check(
                _DEFAULT_RESPONSE if step.match is None else step.match, answer, "the response"
            )
        if isinstance(step, NotifyStep):
            await client.notify(step.method, substitute(step.params, self.variables))
            return ""
        if isinstance(step, ExpectStep):
            return await self._expect(client, step, timeout)
        if isinstance(step, AnswerStep):
            self.rules.append(_Rule(step))
            await self._apply_rules()
            return ""
        if isinstance(step, RespondStep):
            rid = substitute(step.id, self.variables)
            await self._until_held(client, rid)
            if self.held.pop(id_key(rid), None) is None:
                raise StepFailed(f"the agent has no unanswered request with id {_short(rid)}")
            await client.respond(rid, **substitute(step.answer(), self.variables))
            return ""
        if isinstance(step, WaitStep):
            await anyio.sleep(step.seconds)
            return ""
        if isinstance(step, CancelStep):
            if step.request is not None:
                if step.request not in self.named:
                    raise StepFailed(f"no request named {step.request!r} was sent")
                await client.notify("$/cancel_request", {"requestId": self.named[step.request]})
                return ""
            await client.notify("session/cancel", {"sessionId": substitute(step.session, self.variables)})
            return ""
        assert isinstance(step, CloseStep)
        await client.close_stdin()
        try:
            code = await client.wait_exit(timeout)
        except TimeoutError:
            raise StepFailed(f"the agent was still running {timeout} s after its stdin closed") from None
        if step.exit_code is not None and code != step.exit_code:
            raise StepFailed(f"the agent exited with code {code}, not {step.exit_code}")
        return f"exit code {code}"

    async def _until_held(self, client: AgentClient, rid: Any) -> None:
        """An `expect` may see the agent's request before its `on_request` task has held it."""
        key = id_key(rid)
        if key in self.held or not any("method" in m and id_key(m.get("id")) == key for m in client.messages):
            return
        with anyio.move_on_after(HOLD_WAIT_SECONDS):
            while key not in self.held:
                self.held_changed = anyio.Event()
                await self.held_changed.wait()

    def _check(self, pattern: Any, message: dict[str, Any], what: str) -> str:
        self.consumed.add(id(message))
        mismatches, captured = match(pattern, message, self.variables)
        if mismatches:
            raise StepFailed(
                f"{what} did not match:\n{format_mismatches(mismatches, '')}\ngot: {_short(message, 600)}"
            )
        self.variables.update(captured)
        return "  ".join(f"${name} = {_short(value, 80)}" for name, value in captured.items())

    async def _expect(self, client: AgentClient, step: ExpectStep, timeout: float) -> str:
        if step.response is not None:
            if step.response not in self.named:
                raise StepFailed(f"no request named {step.response!r} was sent")
            try:
                answer = await client.response(self.named[step.response], timeout)
            except KeyError:
                raise StepFailed(f"the response to {step.response!r} was already checked") from None
            return self._check(
                _DEFAULT_RESPONSE if step.match is None else step.match, answer, "the response"
            )

        if step.after is not None and step.after not in self.sent_at:
            raise StepFailed(f"no request named {step.after!r} was sent")
        start = self.sent_at.get(step.after, 0) if step.after is not None else 0

        def probe() -> dict[str, Any] | None:
            for message in client.messages[start:]:
                if id(message) not in self.consumed and not match(step.match, message, self.variables)[0]:
                    return message
            return None

        try:
            found = await client.wait_until(probe, timeout, "message matching the pattern")
        except TimeoutError:
            raise StepFailed(
                f"no message matched within {timeout} s; {self.closest(step.match, start)}"
            ) from None
        except AgentExitedError as exc:
            raise StepFailed(f"{exc}; {self.closest(step.match, start)}", exc.stderr_tail) from None
        return self._check(step.match, found, "the message")

    def closest(self, pattern: Any, start: int = 0) -> str:
        """The unmatched message nearest to `pattern`, with its diff (for a failed expect)."""
        assert self.client is not None
        candidates = [m for m in self.client.messages[start:] if id(m) not in self.consumed]
        if not candidates:
            return "nothing else arrived from the agent"
        scored = [(match(pattern, m, self.variables)[0], m) for m in candidates]
        mismatches, nearest = min(scored, key=lambda item: len(item[0]))  # the first of the nearest
        diff = format_mismatches(mismatches, "")
        return f"closest of {len(candidates)} unmatched messages:\n{diff}\nmessage: {_short(nearest, 600)}"
