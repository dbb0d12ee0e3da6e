"""run_command: exit codes, process-group kills (timeout, cancel, leftovers), caps, throttled
tail-only progress, and the editor-terminal path with kill + release on timeout and cancel."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.errors import PathOutsideCwd, ToolError
from acp_agent.tools.base import Progress, TerminalExit, TerminalOutput, ToolContext, ToolResult
from acp_agent.tools.shell.run_command import RunCommand

FAST_KILL = RunCommand(kill_grace=0.5)


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    root = (tmp_path / "work").resolve()
    (root / "sub").mkdir(parents=True)
    return root


@pytest.fixture
def ctx(cwd: Path) -> ToolContext:
    return ToolContext(cwd=cwd)


def running(pid: int) -> bool:
    """Alive and not a zombie (an orphaned zombie may linger where pid 1 does not reap)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # pragma: no cover - no /proc
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat[stat.rindex(")") + 2] not in "ZX"


def pid_in(text: str) -> int:
    found = re.search(r"^PID=(\d+)$", text, re.MULTILINE)
    assert found, text
    return int(found.group(1))


def test_run_command_has_a_closed_schema_and_asks_for_execute_permission() -> None:
    tool = RunCommand()
    schema: dict[str, Any] = tool.input_schema
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["command"]
    assert schema["properties"]["timeout"]["maximum"] == 600
    assert tool.kind == "execute" and tool.permission == "execute"


def test_title_is_the_short_command_and_the_allowance_covers_the_timeout() -> None:
    tool = RunCommand()
    assert tool.title({"command": "pytest -q"}) == "Run `pytest -q`"
    assert tool.title({"command": "make\nmake test"}) == "Run `make …`"
    assert len(tool.title({"command": "x" * 500})) < 80
    assert tool.time_allowance({}) > 120
    assert 600 < tool.time_allowance({"timeout": 600}) < 660


# ── local: results ───────────────────────────────────────────────────────────────────────────


async def test_exit_code_and_combined_output_go_back(ctx: ToolContext) -> None:
    result = await RunCommand().run({"command": "echo out; echo err >&2"}, ctx)
    assert result.text == "exit code 0\nout\nerr\n"
    assert not result.is_error and result.terminal_id is None


async def test_a_non_zero_exit_is_a_result_not_an_error(ctx: ToolContext) -> None:
    result = await RunCommand().run({"command": "echo failing; exit 3"}, ctx)
    assert result.text == "exit code 3\nfailing\n"
    assert not result.is_error
    assert result.raw_output is not None and result.raw_output["exitCode"] == 3


async def test_no_output_says_so(ctx: ToolContext) -> None:
    assert (await RunCommand().run({"command": "true"}, ctx)).text == "exit code 0\n(no output)"


async def test_a_signal_death_is_named(ctx: ToolContext) -> None:
    result = await RunCommand().run({"command": "kill -SEGV $$"}, ctx)
    assert result.text.startswith("terminated by signal SIGSEGV")


async def test_cwd_is_confined_and_must_be_a_directory(ctx: ToolContext) -> None:
    assert (await RunCommand().run({"command": "pwd", "cwd": "sub"}, ctx)).text == (
        f"exit code 0\n{ctx.cwd / 'sub'}\n"
    )
    with pytest.raises(PathOutsideCwd):
        await RunCommand().run({"command": "pwd", "cwd": ".."}, ctx)
    with pytest.raises(ToolError, match="no such directory"):
        await RunCommand().run({"command": "pwd", "cwd": "nope"}, ctx)


async def test_stdin_is_empty_so_nothing_waits_for_input(ctx: ToolContext) -> None:
    with anyio.fail_after(10):
        result = await RunCommand().run({"command": "cat; echo done"}, ctx)
    assert result.text == "exit code 0\ndone\n"


async def test_the_agents_api_key_is_not_passed_to_commands(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    monkeypatch.setenv("SOME_SETTING", "kept")
    result = await RunCommand().run({"command": 'echo "${ANTHROPIC_API_KEY:-unset} $SOME_SETTING"'}, ctx)
    assert result.text == "exit code 0\nunset kept\n"


# ── local: the process group ─────────────────────────────────────────────────────────────────


async def test_timeout_kills_the_whole_group_and_returns_the_partial_output(ctx: ToolContext) -> None:
    # The timeout leaves a loaded box time to start the shell and let it print (a race at 0.5 s).
    with anyio.fail_after(30):  # a hang guard: the grandchild holds the output pipe for 300 s
        result = await FAST_KILL.run(
            {"command": "sleep 300 & echo PID=$!; echo partial; wait", "timeout": 3}, ctx
        )
    assert result.is_error
    assert result.text.startswith("timed out after 3s; process group killed\n")
    assert "partial" in result.text
    assert not running(pid_in(result.text))  # the grandchild is gone, not orphaned


async def test_a_group_that_ignores_sigterm_gets_sigkill(ctx: ToolContext) -> None:
    result = await RunCommand(kill_grace=0.3).run(  # 3 s: the trap is set and the PID printed by then
        {"command": "trap '' TERM; sleep 300 & echo PID=$!; wait; wait", "timeout": 3}, ctx
    )
    assert result.text.startswith("timed out")
    assert not running(pid_in(result.text))


async def test_background_leftovers_are_stopped_when_the_command_ends(ctx: ToolContext) -> None:
    with anyio.fail_after(10):  # a hang guard: each leftover would run for 300 s
        detached = await FAST_KILL.run({"command": "sleep 300 >/dev/null 2>&1 & echo PID=$!"}, ctx)
        holding_stdout = await FAST_KILL.run({"command": "sleep 300 & echo PID=$!"}, ctx)
    for result in (detached, holding_stdout):
        assert result.text.startswith("exit code 0\n") and not result.is_error
        assert not running(pid_in(result.text))


async def test_cancel_kills_the_group(ctx: ToolContext) -> None:
    ready = anyio.Event()
    seen: list[str] = []

    async def report(progress: Progress) -> None:
        seen.append(progress.text or "")
        if "ready" in (progress.text or ""):
            ready.set()

    outcome: list[ToolResult] = []
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:

            async def run() -> None:
                outcome.append(
                    await FAST_KILL.run(
                        {"command": "sleep 300 & echo PID=$!; echo ready; wait"},
                        ToolContext(cwd=ctx.cwd, report=report),
                    )
                )

            tg.start_soon(run)
            await ready.wait()
            tg.cancel_scope.cancel()
    assert outcome == []  # cancelled, not finished
    assert not running(pid_in("".join(seen)))
    assert seen[-1].startswith("cancelled after ") and "ready" in seen[-1]


# ── local: caps and progress ─────────────────────────────────────────────────────────────────


async def test_large_output_keeps_head_and_tail_within_the_cap_and_says_how_much_was_cut(
    ctx: ToolContext,
) -> None:
    tool = RunCommand(max_output_bytes=4096)
    result = await tool.run(
        {"command": "echo FIRST; head -c 200000 /dev/zero | tr '\\0' a; echo; echo LAST"}, ctx
    )
    status, output = result.text.split("\n", 1)
    assert status == "exit code 0" and not result.is_error
    assert len(output.encode()) <= 4096
    assert output.startswith("FIRST\naaa") and output.endswith("aaa\nLAST\n")
    note = re.search(r"\n\[… ([\d,]+) bytes cut …\]\n", output)
    assert note is not None
    cut = int(note.group(1).replace(",", ""))
    total = len("FIRST\n") + 200000 + len("\nLAST\n")
    assert len(output.encode()) - len(note.group(0).encode()) + cut == total
    assert result.raw_output is not None and result.raw_output["truncated"] is True


async def test_the_cap_never_splits_a_character(ctx: ToolContext) -> None:
    result = await RunCommand(max_output_bytes=1000).run(
        {"command": "for i in $(seq 1 2000); do printf 'é€'; done"}, ctx
    )
    assert "bytes cut" in result.text and "\ufffd" not in result.text


async def test_output_that_fits_is_returned_whole(ctx: ToolContext) -> None:
    result = await RunCommand(max_output_bytes=4096).run({"command": "seq 1 500"}, ctx)
    assert result.text == "exit code 0\n" + "".join(f"{i}\n" for i in range(1, 501))


# 30 bursts of ~3 KB, 40 ms apart: ~90 KB over more than a second.
BURSTS = "for i in $(seq 1 30); do echo line-$i; head -c 3000 /dev/zero | tr '\\0' x; echo; sleep 0.04; done"


async def progress_of(tool: RunCommand, ctx: ToolContext) -> list[str]:
    """Run BURSTS with `tool`; return the text of every progress update it sent."""
    updates: list[str] = []

    async def report(progress: Progress) -> None:
        assert progress.terminal_id is None
        updates.append(progress.text or "")

    result = await tool.run({"command": BURSTS}, ToolContext(cwd=ctx.cwd, report=report))
    assert result.text.startswith("exit code 0\nline-1\n")
    return updates


async def test_progress_is_throttled_to_one_update_per_interval(ctx: ToolContext) -> None:
    assert RunCommand().progress_interval == 0.25  # D6: at most one progress update per 250 ms
    # An interval longer than the command: 90 KB of output still make one update of at most the
    # tail, so the bytes sent grow with the duration, never with the output.
    updates = await progress_of(RunCommand(progress_tail_bytes=2048, progress_interval=3600), ctx)
    assert len(updates) == 1 and len(updates[0].encode()) <= 2048, updates


async def test_progress_carries_only_the_tail(ctx: ToolContext) -> None:
    updates = await progress_of(RunCommand(progress_tail_bytes=2048, progress_interval=0), ctx)
    assert len(updates) >= 2
    assert all(len(text.encode()) <= 2048 for text in updates)
    later = [text for text in updates if "earlier bytes not shown" in text]
    assert later and all("line-1\n" not in text for text in later)


async def test_a_quiet_command_sends_no_progress(ctx: ToolContext) -> None:
    updates: list[Progress] = []

    async def report(progress: Progress) -> None:
        updates.append(progress)

    await RunCommand().run({"command": "sleep 0.3"}, ToolContext(cwd=ctx.cwd, report=report))
    assert updates == []


# ── the editor's terminal ────────────────────────────────────────────────────────────────────


class FakeTerminalHost:
    """An editor's terminal/* that records calls; `exit` None means the command never ends."""

    def __init__(self, output: str = "", exit: TerminalExit | None = None, fail_wait: bool = False) -> None:
        self.calls: list[tuple[str, ...]] = []
        self.out, self.exit, self.fail_wait = output, exit, fail_wait
        self.exited, self.waiting = anyio.Event(), anyio.Event()
        if exit is not None:
            self.exited.set()

    async def create(self, command: str, args: list[str], cwd: Path, output_byte_limit: int) -> str:
        self.calls.append(("create", command, *args, str(cwd), str(output_byte_limit)))
        return "term-1"

    async def wait_for_exit(self, terminal_id: str) -> TerminalExit:
        self.calls.append(("wait_for_exit", terminal_id))
        self.waiting.set()
        if self.fail_wait:
            raise ToolError("terminal/wait_for_exit failed: internal error")
        await self.exited.wait()
        assert self.exit is not None
        return self.exit

    async def output(self, terminal_id: str) -> TerminalOutput:
        self.calls.append(("output", terminal_id))
        return TerminalOutput(self.out, truncated=False, exit=self.exit)

    async def kill(self, terminal_id: str) -> None:
        self.calls.append(("kill", terminal_id))
        self.exit = TerminalExit(exit_code=None, signal="SIGKILL")
        self.exited.set()

    async def release(self, terminal_id: str) -> None:
        self.calls.append(("release", terminal_id))

    def names(self) -> list[str]:
        return [call[0] for call in self.calls]


def terminal_ctx(cwd: Path, host: FakeTerminalHost, reports: list[Progress]) -> ToolContext:
    async def report(progress: Progress) -> None:
        reports.append(progress)

    return ToolContext(cwd=cwd, terminal=host, report=report)


async def test_with_a_terminal_the_editor_runs_it_embedded_and_it_is_released(cwd: Path) -> None:
    host = FakeTerminalHost("hello\n", TerminalExit(exit_code=0, signal=None))
    reports: list[Progress] = []
    result = await RunCommand().run(
        {"command": "touch ran-locally; echo hello", "cwd": "sub"}, terminal_ctx(cwd, host, reports)
    )
    assert host.calls[0][:4] == ("create", host.calls[0][1], "-c", "touch ran-locally; echo hello")
    assert host.calls[0][4] == str(cwd / "sub")
    assert host.names() == ["create", "wait_for_exit", "output", "release"]
    assert reports == [Progress(terminal_id="term-1")]
    assert result.text == "exit code 0\nhello\n" and not result.is_error
    assert result.terminal_id == "term-1"
    assert not (cwd / "sub" / "ran-locally").exists()


async def test_terminal_non_zero_exit_is_a_result(cwd: Path) -> None:
    host = FakeTerminalHost("boom\n", TerminalExit(exit_code=2, signal=None))
    result = await RunCommand().run({"command": "false"}, terminal_ctx(cwd, host, []))
    assert result.text == "exit code 2\nboom\n" and not result.is_error


async def test_terminal_timeout_kills_then_reads_output_then_releases(cwd: Path) -> None:
    host = FakeTerminalHost("partial\n")
    with anyio.fail_after(5):
        result = await RunCommand().run({"command": "sleep 300", "timeout": 0.2}, terminal_ctx(cwd, host, []))
    assert host.names() == ["create", "wait_for_exit", "kill", "output", "release"]
    assert result.is_error and result.terminal_id == "term-1"
    assert result.text == "timed out after 0.2s; the command was killed\npartial\n"


async def test_terminal_cancel_kills_then_reads_output_then_releases(cwd: Path) -> None:
    host, reports = FakeTerminalHost(output="step 1 done\n"), list[Progress]()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(RunCommand().run, {"command": "sleep 300"}, terminal_ctx(cwd, host, reports))
            await host.waiting.wait()
            await anyio.sleep(0.2)  # deliberate: how long it runs, which its last word must show
            tg.cancel_scope.cancel()
    assert host.names() == ["create", "wait_for_exit", "kill", "output", "release"]
    embedded, last = reports
    assert embedded == Progress(terminal_id="term-1")
    # Its last word: how long it ran and its output so far, instead of "not executed".
    assert last.cancelled and last.text is not None
    assert re.match(r"cancelled after (\d+\.\d) s; the command was killed\nstep 1 done\n$", last.text)
    assert float(last.text.split()[2]) >= 0.2


async def test_terminal_is_released_when_the_editor_answers_an_error(cwd: Path) -> None:
    host = FakeTerminalHost(fail_wait=True)
    with pytest.raises(ToolError, match="wait_for_exit failed"):
        await RunCommand().run({"command": "ls"}, terminal_ctx(cwd, host, []))
    assert host.names()[-1] == "release" and "kill" in host.names()


async def test_terminal_output_is_capped_too(cwd: Path) -> None:
    host = FakeTerminalHost("y" * 100_000, TerminalExit(exit_code=0, signal=None))
    result = await RunCommand(max_output_bytes=2048).run({"command": "yes"}, terminal_ctx(cwd, host, []))
    assert "bytes cut" in result.text and len(result.text.encode()) <= 2048 + len("exit code 0\n")
