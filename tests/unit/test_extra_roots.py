"""A session's additional roots (ACP `additionalDirectories`, issue 24 item 5): every tool reaches
them with the guards the cwd has (symlinks, `..`, sensitive paths, ignore rules), paths in them
are shown whole, and the roots a request gives are checked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_agent.errors import PathOutsideCwd, RpcError, ToolError
from acp_agent.limits import Limits
from acp_agent.session.machinery.roots import extra_roots
from acp_agent.session.system_prompt import build_system_prompt
from acp_agent.tools.base import ToolContext
from acp_agent.tools.files.edit import WriteFile
from acp_agent.tools.files.read import ReadFile
from acp_agent.tools.files.sensitive import sensitive_reason
from acp_agent.tools.hidden import NOTHING_HIDDEN
from acp_agent.tools.search.listing import ListFiles
from acp_agent.tools.search.text import SearchText


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(cwd, an additional root, a directory outside both)."""
    cwd, extra, outside = tmp_path / "cwd", tmp_path / "extra", tmp_path / "outside"
    for directory in (cwd, extra / "src", outside):
        directory.mkdir(parents=True)
    (extra / "src" / "lib.py").write_text("NEEDLE = 1\n")
    (extra / "skipped.py").write_text("NEEDLE = 2\n")
    (extra / ".ignore").write_text("skipped.py\n")
    (outside / "secret.txt").write_text("NEEDLE secret\n")
    (extra / "leak").symlink_to(outside / "secret.txt")
    (extra / "way-out").symlink_to(outside)
    return cwd, extra, outside


def ctx(roots: tuple[Path, Path, Path]) -> ToolContext:
    return ToolContext(cwd=roots[0], extra_roots=(roots[1],))


async def test_a_file_in_an_additional_root_is_read_by_its_absolute_path(
    roots: tuple[Path, Path, Path],
) -> None:
    result = await ReadFile().run({"path": str(roots[1] / "src" / "lib.py")}, ctx(roots))
    assert result.text.startswith("NEEDLE = 1")
    with pytest.raises(PathOutsideCwd):  # without the root, the same path is out of bounds
        await ReadFile().run({"path": str(roots[1] / "src" / "lib.py")}, ToolContext(cwd=roots[0]))


@pytest.mark.parametrize("path", ["leak", "way-out/secret.txt", "src/../../outside/secret.txt"])
async def test_escapes_from_an_additional_root_are_refused(roots: tuple[Path, Path, Path], path: str) -> None:
    with pytest.raises(PathOutsideCwd, match="outside the working directory"):
        await ReadFile().run({"path": os.path.join(roots[1], path)}, ctx(roots))


async def test_listing_and_search_in_an_additional_root_keep_the_ignore_rules_and_show_whole_paths(
    roots: tuple[Path, Path, Path],
) -> None:
    listed = await ListFiles().run({"path": str(roots[1])}, ctx(roots))
    assert listed.text.splitlines() == [f"{roots[1]}/src/lib.py"]  # .ignore'd and hidden ones left out
    found = await SearchText().run({"pattern": "NEEDLE", "path": str(roots[1])}, ctx(roots))
    assert f"{roots[1]}/src/lib.py" in found.text
    assert "skipped.py" not in found.text and "secret" not in found.text  # ignored; a link out not followed


async def test_a_write_in_an_additional_root_lands_there_and_never_through_a_link(
    roots: tuple[Path, Path, Path],
) -> None:
    written = await WriteFile().run({"path": str(roots[1] / "new.txt"), "content": "hi\n"}, ctx(roots))
    assert not written.is_error and (roots[1] / "new.txt").read_text() == "hi\n"
    with pytest.raises(ToolError):
        await WriteFile().run({"path": str(roots[1] / "way-out" / "planted.txt"), "content": "x"}, ctx(roots))
    assert not (roots[2] / "planted.txt").exists()


def test_sensitive_paths_count_in_an_additional_root_as_in_the_cwd(roots: tuple[Path, Path, Path]) -> None:
    both = (roots[0], roots[1])
    (roots[1] / ".git").mkdir()
    for name in (".git/config", ".envrc", ".vscode/tasks.json"):
        assert sensitive_reason(both, str(roots[1] / name)) is not None, name
        assert sensitive_reason(both, name) is not None, name  # the cwd's own
    assert sensitive_reason(both, str(roots[1] / "src" / "lib.py")) is None


def test_the_roots_a_request_gives_are_checked_and_named_in_the_system_prompt(
    roots: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    cwd, extra, outside = roots
    assert extra_roots(None, cwd, NOTHING_HIDDEN) == ()
    assert extra_roots([str(extra), str(extra), str(cwd), str(outside)], cwd, NOTHING_HIDDEN) == (
        extra,
        outside,
    )
    with pytest.raises(RpcError, match=r"additionalDirectories\.1: '.*missing' is not an existing directory"):
        extra_roots([str(extra), str(tmp_path / "missing")], cwd, NOTHING_HIDDEN)
    prompt = build_system_prompt(cwd=cwd, tools=[], limits=Limits(), extra_roots=(extra,))
    assert "Additional workspace roots" in prompt and f"- {extra}\n" in prompt
    assert "Additional" not in build_system_prompt(cwd=cwd, tools=[], limits=Limits())
