"""Line framing over real fds: pipes, regular files, long lines, a full pipe, EPIPE."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from acp_agent.errors import LineTooLong
from acp_agent.rpc.framing import LineReader, LineWriter

TIMEOUT = 10


class Pipe:
    """A real os.pipe() that remembers which ends the test closed (fd numbers get reused)."""

    def __init__(self) -> None:
        self.r, self.w = os.pipe()
        self._open = {self.r, self.w}

    def close(self, fd: int) -> None:
        self._open.discard(fd)
        os.close(fd)

    def close_all(self) -> None:
        for fd in list(self._open):
            self.close(fd)


# What the writer keeps to itself, read by the tests alone (the package has no use for it).


def buffered(writer: LineWriter) -> int:
    """Bytes accepted by `send` and not yet written."""
    return len(writer._buf)


def is_broken(writer: LineWriter) -> bool:
    """True once the peer closed its end: nothing more can be delivered."""
    return writer._broken


class CountingWriter(LineWriter):
    """A `LineWriter` that counts its successful write(2) calls."""

    def __init__(self, fd: int) -> None:
        super().__init__(fd)
        self.write_calls = 0

    async def _write_some(self, pollable: bool) -> None:
        before = len(self._buf)
        await super()._write_some(pollable)
        if len(self._buf) < before and not self._stopped:
            self.write_calls += 1


@pytest.fixture
def pipe() -> Iterator[Pipe]:
    p = Pipe()
    yield p
    p.close_all()


async def read_all(reader: LineReader) -> list[bytes]:
    lines = []
    while (line := await reader.read_line()) is not None:
        lines.append(line)
    return lines


async def test_reader_splits_lines_strips_cr_and_keeps_the_last_unterminated_line(
    pipe: Pipe,
) -> None:
    read_fd, write_fd = pipe.r, pipe.w
    os.write(write_fd, b'{"a":1}\r\n\n{"b"')
    os.write(write_fd, b':2}\n{"c":3}')
    pipe.close(write_fd)
    reader = LineReader(read_fd)
    with anyio.fail_after(TIMEOUT):
        assert await read_all(reader) == [b'{"a":1}', b"", b'{"b":2}', b'{"c":3}']
        assert await reader.read_line() is None  # EOF stays EOF


async def test_reader_waits_for_data_on_an_empty_pipe_without_blocking_the_loop(
    pipe: Pipe,
) -> None:
    read_fd, write_fd = pipe.r, pipe.w
    reader = LineReader(read_fd)
    got: list[bytes | None] = []
    async with anyio.create_task_group() as tg:

        async def read_one() -> None:
            got.append(await reader.read_line())

        tg.start_soon(read_one)
        await anyio.wait_all_tasks_blocked()  # the reader is parked in wait_readable
        assert got == []
        os.write(write_fd, b"late line\n")
    assert got == [b"late line"]
    await reader.aclose()


async def test_reader_falls_back_to_plain_reads_on_a_regular_file(tmp_path: Path) -> None:
    path = tmp_path / "input.ndjson"
    path.write_bytes(b"one\n" + b"x" * 300_000 + b"\nthree")
    fd = os.open(path, os.O_RDONLY)
    try:
        reader = LineReader(fd)
        with anyio.fail_after(TIMEOUT):
            assert await read_all(reader) == [b"one", b"x" * 300_000, b"three"]
        assert os.get_blocking(fd)  # a regular file is never switched to non-blocking
    finally:
        os.close(fd)


async def test_reader_accepts_a_one_mebibyte_line(pipe: Pipe) -> None:
    read_fd, write_fd = pipe.r, pipe.w
    big = b'{"text":"' + b"y" * (1024 * 1024) + b'"}'
    writer = LineWriter(write_fd)
    reader = LineReader(read_fd)
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer.run)
            await writer.send(big + b"\n" + b"next\n")
            assert await reader.read_line() == big
            assert await reader.read_line() == b"next"
            await writer.aclose()


async def test_over_cap_line_is_skipped_and_reported_and_the_next_line_is_served(
    pipe: Pipe,
) -> None:
    read_fd, write_fd = pipe.r, pipe.w
    reader = LineReader(read_fd, max_line_bytes=100)
    writer = LineWriter(write_fd)
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer.run)

            async def send_then_close() -> None:
                # One over-cap line inside a single read, one spanning many reads, one at EOF.
                await writer.send(b"short\n" + b"a" * 101 + b"\nok\n")
                await writer.send(b"b" * 700_000 + b"\r\nafter\n")
                await writer.send(b"c" * 100 + b"\n" + b"d" * 5000)
                assert await writer.flush(TIMEOUT)
                await writer.aclose()
                pipe.close(write_fd)

            tg.start_soon(send_then_close)
            assert await reader.read_line() == b"short"
            with pytest.raises(LineTooLong) as first:
                await reader.read_line()
            assert (first.value.size, first.value.limit) == (101, 100)
            assert await reader.read_line() == b"ok"
            with pytest.raises(LineTooLong) as second:
                await reader.read_line()
            assert second.value.size == 700_001  # the \r counts: it was never a line of ours
            assert "100-byte limit" in str(second.value)
            assert await reader.read_line() == b"after"
            assert await reader.read_line() == b"c" * 100  # exactly at the cap is fine
            with pytest.raises(LineTooLong) as third:
                await reader.read_line()
            assert third.value.size == 5000
            assert await reader.read_line() is None


async def test_reader_restores_blocking_mode_on_close(pipe: Pipe) -> None:
    read_fd, write_fd = pipe.r, pipe.w
    os.write(write_fd, b"x\n")
    reader = LineReader(read_fd)
    assert await reader.read_line() == b"x"
    assert not os.get_blocking(read_fd)
    await reader.aclose()
    assert os.get_blocking(read_fd)


async def test_writer_sends_the_first_line_at_once(pipe: Pipe) -> None:
    read_fd, write_fd = pipe.r, pipe.w
    writer = LineWriter(write_fd)
    reader = LineReader(read_fd)
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer.run)
            await writer.send(b"first\n")
            assert await reader.read_line() == b"first"  # nothing else was sent to push it out
            await writer.aclose()


async def test_writer_coalesces_lines_sent_within_one_tick(pipe: Pipe) -> None:
    read_fd, write_fd = pipe.r, pipe.w
    writer = CountingWriter(write_fd)
    reader = LineReader(read_fd)
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer.run)
            for i in range(100):
                await writer.send(b"line %d\n" % i)
            assert await writer.flush(TIMEOUT)
            assert writer.write_calls == 1
            assert [await reader.read_line() for _ in range(100)] == [b"line %d" % i for i in range(100)]
            await writer.aclose()


async def test_writer_applies_back_pressure_while_nobody_reads(pipe: Pipe) -> None:
    read_fd, write_fd = pipe.r, pipe.w
    high_water = 256 * 1024
    writer = LineWriter(write_fd, high_water=high_water)
    chunk = b"z" * 16_383 + b"\n"
    total_chunks = 200  # 3.2 MiB: far more than the pipe (64 KiB) plus the buffer can hold
    sent = 0
    sender_done = anyio.Event()

    async def sender() -> None:
        nonlocal sent
        for _ in range(total_chunks):
            await writer.send(chunk)
            sent += 1
        sender_done.set()

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer.run)
            tg.start_soon(sender)
            await anyio.wait_all_tasks_blocked()
            # Pipe full, writer parked in wait_writable, sender parked waiting for room.
            assert not sender_done.is_set()
            assert sent < total_chunks
            assert high_water < buffered(writer) <= high_water + len(chunk)
            assert not await writer.flush(0.05)  # a flush gives up at its timeout

            reader = LineReader(read_fd)
            for _ in range(total_chunks):
                assert await reader.read_line() == chunk[:-1]
            await sender_done.wait()
            assert await writer.flush(TIMEOUT)
            await writer.aclose()
            await reader.aclose()


async def test_writer_stops_quietly_when_the_reader_is_gone(pipe: Pipe) -> None:
    read_fd, write_fd = pipe.r, pipe.w
    pipe.close(read_fd)
    writer = LineWriter(write_fd)
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer.run)
            await writer.send(b"nobody hears this\n")
        # run() returned by itself: the task group could exit.
    assert is_broken(writer)
    await writer.send(b"dropped\n")
    assert buffered(writer) == 0
    assert not await writer.flush(TIMEOUT)


async def test_writer_blocked_on_a_full_pipe_is_released_by_epipe(pipe: Pipe) -> None:
    read_fd, write_fd = pipe.r, pipe.w
    writer = LineWriter(write_fd, high_water=1024)
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer.run)
            await writer.send(b"q" * 200_000 + b"\n")
            blocked_send_returned = anyio.Event()

            async def blocked_send() -> None:
                await writer.send(b"more\n")
                blocked_send_returned.set()

            tg.start_soon(blocked_send)
            await anyio.wait_all_tasks_blocked()
            assert not blocked_send_returned.is_set()
            pipe.close(read_fd)  # the client exits with our output unread
            await blocked_send_returned.wait()
    assert is_broken(writer)


async def test_writer_close_restores_blocking_mode_and_drops_later_sends(
    pipe: Pipe,
) -> None:
    read_fd, write_fd = pipe.r, pipe.w
    writer = LineWriter(write_fd)
    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer.run)
            await writer.send(b"kept\n")
            assert await writer.flush(TIMEOUT)
            assert not os.get_blocking(write_fd)
            await writer.aclose()
    assert os.get_blocking(write_fd)
    await writer.send(b"dropped\n")
    assert buffered(writer) == 0
    assert not is_broken(writer)
    pipe.close(write_fd)
    assert os.read(read_fd, 100) == b"kept\n"
