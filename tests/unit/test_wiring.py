"""The composition root builds each object with what it needs: no field is patched in afterwards."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "acp_agent"

KNOWN: set[tuple[str, str]] = set()
"""Patches still to go (none: the manager owns its task group, the requester has its endpoint)."""


def _outside_writes(path: Path) -> set[str]:
    """`x.field = …` where `x` is not `self`/`cls`: a field set on an object from outside it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for target in targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id not in {"self", "cls"}
            ):
                found.add(f"{target.value.id}.{target.attr}")
    return found


def test_app_wires_without_patching_fields() -> None:
    patched = {("app.py", name) for name in _outside_writes(PACKAGE / "app.py")}
    assert patched <= KNOWN, f"fields set from outside after construction: {sorted(patched - KNOWN)}"


def test_session_permissions_get_their_mode_switch_at_construction() -> None:
    patched = _outside_writes(PACKAGE / "session" / "manager.py")
    assert not {name for name in patched if name.startswith("permissions.")}
