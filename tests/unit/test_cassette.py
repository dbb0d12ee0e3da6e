"""The cassette file format: a header line, then one exchange per line (a JSON body or SSE events)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import TypeAdapter
from structlog.testing import capture_logs

from acp_agent.model.cassette import (
    CassetteError,
    CassetteHeader,
    CassetteWriter,
    Exchange,
    RecordedResponse,
    load_cassette,
)
from acp_agent.model.sse import message_to_events
from tests.unit.test_sse import MESSAGE


def write(path: Path, *lines: str, end: str = "\n") -> Path:
    path.write_text("\n".join(lines) + end, encoding="utf-8")
    return path


def exchange_line(text: str) -> str:
    return Exchange(
        request={"model": "claude-test-1", "messages": []},
        response=RecordedResponse(json_body=dict(MESSAGE, id=text)),
    ).model_dump_json(by_alias=True, exclude_none=True)


HEADER = CassetteHeader(model="claude-test-1", streaming=False).model_dump_json(by_alias=True)


def test_a_cassette_reads_back_what_the_writer_wrote(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    writer = CassetteWriter(path, CassetteHeader(model="claude-test-1", streaming=True))
    streamed = Exchange(
        request={"model": "claude-test-1", "stream": True},
        response=RecordedResponse(sse=message_to_events(MESSAGE)),
    )
    failed = Exchange(
        request={"model": "claude-test-1"},
        response=RecordedResponse(
            status=529,
            headers={"retry-after-ms": "10"},
            json_body={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        ),
    )
    writer.append(streamed)
    writer.append(failed)

    loaded = load_cassette(path)
    assert (loaded.header.model, loaded.header.streaming, loaded.header.version) == ("claude-test-1", True, 1)
    assert loaded.exchanges == (streamed, failed)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and writer.count == 2
    assert "createdAt" in json.loads(lines[0])
    assert set(json.loads(lines[1])["response"]) == {"status", "headers", "sse", "complete"}
    assert json.loads(lines[2])["response"]["json"]["error"]["type"] == "overloaded_error"


def test_a_torn_last_line_is_dropped_and_the_complete_ones_kept(tmp_path: Path) -> None:
    whole = exchange_line("msg_1")
    path = write(tmp_path / "torn.jsonl", HEADER, whole, exchange_line("msg_2")[:57], end="")
    with capture_logs() as logs:
        loaded = load_cassette(path)
    assert [x.response.json_body["id"] for x in loaded.exchanges] == ["msg_1"]
    assert [entry["event"] for entry in logs] == ["cassette.torn_line"]
    assert logs[0]["line"] == 3


def test_a_last_line_without_its_newline_is_kept_when_it_is_whole(tmp_path: Path) -> None:
    path = write(tmp_path / "unterminated.jsonl", HEADER, exchange_line("msg_1"), end="")
    assert len(load_cassette(path).exchanges) == 1


def test_a_broken_line_before_the_end_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "broken.jsonl", HEADER, exchange_line("msg_1")[:40], exchange_line("msg_2"))
    with pytest.raises(CassetteError, match=r"broken\.jsonl line 2 is not a valid Exchange"):
        load_cassette(path)


def test_a_line_with_an_unknown_field_is_refused_rather_than_ignored(tmp_path: Path) -> None:
    line = json.loads(exchange_line("msg_1"))
    line["response"]["jsno"] = {}
    path = write(tmp_path / "typo.jsonl", HEADER, json.dumps(line))
    with pytest.raises(CassetteError, match=r"line 2 .*response\.jsno"):
        load_cassette(path)


@pytest.mark.parametrize(
    "content", ["", "\n", exchange_line("msg_1") + "\n"], ids=["empty", "blank", "no-header"]
)
def test_a_cassette_without_a_header_line_is_an_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "headless.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CassetteError, match=r"(?i)header"):
        load_cassette(path)


def test_a_missing_cassette_is_an_error_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match=r"cannot read cassette .*nowhere\.jsonl"):
        load_cassette(tmp_path / "nowhere.jsonl")


def test_the_cassette_lines_have_json_schemas_with_their_wire_names() -> None:
    header = TypeAdapter(CassetteHeader).json_schema(by_alias=True)
    exchange = TypeAdapter(Exchange).json_schema(by_alias=True)
    assert {"version", "model", "createdAt", "streaming"} <= set(header["properties"])
    response = exchange["$defs"]["RecordedResponse"]["properties"]
    assert {"status", "headers", "json", "sse", "complete"} <= set(response)
