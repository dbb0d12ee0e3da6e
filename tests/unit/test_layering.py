"""Imports point one way: the rooms of the package may only import the rooms below them."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "acp_agent"

# room → rooms it may import (besides itself and the leaf modules in LEAVES).
ALLOWED = {
    "rpc": set(),
    "protocol": set(),
    "model": set(),
    "tools": set(),
    "turn": {"model", "tools"},
    "session": {"protocol", "turn", "model", "tools"},
    "testing": {"model"},
    "harness": set(),
    "demo": set(),
}
LEAVES = {"errors", "config", "limits", "settings", "__init__", "logs", "demo", "schemas", "lazy", "jsonrpc"}


def room_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "acp_agent" or len(parts) < 2:
        return None
    return parts[1]


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_no_room_imports_a_room_above_it() -> None:
    problems = []
    for room, allowed in ALLOWED.items():
        for path in (PACKAGE / room).rglob("*.py"):
            for module in imports_of(path):
                target = room_of(module)
                if target is None or target == room or target in LEAVES:
                    continue
                if target not in allowed:
                    problems.append(f"{path.relative_to(PACKAGE)} imports {module}")
    assert not problems, "back-edges:\n" + "\n".join(problems)


def test_anthropic_is_imported_only_inside_model_and_testing() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        room = path.relative_to(PACKAGE).parts[0]
        if room in {"model", "testing"}:
            continue
        if any(m == "anthropic" or m.startswith("anthropic.") for m in imports_of(path)):
            offenders.append(str(path.relative_to(PACKAGE)))
    assert not offenders
