"""The ACP Registry entry in the repo: what the registry asks of one (its rules, written out here),
in step with the package (its name and version: `test_distribution.py`).

The registry (github.com/agentclientprotocol/registry) checks each entry against its JSON schema
for `agent.json`; `RegistryEntry` says the same in pydantic: the required fields and their forms,
at least one way to install, and no key the registry does not know inside `distribution`.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

import acp_agent
from acp_agent.cli import DISTRIBUTION
from tests.support import REPO_ROOT

SVG = "{http://www.w3.org/2000/svg}"
Text = Annotated[str, Field(min_length=1)]


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Package(_Closed):
    """`npx` or `uvx`: the package (a version may be pinned), with optional args and env."""

    package: Text
    args: list[str] | None = None
    env: dict[str, str] | None = None


class BinaryTarget(_Closed):
    archive: str  # where the archive is downloaded from
    cmd: str  # what runs once it is unpacked
    args: list[str] | None = None
    env: dict[str, str] | None = None


Platform = Literal[
    "darwin-aarch64", "darwin-x86_64", "linux-aarch64", "linux-x86_64", "windows-aarch64", "windows-x86_64"
]


class Distribution(_Closed):
    binary: Annotated[dict[Platform, BinaryTarget], Field(min_length=1)] | None = None
    npx: Package | None = None
    uvx: Package | None = None

    @model_validator(mode="after")
    def _one_way_at_least(self) -> Distribution:
        if not self.model_fields_set:
            raise ValueError("no way to install the agent")
        return self


class RegistryEntry(BaseModel):
    """One agent; keys beyond these are the registry's to judge, not refused here."""

    model_config = ConfigDict(strict=True)
    id: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]*$")]
    name: Text
    version: Annotated[str, Field(pattern=r"^[0-9]+\.[0-9]+\.[0-9]+")]  # starts MAJOR.MINOR.PATCH
    description: Text
    repository: str | None = None
    authors: list[str] | None = None
    license: str | None = None  # an SPDX identifier, or "proprietary"
    icon: str | None = None
    distribution: Distribution


@pytest.fixture(scope="module")
def entry() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((REPO_ROOT / "agent.json").read_text(encoding="utf-8"))
    return loaded


def test_the_entry_has_what_the_registry_requires(entry: dict[str, Any]) -> None:
    RegistryEntry.model_validate(entry)


@pytest.mark.parametrize(
    "change",
    [
        {"id": "Governed_ACP"},
        {"version": "v0.2"},
        {"description": ""},
        {"name": None},
        {"distribution": {}},
        {"distribution": {"pip": {"package": "governed-acp-agent"}}},
        {"distribution": {"uvx": {"package": ""}}},
        {"distribution": {"uvx": {"package": "x", "python": "3.11"}}},
        {"distribution": {"binary": {"linux-riscv": {"archive": "https://x", "cmd": "x"}}}},
    ],
)
def test_an_entry_the_registry_would_refuse_is_refused(entry: dict[str, Any], change: dict[str, Any]) -> None:
    changed = {k: v for k, v in {**entry, **change}.items() if v is not None}
    with pytest.raises(ValidationError):
        RegistryEntry.model_validate(changed)


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
