"""A session's background commands in-process (`tools/shell/tasks.py`): the spool's cap and its
sweep, an editor terminal's output read since the last read, stopping, forgetting old tasks and
naming the ended ones once; the editor's view of a call that moves on after its turn."""

from __future__ import annotations

import fcntl
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_agent.claude_code.conventions.builtins import command_of
from acp_agent.errors import ToolError
from acp_agent.session.editor.updates import tool_call_progress
from acp_agent.tools.base import Progress, TerminalOutput, ToolContext
from acp_agent.tools.shell.run_command import RunCommand
from acp_agent.tools.shell.spool import Spool, SpoolFolder
from acp_agent.tools.shell.task_runs import RunLimits, TerminalRun
from acp_agent.tools.shell.task_tools import ReadCommandOutput, StopCommand
from acp_agent.tools.shell.tasks import BackgroundTasks, TaskLimits
from tests.support.procs import alive
from tests.support.waits import wait_until

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


# ── the spool ────────────────────────────────────────────────────────────────────────────────


def test_a_spool_keeps_at_most_its_cap_and_the_latest_output_whole(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "bg_1.log", cap=1000)
    for n in range(40):
        spool.write(f"{n:03d}".encode() * 25)  # 75 bytes a chunk, 3,000 in all
    spool.close()
    files = spool.files()
    assert [p.name for p in files] == ["bg_1.log.1", "bg_1.log"]
    assert sum(p.stat().st_size for p in files) <= 1000
    assert files[-1].read_bytes().endswith(b"039" * 25)  # the last chunk, whole
    assert (files[0].read_bytes() + files[-1].read_bytes()).endswith(
        b"".join(b"%03d" % n * 25 for n in (37, 38, 39))
    )
    assert oct(files[-1].stat().st_mode & 0o777) == "0o600"


def test_a_chunk_longer_than_half_the_cap_keeps_its_end(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "bg_1.log", cap=100)
    spool.write(b"a" * 500 + b"END")
    spool.close()
    assert spool.path.read_bytes() == b"a" * 47 + b"END"


def test_a_spool_that_cannot_be_written_turns_off(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "bg_1.log", cap=1000)
    assert spool._fd is not None
    os.close(spool._fd)
    spool._fd = os.open(spool.path, os.O_RDONLY)  # its next write fails, as on a full disk
    spool.write(b"lost")
    assert spool._fd is None
    spool.write(b"and nothing more")  # quietly: the output is still read from memory


def test_a_folder_left_by_a_killed_agent_is_swept_and_a_live_or_new_one_is_not(tmp_path: Path) -> None:
    parent = tmp_path / "tasks"
    parent.mkdir()
    stale, live, young = parent / "sess_a.1", parent / "sess_b.2", parent / "sess_c.3"
    for folder in (stale, live, young):
        folder.mkdir()
        (folder / "bg_1.log").write_text("output")
        (folder / ".lock").touch()
    held = os.open(live / ".lock", os.O_WRONLY)
    fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # its agent is alive
    old = time.time() - 3600
    for folder in (stale, live):
        os.utime(folder, (old, old))
    try:
        folder = SpoolFolder(parent, "sess_d")
        assert folder.spool("bg_1", 1000) is not None
        assert sorted(p.name for p in parent.iterdir()) == sorted(["sess_b.2", "sess_c.3", folder.name])
        folder.remove()
        assert not folder.path.exists()
    finally:
        os.close(held)


# ── an editor's terminal, read since the last read ───────────────────────────────────────────


def terminal_run() -> TerminalRun:
    return TerminalRun(host=None, terminal_id="t", limits=RunLimits(2048, 2.0, 0.25, 512))  # type: ignore[arg-type]


def test_a_terminal_is_read_from_where_the_last_read_ended() -> None:
    run = terminal_run()
    assert run._new_part(TerminalOutput("one\n", False, None)).text == "one\n"
    assert run._new_part(TerminalOutput("one\ntwo\n", False, None)).text == "two\n"
    assert run._new_part(TerminalOutput("one\ntwo\n", False, None)).text == ""


def test_a_terminal_that_dropped_its_start_is_read_after_what_was_read_last() -> None:
    run = terminal_run()
    run._new_part(TerminalOutput("a\nb\nc\n", False, None))
    part = run._new_part(TerminalOutput("b\nc\nd\n", True, None))  # the editor kept the last part
    assert part.text == "d\n"
    lost = run._new_part(TerminalOutput("x\ny\n", True, None))  # nothing read before is left
    assert lost.text.startswith("[earlier output dropped") and lost.text.endswith("x\ny\n")


# ── the tasks of a session ────────────────────────────────────────────────────────────────────


@pytest.fixture
async def tasks(tmp_path: Path) -> AsyncIterator[BackgroundTasks]:
    async with anyio.create_task_group() as group:
        found = BackgroundTasks(group, SpoolFolder(tmp_path / "tasks", "sess_x"), TaskLimits(kept_ended=1))
        yield found
        await found.aclose()


async def start(tasks: BackgroundTasks, command: str, cwd: Path, shown: list[Progress]) -> str:
    async def report(progress: Progress) -> None:
        shown.append(progress)

    ctx = ToolContext(cwd=cwd, report=report, background=tasks)
    result = await RunCommand().run({"command": command, "background": True}, ctx)
    task_id = result.raw_output["taskId"] if result.raw_output else None
    assert isinstance(task_id, str), result
    return task_id


@LINUX
async def test_stop_command_stops_a_running_task_and_its_children(
    tasks: BackgroundTasks, tmp_path: Path
) -> None:
    shown: list[Progress] = []
    task_id = await start(tasks, "sleep 300 & echo child=$!; wait", tmp_path, shown)
    ctx = ToolContext(cwd=tmp_path, background=tasks)
    printed: list[str] = []

    async def child_named() -> bool:  # once the shell has printed it: nothing else tells
        printed.append((await ReadCommandOutput().run({"task_id": task_id}, ctx)).text.split("\n", 1)[1])
        return "child=" in "".join(printed)

    await wait_until(child_named, "the shell to name its child")
    child = int("".join(printed).split("child=")[1].split()[0])
    result = await StopCommand().run({"task_id": task_id}, ctx)
    assert result.text.startswith(f"{task_id} `sleep 300 & echo child=$!; wait`: stopped after"), result.text
    assert result.raw_output is not None and result.raw_output["stopped"] is True
    assert not alive(child)
    assert shown[-1].status == "completed" and "stopped after" in (shown[-1].text or "")
    again = await StopCommand().run({"task_id": task_id}, ctx)
    assert "ended already: nothing to stop" in again.text


async def test_a_read_waits_for_the_end_and_a_failure_is_shown_failed(
    tasks: BackgroundTasks, tmp_path: Path
) -> None:
    shown: list[Progress] = []
    task_id = await start(tasks, "echo out; exit 3", tmp_path, shown)
    result = await ReadCommandOutput().run(
        {"task_id": task_id, "wait": 30}, ToolContext(cwd=tmp_path, background=tasks)
    )
    assert result.text == f"{task_id} `echo out; exit 3`: exit code 3 after {result.text.split('after ')[1]}"
    assert result.text.endswith("\nout\n")
    assert shown[-1].status == "failed"
    assert tasks.news() is None  # the model has seen how it ended


async def test_ended_tasks_are_named_once_and_old_ones_forgotten_with_their_spools(
    tasks: BackgroundTasks, tmp_path: Path
) -> None:
    first = await start(tasks, "echo one", tmp_path, [])
    await tasks.tasks[first].done.wait()
    second = await start(tasks, "echo two", tmp_path, [])
    await tasks.tasks[second].done.wait()
    news = tasks.news()
    assert news is not None and first in news and second in news and "exit code 0" in news
    assert tasks.news() is None
    spooled = tasks.tasks[second].spool
    assert spooled is not None and spooled.files()
    third = await start(tasks, "sleep 300", tmp_path, [])
    assert list(tasks.tasks) == [second, third]  # kept_ended=1: the oldest ended one is forgotten
    fourth = await start(tasks, "true", tmp_path, [])
    await tasks.tasks[fourth].done.wait()
    await start(tasks, "true", tmp_path, [])
    assert list(tasks.tasks)[:2] == [third, fourth] and not spooled.files()
    with pytest.raises(ToolError, match=r"no background command 'bg_0' in this session \(its commands: "):
        await tasks.read("bg_0", 0)


async def test_a_closed_session_starts_nothing(tmp_path: Path) -> None:
    async with anyio.create_task_group() as group:
        tasks = BackgroundTasks(group)
        task_id = await start(tasks, "sleep 300", tmp_path, [])
        await tasks.aclose()
        assert not tasks.tasks[task_id].running and tasks.tasks[task_id].state() == "stopped"
        assert tasks.refusal() is not None and "closing" in tasks.refusal()  # type: ignore[operator]
        with pytest.raises(ToolError, match="closing"):
            await start(tasks, "true", tmp_path, [])


async def test_without_a_session_a_background_command_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="not available here"):
        await RunCommand().run({"command": "true", "background": True}, ToolContext(cwd=tmp_path))
    with pytest.raises(ToolError, match="not available here"):
        await ReadCommandOutput().run({"task_id": "bg_00000000"}, ToolContext(cwd=tmp_path))


# ── what the editor and the / menu see ─────────────────────────────────────────────────────────


def test_a_status_alone_leaves_the_calls_content_as_it_is() -> None:
    assert tool_call_progress("c", None, None, "failed") == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "status": "failed",
    }
    assert tool_call_progress("c", None, None)["content"] == [
        {"type": "content", "content": {"type": "text", "text": ""}}
    ]


def test_tasks_is_a_built_in_command() -> None:
    prompt: list[dict[str, Any]] = [{"type": "text", "text": "/tasks"}]
    assert command_of(prompt) == ("tasks", "")
    assert command_of([{"type": "text", "text": "/taskss"}]) is None
