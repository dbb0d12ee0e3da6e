"""`run_rg` streams a child's lines, stops it early, reaps it, and leaves nothing behind on cancel.

Both ways of running the child are covered: the direct pipe (POSIX) and `anyio.open_process`
(what Windows uses). The child is a small Python script, so each test controls what it prints.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

from acp_agent.tools.search import ripgrep
from acp_agent.tools.search.ripgrep import run_rg

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the children are checked through /proc")


@pytest.fixture(params=[True, False], ids=["pipe", "anyio"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Run the test both ways."""
    monkeypatch.setattr(ripgrep, "POSIX_PIPES", request.param)
    return bool(request.param)


def _script(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def _children() -> set[int]:
    """Our live (or unreaped) child processes, from /proc."""
    found: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            found.update(int(pid) for pid in (task / "children").read_text().split())
        except OSError:
            continue
    return found


async def test_every_line_arrives_and_the_exit_code_is_kept(tmp_path: Path, way: bool) -> None:
    code = "import sys; sys.stdout.write('a\\n' + 'b' * 200000 + '\\nlast'); sys.exit(3)"
    lines: list[bytes] = []
    run = await run_rg(_script(code), tmp_path, lambda line: lines.append(line) or True)
    assert lines == [b"a", b"b" * 200000, b"last"]
    assert run.code == 3
    assert run.stderr == ""


async def test_stderr_is_kept_and_the_child_runs_in_cwd(tmp_path: Path, way: bool) -> None:
    code = "import os, sys; print(os.getcwd()); sys.stderr.write('regex parse error'); sys.exit(2)"
    lines: list[bytes] = []
    run = await run_rg(_script(code), tmp_path, lambda line: lines.append(line) or True)
    assert lines == [os.fsencode(tmp_path.resolve())]
    assert (run.code, run.stderr) == (2, "regex parse error")


async def test_a_callback_that_says_stop_kills_the_child_and_reaps_it(tmp_path: Path, way: bool) -> None:
    before = _children()
    code = "import sys, time\nfor i in range(10**9):\n    print(i, flush=True)\n    time.sleep(0.001)"
    seen: list[bytes] = []
    with anyio.fail_after(10):
        run = await run_rg(_script(code), tmp_path, lambda line: seen.append(line) or len(seen) < 3)
    assert seen == [b"0", b"1", b"2"]
    assert run.code is None  # stopped by the callback, not ended by itself
    assert _children() == before  # killed and reaped: no zombie


async def test_a_cancel_while_the_child_is_silent_kills_and_reaps_it(tmp_path: Path, way: bool) -> None:
    before = _children()
    seen: list[bytes] = []
    code = "import time; print('started', flush=True); time.sleep(60)"
    started = anyio.Event()

    def on_line(line: bytes) -> bool:
        seen.append(line)
        started.set()
        return True

    # Cancelled once the child has spoken (a fixed delay could end before a loaded box started it).
    with anyio.fail_after(30):  # a hang guard: the child sleeps 60 s
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_rg, _script(code), tmp_path, on_line)
            await started.wait()
            tg.cancel_scope.cancel()
    assert tg.cancel_scope.cancelled_caught
    assert seen == [b"started"]
    assert _children() == before


async def test_a_child_that_outlives_its_output_is_awaited_not_killed(tmp_path: Path, way: bool) -> None:
    code = "import os, sys, time; print('x', flush=True); os.close(1); time.sleep(0.3); sys.exit(5)"
    with anyio.fail_after(10):
        run = await run_rg(_script(code), tmp_path, lambda line: True)
    assert run.code == 5  # it closed stdout and then ended on its own: its code is kept


async def test_a_missing_binary_is_an_os_error(tmp_path: Path, way: bool) -> None:
    with pytest.raises(OSError):
        await run_rg([str(tmp_path / "no-such-rg")], tmp_path, lambda line: True)


async def test_without_a_pidfd_the_exit_is_polled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ripgrep, "POSIX_PIPES", True)  # only the pipe way waits on a pidfd
    monkeypatch.setattr(ripgrep, "_pidfd", lambda pid: None)  # macOS, or a kernel before 5.3
    code = "import os, sys, time; os.close(1); time.sleep(0.2); sys.exit(4)"
    with anyio.fail_after(10):
        run = await run_rg(_script(code), tmp_path, lambda line: True)
    assert run.code == 4


async def test_nul_records_keep_newlines_inside_paths_across_chunk_boundaries(
    tmp_path: Path, way: bool
) -> None:
    """`--null` output: a path ends at a NUL, never at a newline it holds (issue 29 item 10)."""
    code = (
        "import sys, time\n"
        "out = sys.stdout.buffer\n"
        "parts = [b'x\\ninno', b'cent.txt\\x001:the ', b'needle\\ninnocent.txt\\x002:', b'b\\n']\n"
        "for part in [*parts, b'y\\x003:c']:\n"
        "    out.write(part); out.flush(); time.sleep(0.02)\n"  # apart: each part a read of its own
    )
    records: list[bytes] = []
    await run_rg(_script(code), tmp_path, lambda r: records.append(r) or True, "path-nul-line")
    assert records == [b"x\ninnocent.txt\x001:the needle", b"innocent.txt\x002:b", b"y\x003:c"]
    names: list[bytes] = []
    code = "import sys; sys.stdout.buffer.write(b'a\\nb\\x00c\\x00')"
    await run_rg(_script(code), tmp_path, lambda r: names.append(r) or True, "nul")
    assert names == [b"a\nb", b"c"]


async def test_files_skipped_for_their_size_are_read_from_debug_lines(tmp_path: Path, way: bool) -> None:
    lines = [
        "rg: DEBUG|rg::flags::hiargs|crates/core/flags/hiargs.rs:175: using 2 thread(s)",
        "rg: DEBUG|ignore::walk|crates/ignore/src/walk.rs:2011: ignoring ./.git: Ignore(IgnoreMatch(Hidden))",
        "rg: DEBUG|ignore::walk|crates/ignore/src/walk.rs:1998: ignoring ./logs/big.log: 40000000 bytes",
        "rg: regex parse error: something",
    ]
    code = f"import sys; sys.stderr.write({chr(10).join(lines)!r} + chr(10))"
    run = await run_rg([*_script(code), "--debug"], tmp_path, lambda r: True)
    assert run.skipped == [("logs/big.log", 40_000_000)]
    assert run.stderr == "rg: regex parse error: something"  # the debug chatter is left out
