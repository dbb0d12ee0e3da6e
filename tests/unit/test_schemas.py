"""The committed schemas/ match what the pydantic models generate today."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from acp_agent.schemas import generate, render

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def test_committed_schemas_are_up_to_date() -> None:
    generated = generate()
    stale = [
        name
        for name, schema in generated.items()
        if not (SCHEMAS / name).exists() or (SCHEMAS / name).read_text() != render(schema)
    ]
    assert not stale, f"regenerate with `python -m acp_agent.schemas`: {stale}"
    extra = {p.name for p in SCHEMAS.glob("*.json")} - set(generated)
    assert not extra, f"schemas/ holds files no model generates: {extra}"


def test_the_schemas_are_valid_and_accept_real_data() -> None:
    for name in generate():
        jsonschema.Draft202012Validator.check_schema(json.loads((SCHEMAS / name).read_text()))
    demo = Path(__file__).resolve().parents[2] / "acp_agent" / "demo" / "demo.jsonl"
    header, *exchanges = [json.loads(line) for line in demo.read_text().splitlines()]
    jsonschema.validate(header, json.loads((SCHEMAS / "cassette-header.schema.json").read_text()))
    exchange_schema = json.loads((SCHEMAS / "cassette-exchange.schema.json").read_text())
    for exchange in exchanges:
        jsonschema.validate(exchange, exchange_schema)
    example = Path(__file__).resolve().parents[2] / "examples" / "handshake.jsonl"
    step_schema = json.loads((SCHEMAS / "harness-step.schema.json").read_text())
    for line in example.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith(("#", "//")):
            jsonschema.validate(json.loads(line), step_schema)
