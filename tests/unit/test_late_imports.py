"""Late imports are real `import` statements, so tools and the layering test can follow them.

Nothing in the package loads a module by a name string (`importlib.import_module`, `__import__`,
a loader called with a module name): every late import is a plain `import` inside a `@deferred`
function (`acp_agent/lazy.py`). The one exception is `model/lean_sdk/import_hook.py`, which resolves the SDK's
own re-exports. Files are parsed with `ast`, not imported.
"""

from __future__ import annotations

import ast

from tests.unit.test_layering import PACKAGE, imports_of

ALLOWED = {PACKAGE / "lazy.py", PACKAGE / "model" / "lean_sdk" / "import_hook.py"}
"""`import_hook.py` imports the SDK's own submodules by the names its `__init__` files re-export:
names read from a third-party package, never one of ours."""
BY_NAME = {"import_module", "__import__"}


def imports_by_name(source: str) -> list[str]:
    """`line: what` for each place that loads a module by a name string."""
    found = []
    for node in ast.walk(ast.parse(source)):
        name = None
        if isinstance(node, ast.Name) and node.id in BY_NAME:
            name = node.id
        elif isinstance(node, ast.Attribute) and node.attr in BY_NAME:
            name = node.attr
        elif isinstance(node, ast.ImportFrom) and any(a.name in BY_NAME for a in node.names):
            name = f"from {node.module} import"
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) in {"aload", "load"}
        ):
            name = f"{ast.unparse(node.func)}({node.args[0].value!r})"
        if name is not None:
            found.append(f"{getattr(node, 'lineno', '?')}: {name}")
    return sorted(found)


def test_the_check_finds_each_way_of_importing_by_name() -> None:
    source = (
        "import importlib\n"
        "from importlib import import_module\n"
        "m = importlib.import_module('acp_agent.x')\n"
        "n = __import__('json')\n"
        "async def f():\n"
        "    return await aload('acp_agent.session.machinery.engine'), lazy.load('mcp')\n"
        "from importlib.util import find_spec\n"  # finds, does not import: allowed
        "spec = find_spec('mcp')\n"
    )
    assert imports_by_name(source) == [
        "2: from importlib import",
        "3: import_module",
        "4: __import__",
        "6: aload('acp_agent.session.machinery.engine')",
        "6: lazy.load('mcp')",
    ]


def test_nothing_outside_lazy_imports_a_module_by_name() -> None:
    offenders = {
        str(path.relative_to(PACKAGE)): found
        for path in sorted(PACKAGE.rglob("*.py"))
        if path not in ALLOWED and (found := imports_by_name(path.read_text(encoding="utf-8")))
    }
    assert not offenders


def test_the_layering_test_sees_the_late_imports() -> None:
    """The edges that used to be name strings are now seen by `imports_of` (and so checked)."""
    late = {
        "session/manager.py": {"acp_agent.session.machinery.engine", "acp_agent.session.loading.reload"},
        "session/machinery/mcp_startup.py": {"acp_agent.tools.mcp.connections"},
        "session/options/config_options.py": {"acp_agent.turn.events"},
        "model/provider.py": {"acp_agent.model.factory"},
        "model/sdk.py": {"anthropic", "anthropic.lib.credentials"},
        "tools/mcp/sdk.py": {"mcp"},
    }
    for path, modules in late.items():
        assert modules <= imports_of(PACKAGE / path), path
