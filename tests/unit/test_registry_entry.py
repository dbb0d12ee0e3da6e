"""The ACP Registry entry in the repo: valid against the registry's schema, in step with the package
(its name and version: `test_distribution.py`).

The schema lives beside the repo in `../shared/acp/registry/` (or `$ACP_REGISTRY_DIR`), like the
ACP schema (tests/support/schema.py), and is never copied in; the test skips only when it is absent.
"""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

import acp_agent
from acp_agent.cli import DISTRIBUTION
from tests.support import REPO_ROOT

REGISTRY_DIR_ENV = "ACP_REGISTRY_DIR"
SVG = "{http://www.w3.org/2000/svg}"


def registry_dir() -> Path:
    override = os.environ.get(REGISTRY_DIR_ENV)
    return Path(override) if override else REPO_ROOT.parent / "shared" / "acp" / "registry"


@pytest.fixture(scope="module")
def entry() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((REPO_ROOT / "agent.json").read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module")
def registry_schema() -> dict[str, Any]:
    path = registry_dir() / "agent.schema.json"
    if not path.is_file():
        pytest.skip(f"the ACP Registry schema is not at {path} (set ${REGISTRY_DIR_ENV})")
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return schema


def test_the_entry_is_valid_against_the_registry_schema(
    entry: dict[str, Any], registry_schema: dict[str, Any]
) -> None:
    validator = jsonschema.Draft7Validator(
        registry_schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER
    )
    problems = [
        f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in validator.iter_errors(entry)
    ]
    assert problems == []


def test_the_entry_installs_this_exact_version_with_uvx(entry: dict[str, Any]) -> None:
    """`uvx --from governed-acp-agent==<version> governed-acp-agent`: the distribution's own name
    (`acp-agent` on PyPI is another project) at the version `--version` prints."""
    version = acp_agent.__version__
    assert entry["id"] == entry["name"] == DISTRIBUTION == "governed-acp-agent"
    assert entry["version"] == version
    assert entry["distribution"] == {"uvx": {"package": f"{DISTRIBUTION}=={version}"}}


def test_the_icon_is_a_16px_monochrome_svg_as_the_registry_requires(entry: dict[str, Any]) -> None:
    icon = (REPO_ROOT / entry["icon"]).resolve()
    assert icon.parent == REPO_ROOT.resolve() and icon.name == "icon.svg"
    root = ET.parse(icon).getroot()
    assert root.tag == f"{SVG}svg"
    assert (root.get("width"), root.get("height"), root.get("viewBox")) == ("16", "16", "0 0 16 16")
    colours = []
    for element in root.iter():
        style = dict(part.split(":", 1) for part in (element.get("style") or "").split(";") if ":" in part)
        colours.extend(
            value.strip()
            for attribute in ("fill", "stroke", "color", "stop-color")
            for value in (element.get(attribute), style.get(attribute))
            if value is not None
        )
        assert element.tag.removeprefix(SVG) not in {"image", "linearGradient", "radialGradient"}
    assert colours and set(colours) <= {"currentColor", "none"}, colours
    assert not re.search(r"#[0-9a-fA-F]{3,8}\b|rgb\(", icon.read_text(encoding="utf-8"))
