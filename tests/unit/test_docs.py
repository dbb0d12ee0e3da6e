"""The docs a maintainer reads cold stay true to the code.

- Every decision the code cites (`decisions D4`, `turn-semantics C2.7`, a bare `(C8)`) is defined in
  `docs/decisions.md`, as a heading `## D4.` or `### C2.7.`.
- Every hop of the prompt's route in `docs/architecture.md` names a file that exists and a function,
  class or `Class.method` defined in it; the main route has at most 15 hops, of which at most three,
  between the endpoint and the driver, are marked as hand-offs (numbered 1, 2, 3 in order); its side
  routes (the permission round trip, the second prompt path, a subagent, a `/rewind`) keep the hops
  they must name.
- Every folder of `acp_agent/` holds at most 15 modules besides its `__init__.py`, unless it is
  listed, with the reason, in `OVER_FULL`.
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
        "acp_agent/session/acp/prompting.py:PromptTurns.run",
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
    "A `/rewind`": [
        "acp_agent/session/acp/prompting.py:PromptTurns.prompt",
        "acp_agent/session/acp/prompting.py:PromptTurns.run",
        "acp_agent/session/machinery/engine.py:Engine.run_command",
        "acp_agent/session/commands/command_answers.py:command_answer",
        "acp_agent/session/commands/rewinding.py:Rewinds.command",
        "acp_agent/session/commands/rewinding.py:Rewinds.rewind",
        "acp_agent/journal/rewind.py:plan_rewind",
        "acp_agent/journal/checkpoints.py:Checkpoints.content",
        "acp_agent/session/commands/rewinding.py:Rewinds._decided",
        "acp_agent/permissions/gate.py:PermissionGate.classified",
        "acp_agent/permissions/engine.py:RuleEngine.decide",
        "acp_agent/permissions/gate.py:PermissionGate.confirm",
        "acp_agent/session/editor/permissions.py:SessionPermissions.confirm",
        "acp_agent/journal/rewind.py:apply_rewind",
        "acp_agent/journal/rewind.py:_restore",
        "acp_agent/journal/file_images.py:Reached.put",
    ],
}
"""Side route (a `### ` heading inside the route section) → the hops it names, in order."""
MAX_HAND_OFFS = 3
HANDED_FROM = "acp_agent/rpc/endpoint.py:Endpoint._dispatch"
HANDED_TO = "acp_agent/turn/driver.py:drive_turn"
"""The main route's hand-offs (hops marked `(hand-off N)`) lie after the first, up to the second."""
MAX_MODULES = 15
OVER_FULL = {"acp_agent/model": "not split yet"}
"""Folders of `acp_agent/` allowed more than `MAX_MODULES` modules, each with the reason."""

CITATION = re.compile(r"\b[DC]\d+(?:\.\d+)?\b")
DEFINITION = re.compile(r"^#{2,4} ([DC]\d+(?:\.\d+)?)\. \S", re.MULTILINE)
HAND_OFF = re.compile(r"\(hand-off (\d+)\)")
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


def main_route_text(text: str) -> str:
    """The route section up to its first side route."""
    start = text.index(ROUTE_HEADING)
    ends = [i for i in (text.find("\n## ", start + 1), text.find("\n### ", start)) if i != -1]
    return text[start : min(ends)] if ends else text[start:]


def hand_off_problems(text: str) -> list[str]:
    """What is wrong with the main route's hand-off marks: each on a hop's first line, after
    `HANDED_FROM` and up to `HANDED_TO`, numbered 1, 2, ... in order, at most `MAX_HAND_OFFS`."""
    hops = route_parts(text)[""]
    names = [f"{hop['path']}:{hop['name']}" for hop in hops]
    if HANDED_FROM not in names or HANDED_TO not in names:
        return [f"the main route must name {HANDED_FROM} and {HANDED_TO}"]
    start, end = names.index(HANDED_FROM), names.index(HANDED_TO)
    problems = [] if start < end else [f"{HANDED_TO} comes before {HANDED_FROM}"]
    marked = [(at, int(number)) for at, hop in enumerate(hops) for number in HAND_OFF.findall(hop["text"])]
    if len(marked) != len(HAND_OFF.findall(main_route_text(text))):
        problems.append("a hand-off mark stands elsewhere than on a hop's first line")
    outside = [(at, n) for at, n in marked if not start < at <= end]
    problems += [f"{names[at]}: hand-off {n} outside the stretch" for at, n in outside]
    numbers = [n for _, n in marked]
    if numbers != list(range(1, len(numbers) + 1)):
        problems.append(f"hand-offs numbered {numbers}, not 1, 2, ... in order")
    if len(numbers) > MAX_HAND_OFFS:
        problems.append(f"{len(numbers)} hand-offs, more than {MAX_HAND_OFFS}")
    return problems


def test_the_route_hands_the_prompt_on_at_most_three_times() -> None:
    assert hand_off_problems(ARCHITECTURE.read_text(encoding="utf-8")) == []


def test_the_hand_off_check_catches_too_many_and_out_of_order() -> None:
    def route(*marks: str) -> str:
        hops = [
            "acp_agent/app.py:serve",
            HANDED_FROM,
            "acp_agent/session/acp/front.py:FrontHandler.handle_request",
            "acp_agent/session/acp/prompting.py:PromptTurns.prompt",
            "acp_agent/session/machinery/engine.py:Engine.start",
            HANDED_TO,
            "acp_agent/turn/runner.py:TurnRunner._loop",
        ]
        lines = [
            f"{i}. `{hop}` {mark}does it." for i, (hop, mark) in enumerate(zip(hops, marks, strict=True), 1)
        ]
        return f"{ROUTE_HEADING}\n\n" + "\n".join(lines) + "\n\n## Next\n"

    ok = route("", "", "(hand-off 1) ", "(hand-off 2) ", "", "(hand-off 3) ", "")
    assert hand_off_problems(ok) == []
    four = route("", "", "(hand-off 1) ", "(hand-off 2) ", "(hand-off 3) ", "(hand-off 4) ", "")
    assert hand_off_problems(four) == ["4 hand-offs, more than 3"]
    swapped = route("", "", "(hand-off 2) ", "(hand-off 1) ", "", "", "")
    assert hand_off_problems(swapped) == ["hand-offs numbered [2, 1], not 1, 2, ... in order"]
    outside = route("(hand-off 1) ", "", "", "", "", "", "(hand-off 2) ")
    assert hand_off_problems(outside) == [
        "acp_agent/app.py:serve: hand-off 1 outside the stretch",
        "acp_agent/turn/runner.py:TurnRunner._loop: hand-off 2 outside the stretch",
    ]
    wrapped = ok.replace("does it.\n7.", "does it\n   (hand-off 4) too.\n7.")
    assert hand_off_problems(wrapped) == ["a hand-off mark stands elsewhere than on a hop's first line"]


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


# ── the size of a folder ─────────────────────────────────────────────────────────────────────


def modules_by_folder(root: Path) -> dict[str, int]:
    """Every folder of `root` (itself included) → its modules besides `__init__.py`, by path from
    `root`'s parent (`acp_agent/model`)."""
    folders = [root, *(p for p in root.rglob("*") if p.is_dir() and p.name != "__pycache__")]
    return {
        folder.relative_to(root.parent).as_posix(): len(
            [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        )
        for folder in folders
    }


def over_full(counts: dict[str, int], allowed: dict[str, str]) -> list[str]:
    """The folders over `MAX_MODULES` not in `allowed`, and those `allowed` without a reason or
    no longer over (so the list stays true)."""
    problems = [
        f"{folder}: {n} modules, more than {MAX_MODULES}"
        for folder, n in sorted(counts.items())
        if n > MAX_MODULES and folder not in allowed
    ]
    for folder, reason in sorted(allowed.items()):
        if not reason.strip():
            problems.append(f"{folder}: listed without a reason")
        if counts.get(folder, 0) <= MAX_MODULES:
            problems.append(f"{folder}: listed, but holds {counts.get(folder, 0)} modules")
    return problems


def test_every_folder_holds_at_most_15_modules() -> None:
    counts = modules_by_folder(PACKAGE)
    assert counts["acp_agent/turn"] > 0, "the count is broken"
    assert over_full(counts, OVER_FULL) == []


def test_the_folder_check_catches_a_full_folder(tmp_path: Path) -> None:
    room = tmp_path / "acp_agent" / "room"
    (room / "inner").mkdir(parents=True)
    for i in range(MAX_MODULES + 1):
        (room / f"m{i}.py").touch()
    (room / "__init__.py").touch()
    (room / "inner" / "only.py").touch()
    (tmp_path / "acp_agent" / "__init__.py").touch()
    counts = modules_by_folder(tmp_path / "acp_agent")
    assert counts == {"acp_agent": 0, "acp_agent/room": 16, "acp_agent/room/inner": 1}
    assert over_full(counts, {}) == ["acp_agent/room: 16 modules, more than 15"]
    assert over_full(counts, {"acp_agent/room": "not split yet"}) == []
    assert over_full(counts, {"acp_agent/room": " ", "acp_agent/room/inner": "big"}) == [
        "acp_agent/room: listed without a reason",
        "acp_agent/room/inner: listed, but holds 1 modules",
    ]


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


FACES = {"acp_agent/testing/__init__.py": "the fake's public face (D8): its README usage imports it"}
"""`__init__.py` files allowed to import (besides `from __future__`), each with the reason."""


def init_imports(root: Path) -> dict[str, list[str]]:
    """Every `__init__.py` under `root` → what it imports (`from __future__` aside), by path from
    `root`'s parent."""
    found: dict[str, list[str]] = {}
    for init in sorted(root.rglob("__init__.py")):
        names = [
            node.module if isinstance(node, ast.ImportFrom) else ", ".join(a.name for a in node.names)
            for node in ast.parse(init.read_text(encoding="utf-8")).body
            if isinstance(node, ast.Import | ast.ImportFrom)
            and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")
        ]
        if names:
            found[str(init.relative_to(root.parent))] = [str(n) for n in names]
    return found


def test_every_init_but_the_faces_imports_nothing() -> None:
    """The map's claim: a folder's `__init__.py` says what lives there and imports nothing, so
    importing one module of a package loads no other (start-up stays lazy)."""
    assert {k: v for k, v in init_imports(PACKAGE).items() if k not in FACES} == {}
    assert set(FACES) <= set(init_imports(PACKAGE)), "a face that imports nothing needs no place here"


def test_the_init_check_catches_an_import(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text('"""Doc."""\n\nfrom __future__ import annotations\n')
    (package / "sub" / "__init__.py").write_text('"""Doc."""\n\nfrom pkg.sub.x import y\nimport os\n')
    assert init_imports(package) == {"pkg/sub/__init__.py": ["pkg.sub.x", "os"]}
