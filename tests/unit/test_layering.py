"""Imports point one way: the rooms of the package may only import the rooms below them.

An edge is an import, or a module string: a room that starts `python -m acp_agent.x` (a string
constant naming a module of the package, or holding `-m acp_agent.x`) depends on `x` as surely as
one that imports it, so the check counts both. Docstrings and other prose are not edges.
"""

from __future__ import annotations

import ast
import re
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
    "harness": {"testing"},  # by a module string: it starts `python -m acp_agent.testing`
    "demo": set(),
}
LEAVES = {
    "errors",
    "config",
    "limits",
    "settings",
    "__init__",
    "logs",
    "demo",
    "schemas",
    "lazy",
    "jsonrpc",
    "user_dirs",
    "startup_gc",
    "process",
}


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


MODULE_STRING = re.compile(r"(?:^|-m\s+)(acp_agent(?:\.\w+)+)(?:\s|$)")
"""A whole string naming a module of the package, or `-m acp_agent.x` inside a command line."""


def module_strings_of(source: str) -> set[str]:
    """Modules of the package named by string constants that are not prose (a bare string
    statement: a docstring or an attribute's doc)."""
    tree = ast.parse(source)
    prose = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            found.update(MODULE_STRING.findall(node.value))
    return found


def edges_of(path: Path) -> set[str]:
    """What a module depends on: its imports and the package modules it names by a string."""
    return imports_of(path) | module_strings_of(path.read_text())


def test_the_check_sees_module_strings_but_not_prose() -> None:
    source = (
        '"""Starts `python -m acp_agent.doc_only`."""\n'
        "import sys\n"
        'CMD = [sys.executable, "-m", "acp_agent.testing"]\n'
        'SHELL = "python -m acp_agent.harness.script --check x"\n'
        'KIND: Literal["acp_agent.model.sse"] = "acp_agent.model.sse"\n'
        'ROOT = [sys.executable, "-m", "acp_agent"]\n'
        'TEXT = "see acp_agent.turn for details"\n'
    )
    assert module_strings_of(source) == {
        "acp_agent.testing",
        "acp_agent.harness.script",
        "acp_agent.model.sse",
    }


def test_the_harness_starts_the_fake_by_a_module_string_and_the_check_sees_it() -> None:
    harness = {m for path in (PACKAGE / "harness").rglob("*.py") for m in edges_of(path)}
    assert "acp_agent.testing" in harness


def test_no_room_imports_a_room_above_it() -> None:
    problems = []
    for room, allowed in ALLOWED.items():
        for path in (PACKAGE / room).rglob("*.py"):
            for module in edges_of(path):
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
