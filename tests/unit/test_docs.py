"""The docs a maintainer reads cold stay true to the code.

- Every decision the code cites (`decisions D4`, `turn-semantics C2.7`, a bare `(C8)`) is defined in
  `docs/decisions.md`, as a heading `## D4.` or `### C2.7.`.
- Every hop of the prompt's route in `docs/architecture.md` names a file that exists and a function,
  class or `Class.method` defined in it; the main route has at most 15 hops, and its side routes (the
  permission round trip, the second prompt path) keep the hops they must name.
- Every package, sub-package and top-level module of `acp_agent/` has its line among the rooms.
- Every module path, folder and dotted module name the docs in `DOCS` name exists (a bare `name.py`
  in a room's line is that room's; elsewhere it must exist somewhere in the checkout).

Files are read by path and parsed with `ast`/`tokenize`; nothing of `acp_agent` is imported.
"""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "acp_agent"
DECISIONS = REPO / "docs" / "decisions.md"
ARCHITECTURE = REPO / "docs" / "architecture.md"

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
"""The docs whose module paths must exist: the README and every page of docs/."""
NOT_BUILT_YET: set[str] = set()
"""Rooms the map names as where a coming feature lands (issue 33); each must not exist yet."""

MAX_HOPS = 15
ROUTE_HEADING = "## The route of one prompt"
SIDE_ROUTES = {
    "The permission round trip": [
        "acp_agent/turn/tool_batch.py:ToolBatch._execute",
        "acp_agent/permissions/gate.py:PermissionGate.verdict",
        "acp_agent/permissions/engine.py:RuleEngine.decide",
        "acp_agent/session/editor/permissions.py:SessionPermissions.ask_about",
        "acp_agent/rpc/outgoing.py:Outgoing.request",
        "acp_agent/rpc/endpoint.py:Endpoint._dispatch",
        "acp_agent/rpc/outgoing.py:Outgoing.answered",
    ],
    "The second prompt path": [
        "acp_agent/session/acp/prompting.py:PromptTurns.prompt",
        "acp_agent/session/manager.py:SessionManager.engine",
        "acp_agent/session/machinery/engine.py:Engine.quiet_turn",
        "acp_agent/session/machinery/engine.py:Engine.run_command",
    ],
    "A subagent": [
        "acp_agent/turn/tool_batch.py:ToolBatch._execute",
        "acp_agent/turn/subagents/task.py:TaskTool.run_in_turn",
        "acp_agent/turn/meter.py:TurnMeter.child",
        "acp_agent/turn/runner.py:TurnRunner.run",
        "acp_agent/turn/subagents/progress.py:ChildProgress.emit",
        "acp_agent/session/subagents/sessions.py:SubagentSessions.open",
        "acp_agent/session/editor/relay.py:Relay.emit",
    ],
}
"""Side route (a `### ` heading inside the route section) → the hops it names, in order."""

CITATION = re.compile(r"\b[DC]\d+(?:\.\d+)?\b")
DEFINITION = re.compile(r"^#{2,4} ([DC]\d+(?:\.\d+)?)\. \S", re.MULTILINE)
HOP = re.compile(r"^\d+\. `(?P<path>[\w./-]+\.py):(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)` (?P<text>.*)")


# ── what the code cites ──────────────────────────────────────────────────────────────────────


def prose_of(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and every string statement (docstrings, attribute docs)."""
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            yield node.lineno, node.value.value
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def citations_in(source: str) -> set[tuple[int, str]]:
    return {(line, ref) for line, text in prose_of(source) for ref in CITATION.findall(text)}


def cited_by_package() -> dict[str, list[str]]:
    """Decision ID → the `file:line` places in acp_agent/ that cite it."""
    cited: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, ref in sorted(citations_in(path.read_text(encoding="utf-8"))):
            cited.setdefault(ref, []).append(f"{path.relative_to(REPO)}:{line}")
    return cited


def defined_ids(text: str) -> list[str]:
    return DEFINITION.findall(text)


def test_citations_are_found_in_comments_and_docstrings_only() -> None:
    source = (
        '"""Module doc (decisions D4)."""\n'
        'X = 1\n"""Attribute doc (C2.7)."""\n'
        'def f():\n    """Doc, turn-semantics C8."""\n'
        '    return "D99 in a plain string is no citation"  # comment cites D1)\n'
    )
    assert {ref for _, ref in citations_in(source)} == {"D4", "C2.7", "C8", "D1"}


def test_every_decision_id_is_defined_once() -> None:
    ids = defined_ids(DECISIONS.read_text(encoding="utf-8"))
    assert ids, f"no `## D<n>.` headings found in {DECISIONS.relative_to(REPO)}"
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert not duplicates, f"defined more than once: {duplicates}"


def test_every_decision_the_code_cites_is_defined() -> None:
    cited = cited_by_package()
    assert cited, "no citation found in acp_agent/: the scan is broken"
    defined = set(defined_ids(DECISIONS.read_text(encoding="utf-8")))
    missing = {ref: places for ref, places in cited.items() if ref not in defined}
    assert not missing, "cited but not defined in docs/decisions.md:\n" + "\n".join(
        f"  {ref}: {', '.join(places)}" for ref, places in sorted(missing.items())
    )


# ── the route ────────────────────────────────────────────────────────────────────────────────


def route_parts(text: str) -> dict[str, list[re.Match[str]]]:
    """The numbered `file:function` lines of the route section, by part: "" for the main route,
    then each `### ` side route under its title, in order."""
    start = text.index(ROUTE_HEADING)
    end = text.find("\n## ", start + len(ROUTE_HEADING))
    section = text[start:] if end == -1 else text[start:end]
    parts: dict[str, list[re.Match[str]]] = {"": []}
    part = ""
    for line in section.splitlines():
        if line.startswith("### "):
            part = line.removeprefix("### ").strip()
            parts[part] = []
        elif re.match(r"^\d+\. ", line):
            match = HOP.match(line)
            assert match is not None, f"a hop must start with `path/to/file.py:function`: {line!r}"
            parts[part].append(match)
    return parts


def route_hops(text: str) -> list[re.Match[str]]:
    """Every hop of the route section, the side routes' included."""
    return [hop for hops in route_parts(text).values() for hop in hops]


def defines(tree: ast.Module, dotted: str) -> bool:
    """Whether `dotted` (`func`, `Class`, `Class.method`) is defined at the top of `tree`."""
    body: list[ast.stmt] = tree.body
    for part in dotted.split("."):
        found = next(
            (
                node
                for node in body
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and node.name == part
            ),
            None,
        )
        if found is None:
            return False
        body = found.body if isinstance(found, ast.ClassDef) else []
    return True


def broken_hops(text: str) -> list[str]:
    problems = []
    for hop in route_hops(text):
        path, name = REPO / hop["path"], hop["name"]
        if not path.is_file():
            problems.append(f"{hop['path']}: no such file")
        elif not defines(ast.parse(path.read_text(encoding="utf-8")), name):
            problems.append(f"{hop['path']}:{name}: not defined there")
        elif not hop["text"].strip():
            problems.append(f"{hop['path']}:{name}: no sentence says what it does")
    return problems


def test_the_checker_catches_a_wrong_hop() -> None:
    text = (
        f"{ROUTE_HEADING}\n\n"
        "1. `acp_agent/app.py:serve` exists.\n"
        "2. `acp_agent/rpc/endpoint.py:Endpoint.no_such_method` does not.\n"
        "3. `acp_agent/no_such_file.py:serve` neither.\n\n## Next\n"
        "4. `acp_agent/no_such_file.py:outside` is past the section.\n"
    )
    assert broken_hops(text) == [
        "acp_agent/rpc/endpoint.py:Endpoint.no_such_method: not defined there",
        "acp_agent/no_such_file.py: no such file",
    ]


def test_every_hop_of_the_route_exists() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert route_hops(text), "no hops found under the route heading"
    problems = broken_hops(text)
    assert not problems, "\n".join(problems)


def test_the_route_has_at_most_15_hops() -> None:
    hops = route_parts(ARCHITECTURE.read_text(encoding="utf-8"))[""]
    assert 1 <= len(hops) <= MAX_HOPS, f"{len(hops)} hops"


def test_the_side_routes_name_their_hops_in_order() -> None:
    parts = route_parts(ARCHITECTURE.read_text(encoding="utf-8"))
    named = {title: [f"{h['path']}:{h['name']}" for h in parts.get(title, [])] for title in SIDE_ROUTES}
    assert named == SIDE_ROUTES


def test_side_routes_are_split_from_the_main_route() -> None:
    text = (
        f"{ROUTE_HEADING}\n\n1. `acp_agent/app.py:serve` main.\n\n### Aside\n\n"
        "1. `acp_agent/rpc/outgoing.py:Outgoing.request` side.\n\n## Next\n"
    )
    parts = route_parts(text)
    assert {title: [h["name"] for h in hops] for title, hops in parts.items()} == {
        "": ["serve"],
        "Aside": ["Outgoing.request"],
    }


# ── the rooms ────────────────────────────────────────────────────────────────────────────────


def test_every_package_and_top_level_module_is_described() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    rooms = [f"{p.parent.relative_to(PACKAGE).as_posix()}/" for p in PACKAGE.glob("*/*/__init__.py")]
    rooms += [f"{p.name}/" for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()]
    modules = [p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    missing = [name for name in rooms + modules if not re.search(rf"^\| `{re.escape(name)}`", text, re.M)]
    assert not missing, f"not among the rooms of docs/architecture.md: {missing}"


# ── the paths the docs name ──────────────────────────────────────────────────────────────────

ROOM_LINE = re.compile(r"^\| `(?P<room>[\w/]+/)`")
CODE = re.compile(r"`([^`\n]+)`")
PATH = re.compile(r"^(?P<path>(?:[\w.-]+/)*[\w.-]+(?:\.py|/))(?::[\w.]+)?$")
DOTTED = re.compile(r"^(acp_agent(?:\.\w+)+)$")
ROOMS = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
OTHER_TOP = {"acp_agent", "tests", "bench", "scripts", "examples", "docs", "schemas", "src", "baselines"}
ROOMS_OF_REPO = ("acp_agent", "tests", "bench", "scripts", "examples", "docs", "schemas")


@functools.cache
def _checkout() -> frozenset[str]:
    """Every file and folder of the checkout's own trees, as paths from its root."""
    found = {f"{top}/" for top in ROOMS_OF_REPO}
    for top in sorted(ROOMS_OF_REPO):
        for path in (REPO / top).rglob("*"):
            if "__pycache__" not in path.parts:
                found.add(path.relative_to(REPO).as_posix() + ("/" if path.is_dir() else ""))
    return frozenset(found)


def _exists(path: str, room: str | None) -> bool:
    """Whether `path` (as a doc writes it) names a file or folder of the checkout; `room` is the
    folder whose line of the rooms' tables it stands in, if any."""
    if path.startswith("acp_agent/"):
        return path in _checkout()
    if room is not None and "/" not in path:  # a bare name in a room's line is that room's
        return (PACKAGE / room / path).is_file()
    if room is not None and f"acp_agent/{room}/{path}" in _checkout():
        return True
    # inside the package (`tools/shell/`), or anywhere else in the checkout (`baselines/relay.py`)
    return any(p == path or p.endswith(f"/{path}") for p in _checkout())


def _is_module(dotted: str) -> bool:
    """`acp_agent.x.y` names a module or package, or a name in one (`acp_agent.api.run_turn`,
    `acp_agent.testing.FakeMessagesAPI`: a name its `__init__` hands on)."""
    parts = dotted.split(".")
    for end in range(len(parts), 1, -1):
        base = REPO.joinpath(*parts[:end])
        init = base / "__init__.py"
        module = init if init.is_file() else base.with_suffix(".py")
        if module.is_file():
            if end == len(parts):
                return True
            source = module.read_text(encoding="utf-8")
            return end == len(parts) - 1 and re.search(rf"\b{parts[-1]}\b", source) is not None
    return False


def missing_paths(text: str) -> list[str]:
    """Every module path, folder and dotted module name in `text` that does not exist."""
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        room_line = ROOM_LINE.match(line)
        room = room_line["room"].removesuffix("/") if room_line else None
        for code in CODE.findall(line):
            code = code.strip()
            if (dotted := DOTTED.match(code)) is not None:
                if not _is_module(dotted[1]):
                    problems.append(f"{number}: {code}")
                continue
            match = PATH.match(code)
            if match is None or "*" in code:
                continue
            path = match["path"]
            top = path.split("/", 1)[0]
            if path.endswith("/") and top not in ROOMS | OTHER_TOP and room is None:
                continue  # a folder of something else (`.claude/`, `commands/` in a user's repo)
            if path in NOT_BUILT_YET:
                continue
            if not _exists(path, room):
                problems.append(f"{number}: {code}")
    return problems


def test_the_path_check_catches_what_is_gone() -> None:
    text = (
        "| `tools/` | `base.py` and `no_such.py` |\n"
        "See `acp_agent/turn/driver.py:drive_turn`, `session/gone.py`, `turn/context/`, `turn/nothing/`,\n"
        "`acp_agent.turn.driver`, `acp_agent.api.run_turn`, `acp_agent.turn.gone`, `x = 1`.\n"
    )
    assert missing_paths(text) == [
        "1: no_such.py",
        "2: session/gone.py",
        "2: turn/nothing/",
        "3: acp_agent.turn.gone",
    ]


def test_every_path_the_docs_name_exists() -> None:
    problems = {
        str(doc.relative_to(REPO)): found
        for doc in DOCS
        if (found := missing_paths(doc.read_text(encoding="utf-8")))
    }
    assert problems == {}


def test_the_rooms_not_built_yet_are_not_built() -> None:
    assert [room for room in NOT_BUILT_YET if (PACKAGE / room).exists()] == []
