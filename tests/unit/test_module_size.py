"""The house's hard ceiling: no module of the package over 400 lines (style: aim for 300)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "acp_agent"
CEILING = 400


def test_no_module_is_over_the_ceiling() -> None:
    over = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted(PACKAGE.rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > CEILING
    }
    assert not over, f"split these by job (lines > {CEILING}): {over}"
