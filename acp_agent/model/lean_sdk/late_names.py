"""Late names: what an SDK module imports only for its functions is imported when a function uses it.

The SDK's core modules import, at their top, what only some of their functions need: the client's
base imports the tracing helpers, which import the beta API's whole type tree to tell a beta
message from a plain one when a span records it; it imports every error class for the first error
response; the Messages resource imports the batches and the token counting. With a plain import a
first request waits for ~950 SDK modules, of which it uses ~200 (`model/lean_sdk/import_hook.py`).

`late_code` rewrites one module so that such a name is imported where it is first used: each
top-level `from M import N` (and each type alias over such names, `X = A | B`) whose name no code
run at import time reads, and that nothing else in the module binds, leaves the module's top; each
read of N inside a function becomes `__acp_late__("N")`, which imports N as the statement would
have, keeps it in the module's globals, and returns it. The module's `__getattr__` does the same
for `module.N` and `from module import N` elsewhere, so every name means what it meant, later.
Only the package's own modules (relative imports) are read late, and only those none of whose names
is read at import time: a module loaded anyway gains nothing, and a late read costs a call (none
is left on a stream's per-event path).

Read at import time, hence never late: module and class bodies, decorators, default values, class
bases, the annotations of classes (pydantic models and TypedDicts read them), and those of a
function with a decorator that may read them. In a module without `from __future__ import
annotations`, a function's annotations are read when it is defined: there the annotations of a
nested function are never late, and an annotation of a module-level function or method that names
a late name becomes the string `from __future__ import annotations` would make it (the SDK's
`Message.to_param` names the whole tree of request parameter types in its return annotation alone:
~65 modules). A module is left as it is when it reads its own namespace (`globals()`, `eval`...),
or when it defines `__getattr__`.

`LateNamesLoader` keeps the rewritten code beside the SDK's own bytecode (`__pycache__/*.opt-
acplateN.pyc`, checked against the source's mtime and size as a `.pyc` is, and a marker for a module
left as it is): a rewrite costs a parse and a compile, ~0.5 s of CPU for what a first request
loads, paid once after an install or an upgrade. Where that cache cannot be written (a read-only
install, `PYTHONDONTWRITEBYTECODE`), modules load as they are.
"""

from __future__ import annotations

import ast
import importlib.machinery
import marshal
import sys
from collections import Counter
from dataclasses import dataclass, field
from types import CodeType

from acp_agent.model.lean_sdk.side_cache import SideFile, loads, stamp

__all__ = ["LATE", "LateNamesLoader", "late_code"]

VERSION = 4
"""Bumped when the rewrite changes: the cached code of an older one is then ignored."""

LATE = "__acp_late__"
"""The function a rewritten module reads a late name through."""

_SAFE_DECORATORS = frozenset(
    {
        "abstractmethod",
        "asynccontextmanager",
        "cached_property",
        "classmethod",
        "contextmanager",
        "deprecated",
        "final",
        "lru_cache",
        "overload",
        "override",
        "property",
        "required_args",
        "setter",
        "staticmethod",
        "typed_cached_property",
        "wraps",
    }
)
"""Decorators that never read the annotations of what they decorate: their functions' annotations
(strings, under `from __future__ import annotations`) may name late names."""

_INTROSPECTION = frozenset({"globals", "locals", "vars", "eval", "exec", "__import__"})
"""Names whose use makes a module's namespace matter as a whole: such a module is left as it is."""

_TYPE_NODES = (
    ast.Name,
    ast.Attribute,
    ast.Subscript,
    ast.BinOp,
    ast.BitOr,
    ast.Tuple,
    ast.Constant,
    ast.Load,
)
"""What a type alias may be made of (`A | B`, `Union[A, B]`, `list[A]`) to be evaluated late."""


@dataclass
class _Plan:
    imports: dict[str, tuple[str | None, str, int]] = field(default_factory=dict)
    """Late name → (module, attribute, level) of its `from module import attribute`."""
    aliases: dict[str, ast.Assign] = field(default_factory=dict)
    """Late type alias → its assignment."""
    postponed: bool = True
    """Whether the module postpones its annotations (`from __future__ import annotations`)."""


def late_code(source: bytes, path: str) -> CodeType | None:
    """The module's code with its late names, or None when it has none worth deferring."""
    tree = ast.parse(source, path)
    plan = _plan(tree)
    if plan is None:
        return None
    _rewrite(tree, plan)
    return compile(tree, path, "exec", dont_inherit=True)


# ── which names can be late ─────────────────────────────────────────────────────────────────────
def _plan(tree: ast.Module) -> _Plan | None:
    body = tree.body
    postponed = any(_is_future_annotations(s) for s in body)
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    if names & _INTROSPECTION or {"__getattr__", "__dir__", LATE} & _top_level_defs(body):
        return None
    imports = [  # the package's own modules (relative imports): the others are loaded anyway
        s for s in body if isinstance(s, ast.ImportFrom) and s.level > 0 and s.names[0].name != "*"
    ]
    sources: dict[str, list[tuple[str | None, str, int]]] = {}
    for statement in imports:
        for alias in statement.names:
            sources.setdefault(alias.asname or alias.name, []).append(
                (statement.module, alias.name, statement.level)
            )
    rest = [s for s in body if s not in imports]
    bound = _bindings(rest)
    candidates = {name for name, found in sources.items() if len(found) == 1 and name not in bound}
    aliases = {
        s.targets[0].id: s
        for s in rest
        if isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and bound[s.targets[0].id] == 1  # this assignment, and nothing else, binds it
        and s.targets[0].id not in sources
        and all(isinstance(n, (*_TYPE_NODES, ast.expr_context)) for n in ast.walk(s.value))
        and {n.id for n in ast.walk(s.value) if isinstance(n, ast.Name)} & candidates
    }
    while True:  # an alias read at import time is not late, nor is what only it read
        eager = _EagerReads()
        for kept_statement in rest:
            if not (isinstance(kept_statement, ast.Assign) and kept_statement in aliases.values()):
                eager.visit(kept_statement)
        kept = {name: s for name, s in aliases.items() if name not in eager.names}
        if len(kept) == len(aliases):
            break
        aliases = kept
    if not postponed:  # a nested function's annotations are read when the outer one runs
        eager.names |= _nested_annotation_names(rest)
    late = {name: sources[name][0] for name in candidates if name not in eager.names}
    # A module that is imported anyway gains nothing from being read late, and each late read
    # costs a call: so a name stays as it is when its module has a name read at import time.
    loaded = {_source_key(sources[name][0]) for name in sources if name not in late}
    late = {name: found for name, found in late.items() if _source_key(found) not in loaded}
    if not late:
        return None
    return _Plan(late, aliases, postponed)


def _source_key(source: tuple[str | None, str, int]) -> tuple[str, int]:
    """The module a `from ... import` reads: `from .m import a` and `from . import m` name `m`."""
    module, attribute, level = source
    return (module or attribute, level)


def _is_future_annotations(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.ImportFrom)
        and statement.module == "__future__"
        and any(alias.name == "annotations" for alias in statement.names)
    )


def _top_level_defs(body: list[ast.stmt]) -> set[str]:
    return {s.name for s in body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}


def _assigns(statement: ast.stmt, name: str) -> bool:
    return isinstance(statement, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == name for t in statement.targets
    )


def _bindings(statements: list[ast.stmt]) -> Counter[str]:
    """How often these statements bind each name, in any scope (a parameter, a local, a nested def)."""
    found: Counter[str] = Counter()
    todo: list[ast.AST] = list(statements)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            found[node.id] += 1
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found[node.name] += 1
        elif isinstance(node, ast.arg):
            found[node.arg] += 1
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found[node.name] += 1
        elif isinstance(node, ast.Global | ast.Nonlocal):
            found.update(node.names)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            found.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            found[node.name] += 1
        elif isinstance(node, ast.MatchMapping) and node.rest:
            found[node.rest] += 1
        todo.extend(ast.iter_child_nodes(node))
    return found


class _EagerReads(ast.NodeVisitor):
    """The names read while the module is imported (function bodies are not visited)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        self.names.add(node.id)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)
        args = node.args
        for default in [*args.defaults, *args.kw_defaults]:
            if default is not None:
                self.visit(default)
        if not all(_decorator_name(d) in _SAFE_DECORATORS for d in node.decorator_list):
            for annotation in _annotations(node):
                self.visit(annotation)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.generic_visit(node)  # at import time only when called then; counted all the same


def _nested_annotation_names(statements: list[ast.stmt]) -> set[str]:
    """The names read by the annotations of functions defined inside other functions."""
    names: set[str] = set()
    for outer in (node for statement in statements for node in ast.walk(statement)):
        if isinstance(outer, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in (node for statement in outer.body for node in ast.walk(statement)):
                if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                    for annotation in _annotations(inner):
                        names |= {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)}
    return names


def _params(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
    args = function.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return [param for param in every if param is not None]


def _annotations(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.expr]:
    """Its parameters' annotations, then its return's: what `def` evaluates without postponing."""
    found = [param.annotation for param in _params(function)]
    return [a for a in [*found, function.returns] if a is not None]


def _decorator_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


# ── the rewrite ─────────────────────────────────────────────────────────────────────────────────
class _LateReads(ast.NodeTransformer):
    """Inside function bodies, a read of a late name becomes `__acp_late__("name")`."""

    def __init__(self, late: set[str]) -> None:
        self.late = late
        self.depth = 0

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        if self.depth:  # a nested function's defaults are read when the outer one runs
            node.args.defaults = [self.visit(d) for d in node.args.defaults]
            node.args.kw_defaults = [d if d is None else self.visit(d) for d in node.args.kw_defaults]
        self.depth += 1
        node.body = [self.visit(s) for s in node.body]
        self.depth -= 1
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if self.depth and node.id in self.late and isinstance(node.ctx, ast.Load):
            call = ast.Call(ast.Name(LATE, ast.Load()), [ast.Constant(node.id)], [])
            return ast.copy_location(call, node)
        return node


class _PostponedAnnotations(ast.NodeTransformer):
    """A module-level function's or method's annotations that name a late name become strings, as
    under `from __future__ import annotations` (for a module without it; nested functions, whose
    annotations are never late, are not visited)."""

    def __init__(self, late: set[str]) -> None:
        self.late = late

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        for param in _params(node):
            if param.annotation is not None:
                param.annotation = self._postponed(param.annotation)
        if node.returns is not None:
            node.returns = self._postponed(node.returns)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def _postponed(self, annotation: ast.expr) -> ast.expr:
        if any(isinstance(n, ast.Name) and n.id in self.late for n in ast.walk(annotation)):
            return ast.copy_location(ast.Constant(ast.unparse(annotation)), annotation)
        return annotation


def _rewrite(tree: ast.Module, plan: _Plan) -> None:
    late = set(plan.imports) | set(plan.aliases)
    if not plan.postponed:
        tree = _PostponedAnnotations(late).visit(tree)
    body: list[ast.stmt] = []
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom) and statement.module != "__future__":
            statement.names = [a for a in statement.names if (a.asname or a.name) not in plan.imports]
            if not statement.names:
                continue
        elif isinstance(statement, ast.Assign) and statement in plan.aliases.values():
            statement = _alias_function(statement, late)
        body.append(_LateReads(late).visit(statement))
    first = next((i for i, s in enumerate(body) if not _is_docstring_or_future(s)), len(body))
    body[first:first] = _helpers(plan, star=not any(_assigns(s, "__all__") for s in tree.body))
    tree.body = body
    ast.fix_missing_locations(tree)


def _is_docstring_or_future(statement: ast.stmt) -> bool:
    docstring = isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
    return docstring or (isinstance(statement, ast.ImportFrom) and statement.module == "__future__")


def _alias_function(statement: ast.Assign, late: set[str]) -> ast.stmt:
    """`X = A | B` → `def __acp_alias_X__(): return A | B`, evaluated when X is first read."""
    name = statement.targets[0].id  # type: ignore[attr-defined]
    function = ast.parse(f"def __acp_alias_{name}__():\n    return None").body[0]
    assert isinstance(function, ast.FunctionDef)
    function.body[0] = ast.Return(statement.value)
    return ast.copy_location(function, statement)


def _helpers(plan: _Plan, *, star: bool) -> list[ast.stmt]:
    """`__acp_late__`, the module's `__getattr__` and `__acp_late_names__` (what is late, for the
    tests); with `star`, `__getattr__` also answers `__all__` as a star import of the module as it
    was would have bound (its public names, the late ones too)."""
    table: dict[str, tuple[str | None, str, int] | str] = {**plan.imports}
    table.update({name: f"__acp_alias_{name}__" for name in plan.aliases})
    source = f"""
__acp_late_names__ = {tuple(sorted(table))!r}


def {LATE}(name, _table={table!r}):
    namespace = globals()
    try:
        return namespace[name]
    except KeyError:
        pass
    entry = _table[name]
    if isinstance(entry, str):
        value = namespace[entry]()
    else:
        module, attribute, level = entry
        source = __import__(module or "", namespace, None, (attribute,), level)
        try:
            value = getattr(source, attribute)
        except AttributeError:
            import sys
            value = sys.modules[source.__name__ + "." + attribute]
    namespace[name] = value
    return value


def __getattr__(name, _late=__acp_late_names__, _star={star!r}):
    if name in _late:
        return {LATE}(name)
    if name == "__all__" and _star:
        namespace = globals()
        late = [n for n in _late if n[0] != "_" and n not in namespace]
        return [n for n in namespace if n[0] != "_"] + late
    raise AttributeError(f"module {{__name__!r}} has no attribute {{name!r}}")
"""
    return ast.parse(source).body


# ── the loader, with its cache ──────────────────────────────────────────────────────────────────
class LateNamesLoader(importlib.machinery.SourceFileLoader):
    """Loads an SDK module with its late names (`late_code`), from the cache when it is fresh."""

    def get_code(self, fullname: str) -> CodeType | None:
        path = self.get_filename(fullname)
        side = SideFile(path, f"acplate{VERSION}")
        header = stamp(VERSION, [path])
        if header is None or side.path is None:
            return super().get_code(fullname)
        kept = side.read(header)
        if kept is not None:
            try:
                return super().get_code(fullname) if not kept else _code(loads(kept))
            except (ValueError, TypeError):
                pass
        if sys.dont_write_bytecode:  # nowhere to keep a rewrite: load the module as it is
            return super().get_code(fullname)
        code = late_code(self.get_data(path), path)
        if not side.write(header, b"" if code is None else marshal.dumps(code)):
            return super().get_code(fullname)  # a read-only install: as it is, not a rewrite per start
        return code if code is not None else super().get_code(fullname)


def _code(value: object) -> CodeType:
    if not isinstance(value, CodeType):
        raise TypeError("not a code object")
    return value
