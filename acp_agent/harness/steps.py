"""The harness script format: one pydantic model per step kind, discriminated by `op`.

A script is a JSON-lines file, one step object a line (blank lines and lines starting with `#`
or `//` are skipped), or one JSON array of steps. `schemas/` is generated from `Step` with
`TypeAdapter`. The pattern language used by `match` is described in `harness/pattern.py`.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from acp_agent.errors import HarnessError

__all__ = [
    "AnswerStep",
    "CancelStep",
    "CloseStep",
    "ExpectStep",
    "ModelStep",
    "NotifyStep",
    "RequestStep",
    "RespondStep",
    "RpcErrorBody",
    "ScriptError",
    "Step",
    "WaitStep",
    "load_script",
    "step_adapter",
]

Timeout = Annotated[float, Field(gt=0, le=3600, description="seconds; default: the --timeout option")]


class _Base(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    note: str | None = Field(None, description="a label shown in the report instead of the default one")


class RpcErrorBody(BaseModel):
    """A JSON-RPC error object to answer the agent with."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)
    code: int
    message: str
    data: Any = None


class _Reply(_Base):
    """A canned answer: `result` (default `{}`) or `error`, never both."""

    result: Any = Field(None, description="the result to send ($names are filled in); default {}")
    error: RpcErrorBody | None = None

    @model_validator(mode="after")
    def _one_answer(self) -> _Reply:
        if self.error is not None and "result" in self.model_fields_set:
            raise ValueError("give `result` or `error`, not both")
        return self

    def answer(self) -> dict[str, Any]:
        if self.error is not None:
            return {"error": self.error.model_dump(exclude_none=True)}
        return {"result": self.result if "result" in self.model_fields_set else {}}


class RequestStep(_Base):
    """Send a request; by default wait for its response and check it against `match`."""

    op: Literal["request"]
    method: str
    params: Any = Field(None, description="sent as given, with $names filled in; omitted when null")
    id: int | str | None = Field(None, description="the request id; default: the next integer")
    name: str | None = Field(
        None, description="refer to this request later (expect.response, cancel.request); default: the method"
    )
    wait: bool = Field(
        True, description="false: go on at once; an `expect` step with `response` checks the answer later"
    )
    match: Any = Field(None, description='pattern for the whole response; default {"result": "*"}')
    timeout: Timeout | None = None

    @model_validator(mode="after")
    def _match_needs_wait(self) -> RequestStep:
        if not self.wait and self.match is not None:
            raise ValueError("`match` needs `wait: true`; check the answer with an `expect` step")
        return self


class NotifyStep(_Base):
    """Send a notification (no response is expected)."""

    op: Literal["notify"]
    method: str
    params: Any = None


class ExpectStep(_Base):
    """Wait for a message from the agent that matches `match` (a partial pattern).

    Without `response`, the first message not yet matched by an earlier step is taken, whatever
    came before it (notifications, the agent's requests, responses); `after` skips the messages
    that arrived before the named request was sent. With `response`, the answer
    to that named request (sent with `wait: false`) is checked.
    """

    op: Literal["expect"]
    match: Any = Field(None, description='the pattern; with `response` the default is {"result": "*"}')
    response: str | None = Field(None, description="the name of a request sent with wait: false")
    after: str | None = Field(None, description="only messages that arrived after the named request was sent")
    timeout: Timeout | None = None

    @model_validator(mode="after")
    def _something_to_match(self) -> ExpectStep:
        if self.match is None and self.response is None:
            raise ValueError("give `match`, `response`, or both")
        return self


class AnswerStep(_Reply):
    """From now on, answer the agent's requests for `method` (and `match` on their params).

    Requests that no rule answers are held until a `respond` step answers them; a rule added
    later also answers the held requests it matches. Captures in `match` fill `result` for that
    one answer only.
    """

    op: Literal["answer"]
    method: str = Field(description='the method, or a glob such as "terminal/*"')
    match: Any = Field("*", description="pattern for the request's params")
    times: int | None = Field(None, ge=1, description="answer this many requests, then stop; default all")


class RespondStep(_Reply):
    """Answer one request the agent made, usually captured by an `expect` step ("id": "$permId")."""

    op: Literal["respond"]
    id: Any = Field(description='the request\'s id, usually a capture such as "$permId"')


class WaitStep(_Base):
    """Let time pass (the agent keeps working; its messages are kept for later steps)."""

    op: Literal["wait"]
    seconds: float = Field(gt=0, le=600)


class CancelStep(_Base):
    """`session/cancel` for `session`, or `$/cancel_request` for the named `request`."""

    op: Literal["cancel"]
    session: Any = Field("$sessionId", description="the sessionId to cancel (default $sessionId)")
    request: str | None = Field(None, description="cancel this named request with $/cancel_request instead")


class CloseStep(_Base):
    """Close the agent's stdin and wait for it to exit (with `exit_code`, when given)."""

    op: Literal["close"]
    exit_code: int | None = None
    timeout: Timeout | None = None


class ModelStep(_Base):
    """The model the script needs (first step only): the harness starts the packaged fake with
    this reply mode, points the agent at it (API key, base URL, model id) and stops it at the end.
    """

    op: Literal["model"]
    fake: Literal["acp_agent.testing"] = Field(description="the fake to start: the packaged one")
    reply: Literal["text", "tool_use"] = Field(
        "text", description="text: answer every request with `text`; tool_use: call `tool` forever"
    )
    text: str | None = Field(None, description="the text answer (reply text)")
    chunks: int | None = Field(None, ge=1, le=10_000, description="stream the text as N deltas")
    tool: str | None = Field(None, description="the tool to call (reply tool_use; default read_file)")
    tool_input: dict[str, Any] | None = Field(
        None, description='its input; "{n}" in a string becomes the request number'
    )

    def fake_args(self) -> list[str]:
        """The fake's command-line options."""
        args = ["--reply", self.reply]
        for flag, value in (("--text", self.text), ("--tool", self.tool)):
            if value is not None:
                args += [flag, value]
        if self.chunks is not None:
            args += ["--chunks", str(self.chunks)]
        if self.tool_input is not None:
            args += ["--tool-input", json.dumps(self.tool_input)]
        return args


Step = Annotated[
    ModelStep
    | RequestStep
    | NotifyStep
    | ExpectStep
    | AnswerStep
    | RespondStep
    | WaitStep
    | CancelStep
    | CloseStep,
    Field(discriminator="op"),
]


@functools.cache
def step_adapter() -> TypeAdapter[Step]:
    """Validates one step; `step_adapter().json_schema()` documents the format."""
    return TypeAdapter(Step)


class ScriptError(HarnessError, ValueError):
    """A script that cannot be run: the message names the file and line of each problem."""


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors(include_url=False):
        where = ".".join(str(p) for p in item["loc"][1:]) or str(item["loc"][0]) if item["loc"] else ""
        parts.append(f"{where}: {item['msg']}" if where else item["msg"])
    return "; ".join(parts)


def load_script(path: str | Path) -> list[Step]:
    """Read and validate a whole script before anything runs."""
    text = Path(path).read_text(encoding="utf-8")
    items: list[tuple[str, Any]] = []
    problems: list[str] = []
    if text.lstrip().startswith("["):
        try:
            items = [(f"item {i + 1}", item) for i, item in enumerate(json.loads(text))]
        except ValueError as exc:
            raise ScriptError(f"{path}: not valid JSON: {exc}") from exc
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip() or line.lstrip().startswith(("#", "//")):
                continue
            try:
                items.append((f"line {number}", json.loads(line)))
            except ValueError as exc:
                problems.append(f"{path} line {number}: not JSON: {exc}")
    steps = []
    for where, item in items:
        try:
            steps.append(step_adapter().validate_python(item))
        except ValidationError as exc:
            problems.append(f"{path} {where}: {_describe(exc)}")
    if len(steps) == len(items):  # every step is valid: a model step must come first
        problems += [
            f"{path} {where}: a model step must be the first step"
            for position, ((where, _), step) in enumerate(zip(items, steps, strict=True))
            if position and isinstance(step, ModelStep)
        ]
    if problems:
        raise ScriptError("\n".join(problems))
    if not steps:
        raise ScriptError(f"{path}: no steps")
    return steps
