"""Imports point one way: the rooms of the package may only import the rooms below them.

A room is a package directly under `acp_agent/`; its sub-packages (`tools/files/`, `session/loading/`)
and its top modules are its parts. An edge is an import, or a module string: a room that starts
`python -m acp_agent.x` (a string constant naming a module of the package, or holding
`-m acp_agent.x`) depends on `x` as surely as one that imports it, so the check counts both.
Docstrings and other prose are not edges.

The rules: a room imports only the rooms `ALLOWED` names, and the leaves; a leaf (`LEAVES`)
imports no room and no top module, only other leaves; a top module (`TOP`) imports what `TOP`
names, and no room imports it; every top-level module is a leaf or a top module. And there are no
circles: not between the parts of a room, and not between modules.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "acp_agent"

# room → rooms it may import (besides itself and the leaves).
ALLOWED = {
    "rpc": set(),
    "protocol": set(),
    "model": set(),
    "tools": set(),
    "permissions": {"model", "tools"},
    "turn": {"permissions", "model", "tools"},
    "journal": {"turn", "tools"},
    "claude_code": {"permissions", "turn", "model", "tools"},
    "session": {"protocol", "claude_code", "journal", "turn", "permissions", "model", "tools"},
    "testing": {"model"},
    "harness": {"testing"},  # by a module string: it starts `python -m acp_agent.testing`
}
LEAVES = {
    # top-level modules that import no room: any room may import them
    "__init__",
    "config",
    "errors",
    "jsonrpc",
    "lazy",
    "limits",
    "logs",
    "phases",
    "settings",
    "user_dirs",
    # leaf packages
    "demo",
    "process",
    "startup",
}
# top module → the rooms and top modules it may import (besides the leaves); no room imports it.
TOP = {
    "__main__": {"cli"},
    "cli": {"app", "harness", "model", "claude_code", "session", "turn"},
    "app": {"rpc", "protocol", "claude_code", "journal", "session", "model"},
    "api": {"turn", "permissions", "model", "tools"},  # re-exports only: the public names
    "schemas": {"harness", "model", "turn"},  # the generated JSON schemas' sources
}


def room_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "acp_agent" or len(parts) < 2:
        return None
    return parts[1]


def module_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(dotted: str) -> bool:
    path = PACKAGE.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            # `from acp_agent.x import y`: y may be a module (`from acp_agent.process import warden`)
            found.update(m for alias in node.names if is_module(m := f"{node.module}.{alias.name}"))
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


def module_graph() -> dict[str, set[str]]:
    """Every module of the package → the modules of the package it depends on."""
    modules = {module_of(path): path for path in PACKAGE.rglob("*.py")}
    return {name: {m for m in edges_of(path) if m in modules and m != name} for name, path in modules.items()}


def circles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one node (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph.get(start, ())))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(graph.get(target, ()))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.append(member)
                    if member == node:
                        break
                if len(part) > 1:
                    found.append(sorted(part))
    return found


def part_of(module: str) -> tuple[str, str] | None:
    """(room, part) of a module inside a room: `acp_agent.tools.files.read` → (tools, files/),
    `acp_agent.tools.base` → (tools, base.py); None for a top-level module or a room itself."""
    parts = module.split(".")
    if len(parts) < 3:
        return None
    return parts[1], parts[2] + ("/" if len(parts) > 3 else ".py")


def part_graphs(graph: Mapping[str, Iterable[str]]) -> dict[str, dict[str, set[str]]]:
    """Room → its parts → the parts of the same room they depend on."""
    rooms: dict[str, dict[str, set[str]]] = {}
    for module, targets in graph.items():
        here = part_of(module)
        if here is None:
            continue
        parts = rooms.setdefault(here[0], {}).setdefault(here[1], set())
        for target in targets:
            there = part_of(target)
            if there is not None and there[0] == here[0] and there[1] != here[1]:
                parts.add(there[1])
    return rooms


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


def test_every_room_and_top_level_module_has_its_rules() -> None:
    rooms = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    named = set(ALLOWED) | LEAVES | set(TOP)
    assert sorted((rooms | modules) - named) == []
    assert sorted(named - rooms - modules) == []


def test_the_leaves_import_no_room_and_no_top_module() -> None:
    problems = []
    for leaf in LEAVES:
        paths = (PACKAGE / leaf).rglob("*.py") if (PACKAGE / leaf).is_dir() else [PACKAGE / f"{leaf}.py"]
        for path in paths:
            for module in edges_of(path):
                target = room_of(module)
                if target is not None and target != leaf and target not in LEAVES:
                    problems.append(f"{path.relative_to(PACKAGE)} imports {module}")
    assert not problems, "a leaf that is no leaf:\n" + "\n".join(problems)


def test_the_top_modules_import_what_they_may_and_nothing_imports_them() -> None:
    problems = []
    for top, allowed in TOP.items():
        for module in edges_of(PACKAGE / f"{top}.py"):
            target = room_of(module)
            if target is not None and target != top and target not in LEAVES | allowed:
                problems.append(f"{top}.py imports {module}")
    for path in PACKAGE.rglob("*.py"):
        here = room_of(module_of(path))
        for module in edges_of(path):
            target = room_of(module)
            if target in TOP and target != here and here not in TOP:
                problems.append(f"{path.relative_to(PACKAGE)} imports the top module {module}")
    assert not problems, "\n".join(problems)


def test_the_circle_check_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert part_graphs({"acp_agent.t.x.a": {"acp_agent.t.y"}, "acp_agent.t.y": {"acp_agent.t.x.b"}}) == {
        "t": {"x/": {"y.py"}, "y.py": {"x/"}}
    }


def test_no_module_imports_itself_back() -> None:
    assert circles(module_graph()) == []


def test_the_parts_of_each_room_import_one_way() -> None:
    found = {room: c for room, parts in part_graphs(module_graph()).items() if (c := circles(parts))}
    assert found == {}


def test_anthropic_is_imported_only_inside_model_and_testing() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        room = path.relative_to(PACKAGE).parts[0]
        if room in {"model", "testing"}:
            continue
        if any(m == "anthropic" or m.startswith("anthropic.") for m in imports_of(path)):
            offenders.append(str(path.relative_to(PACKAGE)))
    assert not offenders
