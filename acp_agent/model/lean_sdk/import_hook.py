"""Import the `anthropic` SDK for what the agent uses, not for everything it ships.

A plain `import anthropic` runs the SDK's package `__init__` files, and they import every type and
every resource of every API it covers (beta, platform clients, organizations): ~2,900 modules,
~0.9 s of CPU and ~25 MB here, before the first request can be built. A Messages request needs
about a third of them. `LazyReexports` is an import hook for one package tree. It reads each
package `__init__` instead of running it, and notes its relative re-exports (`from .sub import
Name`). A name is then imported from its submodule when first asked for (`anthropic.AsyncAnthropic`,
`anthropic.types.Message`). A submodule is imported as usual. Anything else asked of a package (a
name bound another way, `__all__`, a star import) runs the package's real `__init__` once, so every
name means what it means after a plain import, only later.

The same hook loads the tree's plain modules with late names (`late_names.py`): what a module
imports only for its functions is imported when one of them first reads it. The client's core no
longer brings in the beta API's types, every error class or the batches: a first request loads
~200 SDK modules instead of ~1,000.

What differs from a plain import: the SDK's top-level `__init__` renames the `__module__` of what it
exports to "anthropic" (for shorter reprs), and it sets up the SDK's logger from `ANTHROPIC_LOG`.
The first happens only if the real `__init__` runs; `import_sdk` does the second itself.
"""

from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.machinery
import marshal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["LazyReexports", "cached_reexports", "reexports"]

Reexports = dict[str, tuple[str, str | None]]
"""Name → (submodule relative to the package, attribute of it; None: the submodule itself)."""


REEXPORTS_VERSION = 1
"""Bumped when `reexports` changes: the tables kept by an older one are then ignored."""


def cached_reexports(init_file: Path) -> Reexports:
    """`reexports`, kept beside the package's bytecode (`side_cache.py`) until the `__init__`
    or a module it star-imports changes: parsing `anthropic/types/__init__.py` is ~18 ms of CPU."""
    from acp_agent.model.lean_sdk.side_cache import SideFile, loads, stamp

    side = SideFile(str(init_file), f"acpreexports{REEXPORTS_VERSION}")
    header = stamp(REEXPORTS_VERSION, [str(init_file)])
    kept = side.read(header) if header is not None else None
    if kept is not None:
        try:
            found = _kept_table(loads(kept))
        except ValueError:
            found = None
        if found is not None and stamp(REEXPORTS_VERSION, found[0]) == found[1]:
            return found[2]
    read: list[str] = []
    table = reexports(init_file, read)
    if header is not None:
        sources = tuple(read)
        side.write(header, marshal.dumps((sources, stamp(REEXPORTS_VERSION, sources), table)))
    return table


def _kept_table(value: object) -> tuple[list[str], bytes | None, Reexports] | None:
    """(the other sources read, their stamp, the table) of a kept value; None unless well-formed."""
    if not (isinstance(value, tuple) and len(value) == 3):
        return None
    sources, stamps, table = value
    if not (isinstance(sources, tuple) and all(isinstance(s, str) for s in sources)):
        return None
    if not (stamps is None or isinstance(stamps, bytes)) or not isinstance(table, dict):
        return None
    checked: Reexports = {}
    for name, target in table.items():
        if not (isinstance(name, str) and isinstance(target, tuple) and len(target) == 2):
            return None
        submodule, attribute = target
        if not (isinstance(submodule, str) and (attribute is None or isinstance(attribute, str))):
            return None
        checked[name] = (submodule, attribute)
    return list(sources), stamps, checked


def reexports(init_file: Path, read: list[str] | None = None) -> Reexports:
    """The names a package `__init__` binds by a plain relative re-export, and where each comes from.

    A name that any other top-level statement may bind (an assignment, a def, an absolute import, a
    star import that may export it) is left out: asking for it runs the real `__init__`. `read`
    gets the other source files the answer depends on (the modules it star-imports).
    """
    tree = ast.parse(init_file.read_bytes(), str(init_file))
    table: Reexports = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.names[0].name != "*":
            for alias in node.names:
                name = alias.asname or alias.name
                table[name] = (node.module, alias.name) if node.module else (alias.name, None)
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 1:  # from .sub import *
            exported = _star_names(init_file.parent, node.module, read=read)
            if exported is None:
                table.clear()  # it may rebind anything bound so far
            else:
                for name in exported:
                    table.pop(name, None)
            continue
        for name in _bound_names(node):
            table.pop(name, None)
    return table


def _bound_names(node: ast.stmt) -> set[str]:
    """Every name a top-level statement may bind (generously: nested scopes count too)."""
    names: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            names.add(child.id)
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(child.name)
        elif isinstance(child, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in child.names)
    return names


def _star_names(
    package_dir: Path, module: str | None, depth: int = 0, read: list[str] | None = None
) -> set[str] | None:
    """The names `from .module import *` binds, read from the module's source; None: unknown."""
    if module is None or depth > 3:
        return None
    base = package_dir.joinpath(*module.split("."))
    source = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    if read is not None:
        read.append(str(source))
    try:
        tree = ast.parse(source.read_bytes(), str(source))
    except (OSError, SyntaxError, ValueError):
        return None
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets):
            try:
                return {str(name) for name in ast.literal_eval(node.value)}
            except ValueError:
                return None
        if isinstance(node, ast.ImportFrom) and node.names[0].name == "*":
            inner = _star_names(source.parent, node.module, depth + 1, read) if node.level == 1 else None
            if inner is None:
                return None
            names |= inner
        else:
            names |= _bound_names(node)
    return {name for name in names if not name.startswith("_")}


class LazyReexports(importlib.abc.MetaPathFinder):
    """An import hook (`sys.meta_path`) that loads the packages of one tree with lazy re-exports.

    Only packages whose `__init__` is a source file are changed, and only when it re-exports
    something; plain modules load as usual.
    """

    def __init__(self, package: str, *, late_names: bool = True) -> None:
        self.package = package
        self.late_names = late_names
        """Load its plain modules with their late names (`late_names.py`)."""
        self.full_inits: list[str] = []
        """The packages whose real `__init__` ran, in order (each once)."""

    def covers(self, name: str) -> bool:
        return name == self.package or name.startswith(self.package + ".")

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not self.covers(fullname):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        origin = Path(spec.origin) if spec is not None and spec.origin else None
        if spec is None or spec.loader is None or origin is None:
            return spec
        if origin.name != "__init__.py":
            if self.late_names and isinstance(spec.loader, importlib.machinery.SourceFileLoader):
                from acp_agent.model.lean_sdk.late_names import LateNamesLoader  # not at the handshake

                spec.loader = LateNamesLoader(fullname, str(origin))
            return spec
        try:
            table = cached_reexports(origin)
        except (OSError, SyntaxError, ValueError):
            return spec
        if table:
            spec.loader = _LazyInit(spec.loader, table, self.full_inits)
        return spec


class _LazyInit(importlib.abc.Loader):
    """Runs a package's `__init__` only when something it binds is asked for (see the module doc)."""

    def __init__(self, real: importlib.abc.Loader, table: Reexports, full_inits: list[str]) -> None:
        self.real = real
        self.table = table
        self._full_inits = full_inits
        self._lock = threading.RLock()

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, get_code, …: the real loader's
        return getattr(self.real, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.real.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        package = module.__name__
        table = self.table

        def __getattr__(name: str) -> Any:
            target = table.get(name)
            if target is not None:
                submodule, attribute = target
                source = importlib.import_module(f"{package}.{submodule}")
                value = source if attribute is None else getattr(source, attribute)
                return module.__dict__.setdefault(name, value)
            if not name.startswith("__") and _has_submodule(module, name):
                return importlib.import_module(f"{package}.{name}")
            self._run_init(module, __getattr__)
            try:
                return module.__dict__[name]
            except KeyError:
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None

        module.__getattr__ = __getattr__  # type: ignore[method-assign]

    def _run_init(self, module: ModuleType, hook: Any) -> None:
        """The package's real `__init__`, once; afterwards the module is as a plain import left it.

        The hook stays in place while it runs, so another thread asking meanwhile waits here."""
        with self._lock:
            if module.__name__ in self._full_inits:
                return
            self._full_inits.append(module.__name__)
            self.real.exec_module(module)
            if module.__dict__.get("__getattr__") is hook:  # not one the `__init__` defined
                del module.__dict__["__getattr__"]


def _has_submodule(module: ModuleType, name: str) -> bool:
    for directory in getattr(module, "__path__", ()):
        base = Path(directory) / name
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return True
    return False


def install(package: str) -> LazyReexports | None:
    """Put a `LazyReexports` for `package` first in `sys.meta_path`, unless `package` is imported
    already (then a plain import happened, and stays in charge). Returns the hook, or None."""
    if package in sys.modules:
        return None
    for finder in sys.meta_path:
        if isinstance(finder, LazyReexports) and finder.package == package:
            return finder
    finder = LazyReexports(package)
    sys.meta_path.insert(0, finder)
    return finder


def uninstall(finder: LazyReexports) -> None:
    """Remove the hook and every module of its tree, so that the next import is a plain one."""
    if finder in sys.meta_path:
        sys.meta_path.remove(finder)
    for name in [n for n in sys.modules if finder.covers(n)]:
        del sys.modules[name]
