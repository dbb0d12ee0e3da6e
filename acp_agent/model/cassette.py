"""The record/replay cassette: one run's Messages API exchanges as JSON lines, and its two views.

Line 1 is a `CassetteHeader`, every further line one `Exchange` (the request body and the
response: a JSON body, or the SSE events in order). Turning a message into its SSE events and
back, to serve a reply on the other API path, is `sse.py`'s job. Pure data: no `anthropic`, no
`httpx2`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import structlog
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from acp_agent.errors import CassetteError
from acp_agent.model.sse import SseEvent

__all__ = [
    "Cassette",
    "CassetteError",
    "CassetteHeader",
    "CassetteWriter",
    "Exchange",
    "RecordedResponse",
    "load_cassette",
]

log = structlog.get_logger(__name__)


class _Line(BaseModel):
    model_config = ConfigDict(
        defer_build=True, alias_generator=to_camel, populate_by_name=True, extra="forbid"
    )


class CassetteHeader(_Line):
    """The first line: what the run was recorded with."""

    version: Literal[1] = 1
    model: str
    """The model id the run used; a replay sends the same one."""
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    streaming: bool
    """Whether the run streamed; a replay may use either path."""


class RecordedResponse(_Line):
    """The answer to one request: status, a few headers, and the body in one of its forms.

    `complete` is False when the body broke off (a dropped connection, or the reader stopped):
    a replay then serves what was recorded and breaks off at the same point.
    """

    status: int = 200
    headers: dict[str, str] = Field(default_factory=dict)
    json_body: Any = Field(default=None, alias="json")
    sse: list[SseEvent] | None = None
    text: str | None = None
    complete: bool = True


class Exchange(_Line):
    """One HTTP attempt at `POST /v1/messages` (a retry is an exchange of its own)."""

    request: dict[str, Any]
    response: RecordedResponse


@dataclass(frozen=True, slots=True)
class Cassette:
    """A loaded cassette: the header and the exchanges in recorded order."""

    path: Path
    header: CassetteHeader
    exchanges: tuple[Exchange, ...]


def _dump(line: _Line) -> str:
    return line.model_dump_json(by_alias=True, exclude_none=True) + "\n"


def load_cassette(path: Path) -> Cassette:
    """Read a cassette; a torn last line (a run killed mid-write) is dropped with a warning.

    Raises:
        CassetteError: the file is missing, has no header, or a complete line is invalid.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CassetteError(f"cannot read cassette {path}: {exc.strerror or exc}") from None
    lines = text.split("\n")
    torn = lines.pop()  # "" when the file ends with a newline, as every complete line does
    parsed: list[Any] = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            parsed.append(_parse(path, number, line, CassetteHeader if number == 1 else Exchange))
    if torn.strip():
        try:
            parsed.append(_parse(path, len(lines) + 1, torn, CassetteHeader if not lines else Exchange))
        except CassetteError as exc:
            log.warning("cassette.torn_line", path=str(path), line=len(lines) + 1, error=str(exc))
    if not parsed or not isinstance(parsed[0], CassetteHeader):
        raise CassetteError(f"cassette {path} has no header line")
    return Cassette(path, parsed[0], tuple(parsed[1:]))


def _parse(path: Path, number: int, line: str, kind: type[_Line]) -> Any:
    try:
        return kind.model_validate_json(line)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "line"
        raise CassetteError(
            f"cassette {path} line {number} is not a valid {kind.__name__}: {where}: {first['msg']}"
        ) from None


class CassetteWriter:
    """Appends exchanges to a cassette, one whole line per write, flushed at once.

    The file is opened per exchange (a few per turn), so no handle outlives a closed client
    and a crash loses at most the line being written.
    """

    def __init__(self, path: Path, header: CassetteHeader) -> None:
        self.path = path
        self.header = header
        self.count = 0
        path.write_text(_dump(header), encoding="utf-8")

    def append(self, exchange: Exchange) -> None:
        """Add one exchange at the end of the cassette."""
        with self.path.open("a", encoding="utf-8") as file:
            file.write(_dump(exchange))
        self.count += 1
