"""The README is a front door (issue 37): short, the two set-up commands first, and every relative link
from it (and from the CHANGELOG) leads to a file that exists and, with `#anchor`, to one of its headings.

The pages under docs/ link to each other; `make docs` (mkdocs build --strict) checks those. GitHub and
PyPI render README.md and CHANGELOG.md outside that build, so their links are checked here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support import REPO_ROOT

MAX_README_LINES = 250
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (.+?)\s*$", re.MULTILINE)


def prose(markdown: str) -> str:
    """`markdown` without its fenced code blocks (a snippet's brackets are no links)."""
    return FENCE.sub("", markdown)


def slug(heading: str) -> str:
    """The anchor GitHub (and MkDocs' toc) gives a heading: lower case, punctuation dropped."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    return {slug(h) for h in HEADING.findall(prose(markdown))}


def broken_links(page: Path) -> list[str]:
    """The relative links of `page` whose file or heading is missing."""
    problems = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            problems.append(f"{target}: no such file")
        elif anchor and (linked.suffix != ".md" or anchor not in anchors(linked.read_text(encoding="utf-8"))):
            problems.append(f"{target}: no heading #{anchor} in {linked.name}")
    return problems


@pytest.mark.parametrize("name", ["README.md", "CHANGELOG.md"])
def test_relative_links_lead_somewhere(name: str) -> None:
    assert not broken_links(REPO_ROOT / name)


def test_the_readme_links_into_docs_relatively() -> None:
    targets = LINK.findall(prose((REPO_ROOT / "README.md").read_text(encoding="utf-8")))
    into_docs = [t for t in targets if t.startswith("docs/")]
    assert "docs/architecture.md" in into_docs and "docs/configuration.md" in into_docs
    assert not [t for t in targets if "/docs/" in t and t.startswith(("http:", "https:", "/"))]


def test_the_checker_finds_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# A page\n\n## Logging in: the `key`\n", encoding="utf-8")
    readme = tmp_path / "README.md"
    readme.write_text(
        "[ok](docs/page.md#logging-in-the-key) [top](#read-me) [web](https://example.com/x.md)\n"
        "[gone](docs/nowhere.md) [bad](docs/page.md#logging-out)\n\n# Read me\n\n"
        "```md\n[in a snippet](docs/ignored.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(readme) == [
        "docs/nowhere.md: no such file",
        "docs/page.md#logging-out: no heading #logging-out in page.md",
    ]


def test_the_readme_is_short_and_starts_with_the_two_commands() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= MAX_README_LINES
    first_block = re.search(r"^```sh\n(.*?)^```", readme, re.MULTILINE | re.DOTALL)
    assert first_block is not None and readme.index(first_block[0]) < readme.index("\n## ")
    assert [line.split()[:2] for line in first_block[1].splitlines()] == [["make", "demo"], ["make", "test"]]
