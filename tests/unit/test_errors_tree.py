"""Every exception class of the package is in the one tree drawn at the top of `acp_agent/errors.py`."""

from __future__ import annotations

import ast
import builtins
import functools
import re
from pathlib import Path

import acp_agent.errors

PACKAGE = Path(__file__).resolve().parents[2] / "acp_agent"
BUILTIN_EXCEPTIONS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}


def _base_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


@functools.cache
def exception_classes() -> dict[str, tuple[Path, list[str]]]:
    """Class name → (file, base names) for every class in the package that derives from an exception."""
    classes = [
        (node.name, path, [b for b in map(_base_name, node.bases) if b])
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef)
    ]
    known = set(BUILTIN_EXCEPTIONS)
    while True:  # a class is an exception when one of its bases is
        more = {name for name, _, bases in classes if name not in known and known & set(bases)}
        if not more:
            break
        known |= more
    found: dict[str, tuple[Path, list[str]]] = {}
    for name, path, bases in classes:
        if name in known and name not in BUILTIN_EXCEPTIONS:
            assert name not in found, f"two exception classes named {name}: the tree needs one meaning"
            found[name] = (path, bases)
    return found


def _derives_from_agent_error(name: str, classes: dict[str, tuple[Path, list[str]]]) -> bool:
    if name == "AgentError":
        return True
    return any(_derives_from_agent_error(b, classes) for b in classes[name][1] if b in classes)


TREE_DOC = acp_agent.errors.__doc__ or ""
DRAWN = set(re.findall(r"[├└]─ (\w+)", TREE_DOC)) | {"AgentError"}


def test_the_finder_sees_the_known_outliers() -> None:
    found = exception_classes()
    for name in ("RpcError", "ConnectionClosed", "LimitsError", "Stopped", "JournalWriteFailed", "_Refusal"):
        assert name in found
    assert "Config" not in found and "Limits" not in found


def test_every_public_exception_class_is_drawn_in_the_tree_and_derives_from_agent_error() -> None:
    found = {name: where for name, where in exception_classes().items() if not name.startswith("_")}
    missing = sorted(set(found) - DRAWN)
    assert not missing, f"add these to the tree in acp_agent/errors.py: {missing}"
    outside = sorted(name for name in found if not _derives_from_agent_error(name, exception_classes()))
    assert not outside, f"these do not derive from AgentError: {outside}"


def test_the_tree_names_only_classes_that_exist() -> None:
    assert set(exception_classes()) >= DRAWN, sorted(DRAWN - set(exception_classes()))


def test_private_exception_classes_stay_inside_their_module() -> None:
    sources = {path: path.read_text() for path in PACKAGE.rglob("*.py")}
    for name, (home, _) in exception_classes().items():
        if not name.startswith("_"):
            continue
        users = [p for p, text in sources.items() if p != home and re.search(rf"\b{name}\b", text)]
        assert not users, f"{name} is used outside {home.name}: make it public and draw it in the tree"


def test_the_tree_is_real() -> None:
    """The tree holds at runtime as drawn: every exported exception is an AgentError."""
    for name in acp_agent.errors.__all__:
        value = getattr(acp_agent.errors, name)
        if isinstance(value, type):
            assert issubclass(value, acp_agent.errors.AgentError), name
            assert name in DRAWN, name
