"""JSON Schemas of the formats acp-agent reads or writes, generated from its own pydantic models.

`python -m acp_agent.schemas [DIR]` writes them (default: the repository's `schemas/`); a test fails
when the committed files are out of date.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

__all__ = ["generate", "write_all"]

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def generate() -> dict[str, dict[str, Any]]:
    """File name → schema, for every format a user of acp-agent may read or write."""
    from acp_agent.config import Config
    from acp_agent.harness.steps import step_adapter
    from acp_agent.model.cassette import CassetteHeader, Exchange
    from acp_agent.turn.journal.lines import journal_schema
    from acp_agent.turn.record import TurnRecord
    from acp_agent.turn.strategies.results import PhasedResult, VerifyResult

    schemas = {
        "config.schema.json": (
            "acp-agent configuration (flags > environment > defaults)",
            TypeAdapter(Config).json_schema(),
        ),
        "turn-record.schema.json": (
            'The turn record in session/prompt _meta["acp-agent"]["turn"]',
            TypeAdapter(TurnRecord).json_schema(by_alias=True),
        ),
        "verify-result.schema.json": (
            "The turn record of the verify loop (the common record plus trials)",
            TypeAdapter(VerifyResult).json_schema(by_alias=True),
        ),
        "phased-result.schema.json": (
            "The turn record of the phased loop (the common record plus transitions)",
            TypeAdapter(PhasedResult).json_schema(by_alias=True),
        ),
        "cassette-header.schema.json": (
            "First line of a record/replay cassette (JSON lines)",
            TypeAdapter(CassetteHeader).json_schema(by_alias=True),
        ),
        "cassette-exchange.schema.json": (
            "Every further line of a cassette: one Messages API exchange",
            TypeAdapter(Exchange).json_schema(by_alias=True),
        ),
        "journal-entry.schema.json": (
            "One line of a session journal (JSON lines, one file per session in the state dir)",
            journal_schema(),
        ),
        "harness-step.schema.json": (
            "One step (one JSON line) of an `acp-agent harness` script",
            step_adapter().json_schema(by_alias=True),
        ),
    }
    return {
        name: {"$schema": SCHEMA_DIALECT, "title": title, **body} for name, (title, body) in schemas.items()
    }


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_all(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in generate().items():
        path = directory / name
        path.write_text(render(schema), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "schemas"
    for path in write_all(target):
        sys.stderr.write(f"wrote {path}\n")
