"""write_file and edit_file: results, diffs, locations, refusals, confinement, and the editor's fs."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from acp_agent.errors import PathOutsideCwd, ToolError
from acp_agent.tools.base import Diff, ToolContext, ToolResult
from acp_agent.tools.files.edit import DIFF_MAX_BYTES, EditFile, WriteFile, changed_lines
from acp_agent.tools.files.localfs import LocalFileSystem
from acp_agent.tools.files.read import ReadFile

APP = 'def greet(name):\n    return "hi " + name\n\n\ndef main():\n    print(greet("you"))\n'


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    root = (tmp_path / "work").resolve()
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(APP)
    return root


@pytest.fixture
def ctx(cwd: Path) -> ToolContext:
    return ToolContext(cwd=cwd)


class EditorFS:
    """The editor's buffers, as `fs/read_text_file` / `fs/write_text_file` would serve them."""

    def __init__(self, files: dict[Path, str]) -> None:
        self.files = dict(files)
        self.calls: list[tuple[str, Path]] = []

    async def read_text(self, path: Path) -> str:
        self.calls.append(("read", path))
        if path not in self.files:
            raise ToolError(f"fs/read_text_file failed: resource not found: {path}")
        return self.files[path]

    async def write_text(self, path: Path, text: str) -> None:
        self.calls.append(("write", path))
        self.files[path] = text


def test_edit_tools_have_closed_schemas_and_ask_for_edit_permission() -> None:
    for tool in (WriteFile(), EditFile()):
        schema: dict[str, Any] = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
        assert tool.kind == "edit" and tool.permission == "edit"
        assert len(tool.description) > 80


def test_titles_name_the_file() -> None:
    assert WriteFile().title({"path": "x.txt"}) == "Write x.txt"
    assert EditFile().title({"path": "src/a.py"}) == "Edit src/a.py"
    assert EditFile().title({}) == "Edit file"


# ── edit_file ────────────────────────────────────────────────────────────────────────────────


async def test_edit_replaces_the_one_occurrence_and_reports_a_whole_file_diff(ctx: ToolContext) -> None:
    path = ctx.cwd / "src" / "app.py"
    result = await EditFile().run(
        {"path": "src/app.py", "old_string": 'print(greet("you"))', "new_string": 'print(greet("me"))'}, ctx
    )
    new = APP.replace('"you"', '"me"')
    assert path.read_text() == new
    assert result.text == "Edited src/app.py: replaced 1 occurrence (+1 -1 lines)"
    assert not result.is_error
    assert result.diffs == (Diff(path, APP, new),)
    assert result.locations == ((path, 6),)


async def test_edit_counts_added_and_removed_lines(ctx: ToolContext) -> None:
    result = await EditFile().run(
        {
            "path": "src/app.py",
            "old_string": '    return "hi " + name\n',
            "new_string": "    greeting = 'hi'\n    return greeting + name\n",
        },
        ctx,
    )
    assert result.text == "Edited src/app.py: replaced 1 occurrence (+2 -1 lines)"
    assert result.locations == ((ctx.cwd / "src" / "app.py", 2),)


async def test_edit_with_an_empty_new_string_deletes_the_text(ctx: ToolContext) -> None:
    await EditFile().run(
        {"path": "src/app.py", "old_string": '\n\ndef main():\n    print(greet("you"))\n', "new_string": ""},
        ctx,
    )
    assert (ctx.cwd / "src" / "app.py").read_text() == 'def greet(name):\n    return "hi " + name\n'


async def test_edit_refuses_a_string_that_occurs_more_than_once_and_says_where(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"occurs 2 times in 'src/app.py' \(lines 1 and 5\)"):
        await EditFile().run({"path": "src/app.py", "old_string": "def ", "new_string": "async def "}, ctx)
    assert (ctx.cwd / "src" / "app.py").read_text() == APP


async def test_edit_refuses_a_string_that_does_not_occur(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"not found in 'src/app\.py'.*exactly"):
        await EditFile().run({"path": "src/app.py", "old_string": "def  greet", "new_string": "x"}, ctx)
    assert (ctx.cwd / "src" / "app.py").read_text() == APP


async def test_edit_refuses_identical_old_and_new(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="identical"):
        await EditFile().run({"path": "src/app.py", "old_string": "def", "new_string": "def"}, ctx)


async def test_edit_of_a_missing_file_points_to_write_file(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"no such file: 'nope\.py'; use write_file"):
        await EditFile().run({"path": "nope.py", "old_string": "a", "new_string": "b"}, ctx)


async def test_edit_keeps_crlf_line_endings_when_the_model_writes_lf(ctx: ToolContext) -> None:
    path = ctx.cwd / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await EditFile().run({"path": "win.txt", "old_string": "one\ntwo\n", "new_string": "1\n2\n"}, ctx)
    assert path.read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_edit_refuses_binary_and_non_utf8_files(ctx: ToolContext) -> None:
    (ctx.cwd / "blob.bin").write_bytes(b"abc\0def")
    (ctx.cwd / "latin.txt").write_bytes("café".encode("latin-1"))
    with pytest.raises(ToolError, match="binary"):
        await EditFile().run({"path": "blob.bin", "old_string": "abc", "new_string": "x"}, ctx)
    with pytest.raises(ToolError, match="not valid UTF-8"):
        await EditFile().run({"path": "latin.txt", "old_string": "caf", "new_string": "x"}, ctx)
    assert (ctx.cwd / "blob.bin").read_bytes() == b"abc\0def"


async def test_edit_and_write_refuse_paths_outside_the_cwd(ctx: ToolContext, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    (ctx.cwd / "link.txt").symlink_to(outside)
    with pytest.raises(PathOutsideCwd):
        await EditFile().run({"path": "../outside.txt", "old_string": "secret", "new_string": "x"}, ctx)
    with pytest.raises(PathOutsideCwd, match="symlink"):
        await EditFile().run({"path": "link.txt", "old_string": "secret", "new_string": "x"}, ctx)
    with pytest.raises(PathOutsideCwd):
        await WriteFile().run({"path": str(outside), "content": "x"}, ctx)
    assert outside.read_text() == "secret\n"


async def test_a_file_over_1_mib_is_edited_but_its_diff_is_skipped_with_a_note(ctx: ToolContext) -> None:
    path = ctx.cwd / "big.txt"
    path.write_text("x" * DIFF_MAX_BYTES + "\nneedle\n")
    result = await EditFile().run({"path": "big.txt", "old_string": "needle", "new_string": "pin"}, ctx)
    assert path.read_text().endswith("\npin\n")
    assert result.diffs == ()
    assert "diff not shown: the file is larger than 1 MiB" in result.text
    assert result.locations == ((path, 2),)


# ── write_file ───────────────────────────────────────────────────────────────────────────────


async def test_write_creates_a_file_and_its_parents_with_a_new_file_diff(ctx: ToolContext) -> None:
    result = await WriteFile().run({"path": "pkg/sub/new.py", "content": "a = 1\nb = 2\n"}, ctx)
    path = ctx.cwd / "pkg" / "sub" / "new.py"
    assert path.read_text() == "a = 1\nb = 2\n"
    assert result.text == "Created pkg/sub/new.py (2 lines)"
    assert result.diffs == (Diff(path, None, "a = 1\nb = 2\n"),)
    assert result.locations == ((path, 1),)
    assert result.raw_output is not None and result.raw_output["created"] is True


async def test_write_overwrites_with_old_and_new_text_in_the_diff(ctx: ToolContext) -> None:
    path = ctx.cwd / "src" / "app.py"
    new = APP.replace("def main():", "def run():")
    result = await WriteFile().run({"path": "src/app.py", "content": new}, ctx)
    assert path.read_text() == new
    assert result.text == "Wrote src/app.py (+1 -1 lines; 6 lines now)"
    assert result.diffs == (Diff(path, APP, new),)
    assert result.locations == ((path, 5),)


async def test_write_of_identical_content_changes_nothing(ctx: ToolContext) -> None:
    path = ctx.cwd / "src" / "app.py"
    before = path.stat().st_mtime_ns
    result = await WriteFile().run({"path": "src/app.py", "content": APP}, ctx)
    assert "nothing was written" in result.text and result.diffs == ()
    assert path.stat().st_mtime_ns == before


async def test_write_is_atomic_and_keeps_the_file_mode(ctx: ToolContext) -> None:
    script = ctx.cwd / "run.sh"
    script.write_text("#!/bin/sh\necho old\n")
    script.chmod(0o751)
    await WriteFile().run({"path": "run.sh", "content": "#!/bin/sh\necho new\n"}, ctx)
    assert script.read_text() == "#!/bin/sh\necho new\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o751
    assert sorted(p.name for p in ctx.cwd.iterdir()) == ["run.sh", "src"]  # no temp file left


async def test_a_new_file_gets_the_usual_mode_not_the_temp_file_mode(ctx: ToolContext) -> None:
    await WriteFile().run({"path": "fresh.txt", "content": "x\n"}, ctx)
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE((ctx.cwd / "fresh.txt").stat().st_mode) == 0o666 & ~mask


async def test_write_into_a_directory_path_is_refused(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="is a directory"):
        await WriteFile().run({"path": "src", "content": "x"}, ctx)


async def test_write_through_a_symlink_inside_the_cwd_replaces_the_target(ctx: ToolContext) -> None:
    (ctx.cwd / "alias.py").symlink_to(ctx.cwd / "src" / "app.py")
    result = await WriteFile().run({"path": "alias.py", "content": "x = 1\n"}, ctx)
    assert (ctx.cwd / "alias.py").is_symlink()
    assert (ctx.cwd / "src" / "app.py").read_text() == "x = 1\n"
    assert result.locations[0][0] == ctx.cwd / "src" / "app.py"


# ── the editor's file system ─────────────────────────────────────────────────────────────────


def _same(a: ToolResult, b: ToolResult) -> None:
    assert (a.text, a.is_error, a.locations, a.diffs) == (b.text, b.is_error, b.locations, b.diffs)


async def test_edit_and_write_give_the_same_results_through_the_editor_fs(cwd: Path) -> None:
    app = cwd / "src" / "app.py"
    editor = EditorFS({app: APP})
    local_ctx, editor_ctx = ToolContext(cwd=cwd), ToolContext(cwd=cwd, fs=editor)
    edit = {"path": "src/app.py", "old_string": "greet", "new_string": "hail"}
    with pytest.raises(ToolError, match="occurs 2 times"):
        await EditFile().run(edit, editor_ctx)
    edit["old_string"] = "def greet"
    via_editor = await EditFile().run(edit, editor_ctx)
    assert app.read_text() == APP  # the editor got the change, not the disk
    _same(via_editor, await EditFile().run(edit, local_ctx))
    assert editor.files[app] == app.read_text()

    write = {"path": "src/app.py", "content": "print('hi')\n"}
    _same(await WriteFile().run(write, editor_ctx), await WriteFile().run(write, local_ctx))
    assert editor.files[app] == app.read_text() == "print('hi')\n"
    assert {kind for kind, _ in editor.calls} == {"read", "write"}
    assert all(path.is_absolute() for _, path in editor.calls)


async def test_edit_reads_the_editors_unsaved_buffer_not_the_disk(cwd: Path) -> None:
    app = cwd / "src" / "app.py"
    editor = EditorFS({app: "unsaved = True\n"})
    result = await EditFile().run(
        {"path": "src/app.py", "old_string": "True", "new_string": "False"}, ToolContext(cwd=cwd, fs=editor)
    )
    assert editor.files[app] == "unsaved = False\n"
    assert result.diffs == (Diff(app, "unsaved = True\n", "unsaved = False\n"),)


async def test_an_editor_fs_error_is_a_tool_error(cwd: Path) -> None:
    (cwd / "gone.py").write_text("x\n")
    with pytest.raises(ToolError, match="resource not found"):
        await EditFile().run(
            {"path": "gone.py", "old_string": "x", "new_string": "y"}, ToolContext(cwd=cwd, fs=EditorFS({}))
        )


async def test_read_file_gives_the_same_text_through_the_editor_fs(cwd: Path) -> None:
    app = cwd / "src" / "app.py"
    editor_ctx = ToolContext(cwd=cwd, fs=EditorFS({app: APP}))
    for args in ({"path": "src/app.py"}, {"path": "src/app.py", "offset": 2, "limit": 2}):
        local = await ReadFile().run(args, ToolContext(cwd=cwd))
        via_editor = await ReadFile().run(args, editor_ctx)
        assert (via_editor.text, via_editor.locations) == (local.text, local.locations)
    capped = ReadFile(max_lines=3)
    assert (await capped.run({"path": "src/app.py"}, editor_ctx)).text == (
        await capped.run({"path": "src/app.py"}, ToolContext(cwd=cwd))
    ).text


# ── helpers ──────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("a\nb\nc\n", "a\nB\nc\n", (2, 1, 1)),
        ("a\nb\n", "a\nb\nc\n", (3, 1, 0)),
        ("a\nb\nc\n", "a\nb\n", (2, 0, 1)),
        ("", "x\ny\n", (1, 2, 0)),
        ("a\n", "", (1, 0, 1)),
        ("a\nb", "a\nb\n", (2, 1, 1)),
    ],
)
def test_changed_lines_counts_the_region_between_common_head_and_tail(
    old: str, new: str, expected: tuple[int, int, int]
) -> None:
    assert changed_lines(old, new) == expected


async def test_local_fs_refuses_files_over_its_cap(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("x" * 100)
    with pytest.raises(ToolError, match="more than the 64 bytes"):
        await LocalFileSystem(max_bytes=64).read_text(path)
    assert await LocalFileSystem(max_bytes=100).read_text(path) == "x" * 100
