"""JSON from a project, HOME or a hook is read with a bound on its depth (issue 41 item 10): past
MAX_DEPTH levels, or past what `json` recurses, it is refused with ValueError, as invalid JSON is."""

from __future__ import annotations

import json

import pytest

from acp_agent.claude_code.settings.json_text import MAX_DEPTH, loads


def nested(levels: int, opener: str = "[") -> str:
    if opener == "[":
        return "[" * levels + "]" * levels
    return '{"a": ' * (levels - 1) + "{}" + "}" * (levels - 1)


@pytest.mark.parametrize("opener", ["[", "{"])
def test_max_depth_levels_are_read_and_one_more_is_refused(opener: str) -> None:
    assert loads(nested(MAX_DEPTH, opener)) is not None
    with pytest.raises(ValueError, match=f"nested deeper than {MAX_DEPTH} levels"):
        loads(nested(MAX_DEPTH + 1, opener))


@pytest.mark.parametrize("levels", [600, 50_000])
def test_what_json_parses_or_cannot_parse_past_the_bound_is_a_value_error(levels: int) -> None:
    with pytest.raises(ValueError, match="nested deeper"):
        loads('{"hooks": ' + nested(levels) + "}")


def test_a_wide_shallow_document_and_the_usual_errors() -> None:
    wide = {"projects": {f"/p{i}": {"mcpServers": {}, "history": [{"x": [1, 2]}] * 3} for i in range(2000)}}

    assert loads(json.dumps(wide)) == wide
    assert loads(b'{"a": 1}') == {"a": 1}
    for bad in (b"\xff{}", "{", "[1,]", ""):
        with pytest.raises(ValueError):
            loads(bad)
