"""The SDK is imported for what the agent uses (`model/lean_sdk/import_hook.py`), and each name means what it
means after a plain import.

A small package in a temp dir shows the rules one by one; the installed `anthropic` is checked in a
fresh interpreter (the test process keeps its own plain import of the SDK).
"""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_agent.model.lean_sdk import import_hook
from acp_agent.model.lean_sdk.import_hook import LazyReexports, cached_reexports, reexports
from tests.support.fresh import fresh_answer


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_reexports_are_the_relative_imports_no_other_statement_may_rebind(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "__init__.py": """
                import typing as _t
                from . import sub
                from .a import A, B as Bee
                from .b import C, D
                from .b import *
                from ..up import Far
                from .c import E
                D = 1
                def E(): pass
                if not _t.TYPE_CHECKING:
                    from .c import F
            """,
            "b.py": "__all__ = ['C']\nC = 1\n",
        },
    )
    assert reexports(tmp_path / "__init__.py") == {
        "sub": ("sub", None),
        "A": ("a", "A"),
        "Bee": ("a", "B"),
    }  # C: the star import exports it; D, E: rebound; Far: not relative; F: inside an `if`


def test_a_star_import_whose_names_are_unknown_drops_everything_before_it(tmp_path: Path) -> None:
    write(tmp_path, {"__init__.py": "from .a import A\nfrom .gone import *\nfrom .b import B\n"})
    assert reexports(tmp_path / "__init__.py") == {"B": ("b", "B")}


def test_the_table_is_kept_beside_the_bytecode_until_a_source_it_read_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    write(
        tmp_path, {"__init__.py": "from .a import A\nfrom .b import *\n", "b.py": "__all__ = ['B']\nB = 1\n"}
    )
    init = tmp_path / "__init__.py"
    assert cached_reexports(init) == {"A": ("a", "A")}
    kept = list((tmp_path / "__pycache__").glob("__init__.*.opt-acpreexports*.pyc"))
    assert len(kept) == 1
    parsed: list[Path] = []
    monkeypatch.setattr(import_hook, "reexports", lambda path, read=None: parsed.append(path) or {})
    assert cached_reexports(init) == {"A": ("a", "A")} and parsed == []  # from the kept table

    os.utime(tmp_path / "b.py", ns=(1, 1))  # a star-imported module changed: read again
    assert cached_reexports(init) == {} and parsed == [init]
    monkeypatch.undo()
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    write(tmp_path, {"__init__.py": "from .a import A\nfrom .c import C\n"})  # the `__init__` changed
    assert cached_reexports(init) == {"A": ("a", "A"), "C": ("c", "C")}


def test_a_damaged_kept_table_is_worked_out_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    write(tmp_path, {"__init__.py": "from .a import A\n"})
    init = tmp_path / "__init__.py"
    cached_reexports(init)
    (kept,) = (tmp_path / "__pycache__").glob("__init__.*.opt-acpreexports*.pyc")
    kept.write_bytes(kept.read_bytes()[:-4])
    assert cached_reexports(init) == {"A": ("a", "A")}


@pytest.fixture
def lazy_pkg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LazyReexports]:
    """`lazypkg`: an `__init__` that re-exports from two submodules and also does work of its own."""
    write(
        tmp_path / "lazypkg",
        {
            "__init__.py": """
                from .light import Light
                from .heavy import Heavy
                from . import extra
                INIT_RAN = True
                __all__ = ["Light", "Heavy", "INIT_RAN"]
            """,
            "light.py": "class Light: pass\n",
            "heavy.py": "class Heavy: pass\n",
            "extra.py": "VALUE = 1\n",
            "unlisted.py": "VALUE = 2\n",
        },
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    hook = import_hook.install("lazypkg")
    assert hook is not None
    try:
        yield hook
    finally:
        import_hook.uninstall(hook)


def test_a_name_is_imported_from_its_submodule_when_first_asked_for(lazy_pkg: LazyReexports) -> None:
    import lazypkg

    assert "lazypkg.heavy" not in sys.modules and "lazypkg.light" not in sys.modules
    light = lazypkg.Light
    assert light is sys.modules["lazypkg.light"].Light
    assert "lazypkg.heavy" not in sys.modules  # only what was asked for
    assert lazypkg.extra.VALUE == 1  # `from . import extra`
    assert lazypkg.unlisted.VALUE == 2  # any submodule, as `from lazypkg import unlisted` would
    assert lazy_pkg.full_inits == []


def test_anything_else_runs_the_real_init_once(lazy_pkg: LazyReexports) -> None:
    import lazypkg

    light = lazypkg.Light
    assert lazypkg.INIT_RAN is True  # bound by the `__init__` itself
    assert lazy_pkg.full_inits == ["lazypkg"]
    assert lazypkg.Light is light and lazypkg.Heavy is sys.modules["lazypkg.heavy"].Heavy
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        lazypkg.missing  # noqa: B018
    assert lazy_pkg.full_inits == ["lazypkg"]


def test_a_star_import_and_from_import_see_every_name(lazy_pkg: LazyReexports) -> None:
    namespace: dict[str, object] = {}
    exec("from lazypkg import Heavy, extra", namespace)
    assert lazy_pkg.full_inits == []
    exec("from lazypkg import *", namespace)  # needs __all__: the real `__init__` runs
    assert {"Light", "Heavy", "INIT_RAN"} <= set(namespace)
    assert lazy_pkg.full_inits == ["lazypkg"]


def test_a_package_imported_already_keeps_its_plain_import() -> None:
    assert "json" in sys.modules
    assert import_hook.install("json") is None


def test_the_agent_loads_the_sdk_without_the_beta_api_and_the_platform_clients() -> None:
    answer = fresh_answer("""
        import json, sys
        from acp_agent.model.sdk import anthropic_sdk
        anthropic = anthropic_sdk.now()
        hook = next(f for f in sys.meta_path if type(f).__name__ == "LazyReexports")
        print(json.dumps({
            "full_inits": hook.full_inits,
            "modules": len([m for m in sys.modules if m.startswith("anthropic")]),
            "beta_api": "anthropic.resources.beta" in sys.modules,
            "vertex": "anthropic.lib.vertex" in sys.modules,
            "client": anthropic.AsyncAnthropic.__name__,
            "message": anthropic.types.Message.__module__,
        }))
    """)
    assert answer["full_inits"] == []
    assert answer["beta_api"] is False and answer["vertex"] is False
    assert answer["client"] == "AsyncAnthropic" and answer["message"] == "anthropic.types.message"
    assert isinstance(answer["modules"], int) and answer["modules"] < 1500  # a plain import: ~2,900


def test_every_lazy_name_of_the_installed_sdk_is_what_its_init_binds() -> None:
    """Resolve each re-export lazily, then run every real `__init__`: the objects must be the same
    (this fails when an SDK release re-exports a name in a way the table gets wrong)."""
    answer = fresh_answer("""
        import importlib, json, sys, types
        from acp_agent.model.lean_sdk import import_hook
        hook = import_hook.install("anthropic")
        import anthropic
        packages, seen, resolved, missing = ["anthropic"], set(), {}, set()
        while packages:
            name = packages.pop()
            if name in seen:
                continue
            seen.add(name)
            module = importlib.import_module(name)
            for attr in getattr(module.__spec__.loader, "table", {}):
                try:
                    value = getattr(module, attr)
                except ImportError:  # an optional dependency (aiohttp, google-auth) is not here
                    missing.add(name)
                    continue
                resolved[(name, attr)] = value
                if isinstance(value, types.ModuleType) and hasattr(value, "__path__"):
                    packages.append(value.__name__)
            packages += [n for n in list(sys.modules) if n.startswith(name + ".") and n not in seen
                         and hasattr(sys.modules[n], "__path__")]
        inits_before = list(hook.full_inits)
        for name in sorted(seen - missing):
            getattr(sys.modules[name], "__all__", None)  # not re-exported: runs the real __init__
        wrong = [f"{p}.{a}" for (p, a), v in resolved.items()
                 if p not in missing and getattr(sys.modules[p], a) is not v]
        print(json.dumps({"names": len(resolved), "packages": len(seen), "wrong": wrong,
                          "inits_before": inits_before, "missing": sorted(missing)}))
    """)
    assert answer["wrong"] == []
    assert isinstance(answer["names"], int) and answer["names"] > 1000
    assert answer["inits_before"] == []  # importing all of it needs no `__init__` run


def test_a_failed_lean_import_falls_back_to_a_plain_one() -> None:
    answer = fresh_answer("""
        import json, sys
        from acp_agent.model.lean_sdk import import_hook

        real = import_hook.LazyReexports.find_spec
        def broken(self, fullname, path, target=None):
            if fullname == "anthropic.resources.messages":
                raise ImportError("broken on purpose")
            return real(self, fullname, path, target)
        import_hook.LazyReexports.find_spec = broken

        from acp_agent.model.sdk import anthropic_sdk
        anthropic = anthropic_sdk.now()
        print(json.dumps({
            "hooks": [type(f).__name__ for f in sys.meta_path if type(f).__name__ == "LazyReexports"],
            "whole": "anthropic.lib.vertex" in sys.modules,
            "client": anthropic.AsyncAnthropic.__name__,
        }))
    """)
    assert answer == {"hooks": [], "whole": True, "client": "AsyncAnthropic"}
