"""Late names (`model/lean_sdk/late_names.py`): an SDK module's imports that only its functions read are
imported when first read, and every name means what a plain import makes it mean.

A small package in a temp dir shows the rules one by one; the installed `anthropic` is checked
against a plain import in fresh interpreters (the test process keeps its own plain import).
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_agent.model.lean_sdk import import_hook
from acp_agent.model.lean_sdk.late_names import LATE
from tests.support.fresh import fresh_answer

HEAVY = """
from __future__ import annotations
LOADED = True
class Heavy:
    pass
def helper():
    return "help"
def deco(function):
    return function
"""


SMALL = "from __future__ import annotations\nfrom .heavy import Heavy\ndef f():\n    return Heavy\n"


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


@pytest.fixture
def latepkg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """`latepkg`, imported through the hook; each test writes its modules first."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    root = tmp_path / "latepkg"
    write(root, {"__init__.py": "", "heavy.py": HEAVY, "other.py": HEAVY})
    hook = import_hook.install("latepkg")
    assert hook is not None
    try:
        yield root
    finally:
        import_hook.uninstall(hook)


def load(name: str) -> object:
    return __import__(f"latepkg.{name}", fromlist=["_"])


def test_a_name_only_a_function_reads_is_imported_when_the_function_runs(latepkg: Path) -> None:
    write(
        latepkg,
        {
            "user.py": """
        from __future__ import annotations
        from .heavy import Heavy, helper

        def make() -> Heavy:
            return Heavy()

        def call():
            return helper()
    """
        },
    )
    user = load("user")
    assert "latepkg.heavy" not in sys.modules
    assert user.__acp_late_names__ == ("Heavy", "helper")  # type: ignore[attr-defined]
    made = user.make()  # type: ignore[attr-defined]
    heavy = sys.modules["latepkg.heavy"]
    assert type(made) is heavy.Heavy
    assert user.call() == "help"  # type: ignore[attr-defined]
    assert user.Heavy is heavy.Heavy  # type: ignore[attr-defined]  # the module's own attribute too


def test_module_attributes_and_from_imports_elsewhere_resolve_a_late_name(latepkg: Path) -> None:
    write(
        latepkg,
        {
            "user.py": """
        from __future__ import annotations
        from .heavy import Heavy

        def make():
            return Heavy()
    """
        },
    )
    namespace: dict[str, object] = {}
    exec("from latepkg.user import Heavy", namespace)
    assert namespace["Heavy"] is sys.modules["latepkg.heavy"].Heavy
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        load("user").missing  # type: ignore[attr-defined]  # noqa: B018


FUTURE = "from __future__ import annotations\n"


@pytest.mark.parametrize(
    "body",
    [
        FUTURE + "INSTANCE = Heavy()",  # read at import time
        FUTURE + "class Model:\n    field: Heavy",  # a class annotation (pydantic, TypedDict read them)
        FUTURE + "class Sub(Heavy):\n    pass",  # a base
        FUTURE + "def f(x=Heavy):\n    return x",  # a default value
        FUTURE + "@deco\ndef f():\n    pass",  # a decorator
        FUTURE + "import functools\n@functools.singledispatch\ndef f(x: Heavy):\n    return x",  # may read it
        FUTURE + "def f():\n    Heavy = 1\n    return Heavy",  # bound again: a local
        FUTURE + "def f(Heavy):\n    return Heavy",  # a parameter
        FUTURE + "def f():\n    return globals()['Heavy']",  # the namespace as a whole
        FUTURE + "print(LOADED)\ndef f():\n    return Heavy",  # its module is loaded anyway
        # without postponed annotations, a function's are read when it is defined:
        "def outer():\n    def inner() -> Heavy:\n        pass\n    return inner\n",  # when outer runs
        "@deco\ndef f() -> Heavy:\n    pass\n",  # by a decorator that may read them
    ],
)
def test_a_name_that_may_be_read_at_import_time_stays_as_it_is(latepkg: Path, body: str) -> None:
    _, future, rest = body.rpartition(FUTURE)
    write(latepkg, {"user.py": future + "from .heavy import Heavy, LOADED, deco\n" + rest})
    user = load("user")
    assert "latepkg.heavy" in sys.modules
    assert "Heavy" in vars(user) and "Heavy" not in getattr(user, "__acp_late_names__", ())


def test_a_module_without_postponed_annotations_postpones_those_that_name_a_late_name(latepkg: Path) -> None:
    write(
        latepkg,
        {
            "user.py": """
                from .heavy import Heavy
                from .other import helper
                class Maker:
                    def make(self, count: int) -> Heavy:
                        return Heavy()
                def plain(x: int) -> int:
                    return helper() and x
            """
        },
    )
    user = load("user")
    assert "latepkg.heavy" not in sys.modules and "latepkg.other" not in sys.modules
    # the annotation naming the late name is the string `from __future__ import annotations` makes
    assert user.Maker.make.__annotations__ == {"count": int, "return": "Heavy"}  # type: ignore[attr-defined]
    assert user.plain.__annotations__ == {"x": int, "return": int}  # type: ignore[attr-defined]
    assert type(user.Maker().make(1)).__module__ == "latepkg.heavy"  # type: ignore[attr-defined]
    assert user.Heavy is sys.modules["latepkg.heavy"].Heavy  # type: ignore[attr-defined]


def test_a_type_alias_over_late_names_is_late_too(latepkg: Path) -> None:
    write(
        latepkg,
        {
            "user.py": """
        from __future__ import annotations
        from .heavy import Heavy
        from .other import Heavy as Other

        Either = Heavy | Other

        def check(x) -> bool:
            return isinstance(x, Either)
    """
        },
    )
    user = load("user")
    assert "latepkg.heavy" not in sys.modules and "latepkg.other" not in sys.modules
    assert user.check(1) is False  # type: ignore[attr-defined]
    heavy, other = sys.modules["latepkg.heavy"], sys.modules["latepkg.other"]
    assert user.check(other.Heavy()) is True  # type: ignore[attr-defined]
    assert user.Either == heavy.Heavy | other.Heavy  # type: ignore[attr-defined]


def test_nested_functions_defaults_and_classes_read_late_names_when_they_run(latepkg: Path) -> None:
    write(
        latepkg,
        {
            "user.py": """
        from __future__ import annotations
        from .heavy import Heavy, helper

        def outer():
            def inner(made=Heavy()):
                return made
            class Local(Heavy):
                pass
            squares = [helper() for _ in range(2)]
            return inner(), Local(), squares, (lambda: helper())()
    """
        },
    )
    user = load("user")
    assert "latepkg.heavy" not in sys.modules
    made, local, squares, called = user.outer()  # type: ignore[attr-defined]
    heavy = sys.modules["latepkg.heavy"].Heavy
    assert isinstance(made, heavy) and isinstance(local, heavy)
    assert squares == ["help", "help"] and called == "help"


def test_a_star_import_binds_the_late_names_too(latepkg: Path) -> None:
    write(
        latepkg,
        {
            "user.py": """
        from __future__ import annotations
        from .heavy import Heavy
        PUBLIC = 1
        _private = 2
        def make():
            return Heavy()
    """
        },
    )
    load("user")
    namespace: dict[str, object] = {}
    exec("from latepkg.user import *", namespace)
    assert {"Heavy", "PUBLIC", "make"} <= set(namespace) and "_private" not in namespace
    assert namespace["Heavy"] is sys.modules["latepkg.heavy"].Heavy


def test_the_rewrite_is_kept_beside_the_bytecode_and_redone_when_the_source_changes(latepkg: Path) -> None:
    write(
        latepkg,
        {"user.py": SMALL},
    )
    load("user")
    cached = list((latepkg / "__pycache__").glob("user.*.opt-acplate*.pyc"))
    assert len(cached) == 1
    del sys.modules["latepkg.user"]
    stat = cached[0].stat()
    load("user")  # from the cache: the file is not written again
    assert cached[0].stat().st_mtime_ns == stat.st_mtime_ns
    del sys.modules["latepkg.user"]
    source = latepkg / "user.py"
    source.write_text(source.read_text() + "def g():\n    return Heavy\n")
    os.utime(source, ns=(stat.st_mtime_ns + 10**9, stat.st_mtime_ns + 10**9))
    assert callable(load("user").g)  # type: ignore[attr-defined]


def test_without_bytecode_writing_modules_load_as_they_are(
    latepkg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    write(
        latepkg,
        {"user.py": SMALL},
    )
    user = load("user")
    assert "latepkg.heavy" in sys.modules and not hasattr(user, LATE)
    assert not list((latepkg / "__pycache__").glob("user.*.opt-acplate*.pyc"))


def run_fresh(code: str, stdin: str = "") -> dict[str, object]:
    # bytecode written (the rewrite is kept where it is), and sets printed in one order in both
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "", "PYTHONHASHSEED": "0"}
    answer: dict[str, object] = fresh_answer(code, stdin=stdin, env=env, timeout=300)
    return answer


DESCRIBE = """
    import importlib, json, pkgutil, sys, types
    import anthropic

    def describe(value):
        if isinstance(value, types.ModuleType):
            return "module " + value.__name__
        if isinstance(value, type) or callable(value) and hasattr(value, "__qualname__"):
            return f"{getattr(value, '__module__', '?')}.{value.__qualname__}"
        text = repr(value)
        return "an instance of " + describe(type(value)) if " at 0x" in text else text

    def every_module():
        for info in pkgutil.walk_packages(anthropic.__path__, "anthropic."):
            try:
                yield importlib.import_module(info.name)
            except ImportError:  # an optional dependency (boto3, google-auth, aiohttp) is not here
                continue
"""


@pytest.mark.slow
@pytest.mark.timeout(300)  # every SDK module, twice: ~20 s at load 8 on a fresh venv's first run
def test_every_late_name_of_the_installed_sdk_is_what_a_plain_import_binds() -> None:
    """Every module of the SDK, imported with late names, then every late name read: each must be
    what the same module's name is after a plain import (this fails when an SDK release has a
    module the rewrite gets wrong)."""
    late = run_fresh(
        "from acp_agent.model.lean_sdk import import_hook\nimport_hook.install('anthropic')\n"
        + textwrap.dedent(DESCRIBE)
        + textwrap.dedent("""
            values = {}
            for module in list(every_module()):
                for name in vars(module).get("__acp_late_names__", ()):  # a rewritten module's
                    try:
                        values[f"{module.__name__}:{name}"] = getattr(module, name)
                    except ImportError:  # from an optional dependency that is not here
                        continue
            getattr(anthropic, "__all__")  # the real `__init__`: it renames what it exports
            print(json.dumps({key: describe(value) for key, value in values.items()}))
        """)
    )
    plain = run_fresh(
        textwrap.dedent(DESCRIBE)
        + textwrap.dedent("""
            wanted = json.load(sys.stdin)
            names = {}
            for key in wanted:
                module, name = key.split(":")
                try:
                    names[key] = describe(getattr(importlib.import_module(module), name))
                except ImportError:  # a module a plain import cannot load here (an optional dependency)
                    continue
            print(json.dumps(names))
        """),
        json.dumps(sorted(late)),
    )
    assert len(plain) > 300  # the rewrite did happen (~1,000 late names in anthropic 2.12)
    assert "anthropic._base_client:make_status_error" in plain  # the first error's ~200 modules
    assert {key: (late[key], value) for key, value in plain.items() if late[key] != value} == {}
