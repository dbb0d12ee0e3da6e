"""The dataclasses' methods compiled once (`acp_agent/startup/dataclass_code.py`): a class made from the kept
code is the class `dataclasses` makes, a kept entry is never compiled again, and a file that is not
this interpreter's table is ignored, never trusted."""

from __future__ import annotations

import dataclasses
import marshal
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

import pytest

from acp_agent.startup import dataclass_code
from acp_agent.startup.dataclass_code import CodeCache

REPO_ROOT = Path(__file__).resolve().parents[2]

SHAPES = textwrap.dedent("""
    import dataclasses
    from dataclasses import InitVar, dataclass, field
    from typing import ClassVar

    @dataclass(frozen=True, slots=True)
    class Point:
        x: int
        y: int = 0
        tags: tuple[str, ...] = ()

    @dataclass(order=True, kw_only=True)
    class Job:
        name: str
        retries: int = 3
        seen: list[str] = field(default_factory=list)
        limit: ClassVar[int] = 9
        secret: str = field(default="", repr=False, compare=False)

    @dataclass(unsafe_hash=True)
    class Derived(Job):
        extra: float = 1.5
        scale: InitVar[int] = 2
        doubled: float = field(init=False, default=0.0)

        def __post_init__(self, scale: int) -> None:
            self.doubled = self.extra * scale
""")


@pytest.fixture(autouse=True)
def bytecode_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """The table is written as `.pyc` files are: not under `PYTHONDONTWRITEBYTECODE` (which the
    test process may run with)."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


METHODS = ("__init__", "__repr__", "__eq__", "__lt__", "__hash__", "__setattr__", "__delattr__")


def build(exec_function: Any) -> ModuleType:
    """The shapes' module, its dataclasses made with `exec_function` as `dataclasses`' exec."""
    module = ModuleType("shapes")
    previous = dataclasses.__dict__.get("exec")
    dataclasses.exec = exec_function  # type: ignore[attr-defined]
    sys.modules["shapes"] = module  # dataclasses reads a class's module for its string annotations
    try:
        exec(compile(SHAPES, "shapes.py", "exec", dont_inherit=True), module.__dict__)
    finally:
        del sys.modules["shapes"]
        if previous is None:
            del dataclasses.exec  # type: ignore[attr-defined]
        else:
            dataclasses.exec = previous  # type: ignore[attr-defined]
    return module


def signature_of(function: FunctionType) -> tuple[Any, ...]:
    code = function.__code__
    return (
        code.co_code,
        code.co_consts,
        code.co_names,
        code.co_varnames,
        code.co_flags,
        code.co_filename,
        repr(function.__annotations__),  # by repr: each build has its own `InitVar[int]`
        repr(function.__defaults__),
        repr(function.__kwdefaults__),
        function.__qualname__,
    )


def methods(module: ModuleType) -> dict[str, tuple[Any, ...]]:
    found = {}
    for class_name in ("Point", "Job", "Derived"):
        cls = getattr(module, class_name)
        for name in METHODS:
            function = cls.__dict__.get(name)
            if isinstance(function, FunctionType):
                found[f"{class_name}.{name}"] = signature_of(function)
    return found


def test_a_class_made_from_kept_code_is_the_class_dataclasses_makes(tmp_path: Path) -> None:
    plain = build(exec)
    path = str(tmp_path / "table.marshal")
    first = CodeCache(path)
    compiled = build(first.exec)
    assert first.added and first.save()
    kept = CodeCache(path)
    assert set(kept.known) == set(first.known)
    reused = build(kept.exec)

    expected = methods(plain)
    assert len(expected) >= 12
    assert methods(compiled) == expected
    assert methods(reused) == expected
    annotations = reused.Point.__init__.__annotations__
    # real types: a compile that inherited `dataclass_code.py`'s own `__future__` flags would have
    # made them strings ("_type_x")
    assert annotations == {"x": int, "y": int, "tags": tuple[str, ...], "return": None}

    point = reused.Point(1, tags=("a",))
    assert repr(point) == "Point(x=1, y=0, tags=('a',))" and point == reused.Point(1, 0, ("a",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2  # type: ignore[misc]
    assert hash(point) == hash(plain.Point(1, tags=("a",)))
    job = reused.Derived(name="b", extra=2.0, scale=3)
    assert job.doubled == 6.0 and "secret" not in repr(job)
    assert reused.Job(name="a") < reused.Job(name="b")


def test_kept_code_is_not_compiled_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "table.marshal")
    first = CodeCache(path)
    build(first.exec)
    first.save()
    compiled: list[str] = []
    real_compile = compile

    def counting(source: Any, *args: Any, **kwargs: Any) -> Any:
        compiled.append(source)
        return real_compile(source, *args, **kwargs)

    monkeypatch.setattr(dataclass_code, "compile", counting, raising=False)
    kept = CodeCache(path)
    build(kept.exec)
    assert compiled == [] and kept.added == {}
    assert kept.save() is False  # nothing new: the file is left as it is


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not a table at all",
        b"acp-dataclass-code\x00\x01\x00" + (sys.hexversion + 1).to_bytes(4, "little") + marshal.dumps({}),
        "header",  # this interpreter's header, then a damaged table
        "list",  # this interpreter's header, then something else than a table
    ],
)
def test_a_file_that_is_not_this_interpreters_table_is_ignored(tmp_path: Path, content: Any) -> None:
    path = tmp_path / "table.marshal"
    reference = CodeCache(str(tmp_path / "reference.marshal"))
    build(reference.exec)
    reference.save()
    header = Path(reference.path or "").read_bytes()[: len(dataclass_code._HEADER)]
    if content == "header":
        content = header + marshal.dumps({"def x(): pass": b"\xff\x00garbage"})[:-3]
    elif content == "list":
        content = header + marshal.dumps(["def f(): pass"])
    path.write_bytes(content)
    cache = CodeCache(str(path))
    assert cache.known == {}
    module = build(cache.exec)
    assert module.Point(3).x == 3
    assert cache.save() and CodeCache(str(path)).known.keys() == cache.known.keys() != set()


def test_an_entry_that_is_not_code_is_compiled_anew(tmp_path: Path) -> None:
    path = str(tmp_path / "table.marshal")
    first = CodeCache(path)
    build(first.exec)
    first.save()
    damaged = CodeCache(path)
    damaged.known = {source: marshal.dumps("not code") for source in damaged.known}
    assert build(damaged.exec).Point(5).x == 5
    assert set(damaged.added) == set(damaged.known)


def test_nothing_is_written_without_bytecode_writing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    cache = CodeCache(str(tmp_path / "table.marshal"))
    build(cache.exec)
    assert cache.added == {} and cache.save() is False  # nothing even kept in memory for it
    assert os.listdir(tmp_path) == []


def test_after_a_failed_write_nothing_more_is_kept(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x")
    cache = CodeCache(str(tmp_path / "a-file" / "table.marshal"))  # its folder cannot be made
    build(cache.exec)
    assert cache.added and cache.save() is False
    assert cache.added == {} and not cache.writable
    build(cache.exec)
    assert cache.added == {}


def test_past_the_cap_only_what_this_process_used_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "table.marshal")
    old = CodeCache(path)
    old.added = {
        f"def old_{n}(): pass": marshal.dumps(compile("pass", "<string>", "exec")) for n in range(20)
    }
    old.save()
    monkeypatch.setattr(dataclass_code, "MAX_ENTRIES", 10)
    cache = CodeCache(path)
    assert len(cache.known) == 20
    build(cache.exec)
    cache.save()
    assert set(CodeCache(path).known) == cache.used and not any(s.startswith("def old_") for s in cache.used)
    assert [name for name in os.listdir(tmp_path) if name.endswith(".tmp")] == []


def run_agent_help(env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, "-m", "acp_agent", "--help"],
        env=env,
        cwd=REPO_ROOT,
        check=True,
        capture_output=True,
        timeout=120,
    )


def test_a_run_of_the_agent_keeps_the_table_and_the_next_one_adds_nothing(tmp_path: Path) -> None:
    """Here a sub-command (`--help`, which builds the whole settings table) in fresh interpreters,
    with the bytecode written under a prefix of the test's own; serving saves it the same way, after
    the first answer and on leaving (`app.py`)."""
    prefix = tmp_path / "pycache"
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(prefix), "PYTHONDONTWRITEBYTECODE": ""}
    run_agent_help(env)
    tables = list(prefix.rglob("dataclass_code.*.marshal"))
    assert len(tables) == 1 and tables[0].parent.name == "startup"
    kept = CodeCache(str(tables[0]))
    assert len(kept.known) > 50  # the agent's own classes and its libraries'
    written = tables[0].stat().st_mtime_ns
    run_agent_help(env)
    assert tables[0].stat().st_mtime_ns == written  # every method came from the table: nothing to add

    tables[0].unlink()
    run_agent_help({**env, "PYTHONDONTWRITEBYTECODE": "1"})
    assert list(prefix.rglob("dataclass_code.*.marshal")) == []


def test_released_the_table_is_forgotten_and_a_later_save_adds_to_the_file(tmp_path: Path) -> None:
    path = str(tmp_path / "table.marshal")
    first = CodeCache(path)
    build(first.exec)
    first.save()
    written = set(first.known)

    cache = CodeCache(path)
    build(cache.exec)
    cache.release()
    assert cache.known == {} and cache.used == set()
    late = "from dataclasses import dataclass\n@dataclass\nclass LatePoint:\n    late_x: int\n"  # made later
    module = ModuleType("late")
    dataclasses.exec = cache.exec  # type: ignore[attr-defined]
    sys.modules["late"] = module
    try:
        exec(compile(late, "late.py", "exec", dont_inherit=True), module.__dict__)
    finally:
        del dataclasses.exec  # type: ignore[attr-defined]
        del sys.modules["late"]
    assert module.LatePoint(2).late_x == 2
    added = set(cache.added)
    assert added and not added & written  # what the file holds is compiled again, not added again
    assert cache.save()
    assert set(CodeCache(path).known) == written | added  # what the file held, and the new ones
    build(cache.exec)
    assert cache.added == {} and cache.save() is False  # all of it is on file: nothing to write
