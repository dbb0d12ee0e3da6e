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


def test_no_module_but_the_runner_sets_a_field_of_a_runner() -> None:
    """What a turn runs with is its spec: the runner's model, tools, sink, context, settings,
    gate and hooks are read-only views of it, and no module swaps them on a shared runner."""
    from acp_agent.turn.runner import TurnRunner

    views = {"model", "tools", "sink", "ctx", "settings", "gate", "hooks", "attachments", "steering"}
    assert all(isinstance(getattr(TurnRunner, name), property) for name in views)
    assert all(getattr(TurnRunner, name).fset is None for name in views)
    fields = views | {"spec", "memory", "usage", "last_context_tokens", "new_id", "on_step"}
    found = set()
    for path in PACKAGE.rglob("*.py"):
        if path == PACKAGE / "turn" / "runner.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                for part in target.elts if isinstance(target, ast.Tuple) else [target]:
                    if (
                        isinstance(part, ast.Attribute)
                        and part.attr in fields
                        and "runner" in ast.unparse(part.value).lower()
                    ):
                        found.add(f"{path.relative_to(PACKAGE)}: {ast.unparse(part)}")
    assert not found, f"runner fields set from outside the runner: {sorted(found)}"


def test_a_session_is_built_whole_and_changes_only_through_its_own_methods() -> None:
    """At most 20 fields, none waiting for a first prompt (only its journal may be absent: the
    agent runs with --no-journal), and no module but `session/state.py` assigns one."""
    import dataclasses

    from acp_agent.session.state import Session

    fields = dataclasses.fields(Session)
    assert len(fields) <= 20, [f.name for f in fields]
    unset = [f.name for f in fields if f.default is None]
    assert unset == ["journal"], unset
    found = set()
    for path in PACKAGE.rglob("*.py"):
        if path == PACKAGE / "session" / "state.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.AnnAssign | ast.AugAssign):
                targets = [node.target]
            for target in targets:
                for part in target.elts if isinstance(target, ast.Tuple) else [target]:
                    if (
                        isinstance(part, ast.Attribute)
                        and isinstance(part.value, ast.Name)
                        and part.value.id in {"session", "current", "fork", "source"}
                    ):
                        found.add(f"{path.relative_to(PACKAGE)}: {ast.unparse(part)}")
    assert not found, f"session fields set from outside the session: {sorted(found)}"
