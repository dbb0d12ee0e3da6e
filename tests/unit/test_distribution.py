"""The distribution: its own PyPI name and command, and one version everywhere a user sees one.

The PyPI name `acp-agent` belongs to an unrelated project, so the distribution is
`governed-acp-agent`, its console script of the same name runs the agent (`uvx governed-acp-agent`),
and `acp-agent` stays as a second name for the same `main`. The version is written once, in
`acp_agent/__init__.py`: hatchling reads it at build time, `--version` and `agentInfo` print it, and
`agent.json` (checked in `test_registry_entry.py`) must match it, and so must the CHANGELOG's newest
release.
"""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import tomllib
from typing import Any

import acp_agent
from acp_agent.cli import DISTRIBUTION
from tests.support import REPO_ROOT

MAIN = "acp_agent.__main__:main"


def pyproject() -> dict[str, Any]:
    with (REPO_ROOT / "pyproject.toml").open("rb") as f:
        loaded: dict[str, Any] = tomllib.load(f)
    return loaded


def test_the_distribution_has_its_own_name_and_both_commands_run_the_same_main() -> None:
    project = pyproject()["project"]
    assert DISTRIBUTION == project["name"] == "governed-acp-agent"
    assert project["scripts"] == {"governed-acp-agent": MAIN, "acp-agent": MAIN}
    assert project["optional-dependencies"]["dev"][0] == f"{DISTRIBUTION}[test]"


def test_the_installed_distribution_is_this_one_with_both_commands() -> None:
    """What pip installed (editable here, the wheel in `make check-wheel`) says the same."""
    installed = importlib.metadata.distribution(DISTRIBUTION)
    scripts = {e.name: e.value for e in installed.entry_points if e.group == "console_scripts"}
    assert scripts == {"governed-acp-agent": MAIN, "acp-agent": MAIN}
    assert installed.version == acp_agent.__version__


def test_the_version_is_written_once_and_read_by_the_build() -> None:
    config = pyproject()
    assert "version" not in config["project"] and config["project"]["dynamic"] == ["version"]
    assert config["tool"]["hatch"]["version"] == {"path": "acp_agent/__init__.py"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", acp_agent.__version__)


def test_dash_dash_version_names_the_distribution_and_its_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "acp_agent", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.strip() == f"governed-acp-agent {acp_agent.__version__}"


def test_the_readme_and_make_install_and_run_the_new_name() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert "uvx governed-acp-agent" in readme and "pipx install governed-acp-agent" in readme
    assert '"args": ["governed-acp-agent"]' in readme  # the Zed and JetBrains snippets
    for stale in ("pipx install acp-agent", "pip install acp-agent", '"args": ["acp-agent"]'):
        assert stale not in readme
    assert "`uvx acp-agent` runs that one, not this" in readme  # the only `uvx acp-agent` left
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    assert "governed_acp_agent-*.whl" in makefile
    assert "../wheel-venv/bin/governed-acp-agent --version" in makefile
    assert "--from ./governed_acp_agent-*.whl governed-acp-agent --version" in makefile


RELEASE = re.compile(r"^## \[(?P<version>[^\]]+)\](?: - (?P<date>\d{4}-\d{2}-\d{2}))?$", re.MULTILINE)


def test_the_changelog_s_newest_release_is_this_version() -> None:
    """Keep a Changelog: `[Unreleased]` on top, then the releases, newest first, each with its date."""
    changelog = (REPO_ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = [m.groupdict() for m in RELEASE.finditer(changelog)]
    assert len(headings) == len(re.findall(r"^## ", changelog, re.MULTILINE)), "a heading of another form"
    assert headings[0] == {"version": "Unreleased", "date": None}
    releases = headings[1:]
    assert len(releases) >= 2 and all(re.fullmatch(r"\d+\.\d+\.\d+", r["version"]) for r in releases)
    assert all(r["date"] for r in releases), "a release without its date"
    assert releases[0]["version"] == acp_agent.__version__
    versions = [tuple(int(part) for part in r["version"].split(".")) for r in releases]
    assert versions == sorted(set(versions), reverse=True)
