"""What every bench shares: the commands, a clean environment, and a threads-and-pipes ACP client.

The same `Peer` drives the agent and the baseline, so both are timed the same way: arrival times
are taken on the client side (`time.perf_counter()` in the reader thread, as each line arrives),
CPU is read from `/proc/<pid>/task/*/schedstat` (ns on CPU, summed over the live threads) and
memory from `/proc/<pid>/status`. Every process runs in its own session and is killed with its
group if it outlives its welcome, so no bench leaves an orphan behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "AGENT",
    "BASELINE",
    "FLOOR",
    "PYTHON",
    "REPO",
    "STACK_FLOOR",
    "BenchError",
    "Peer",
    "Scratch",
    "cpu_ns",
    "median",
    "p90",
    "rss_kb",
    "spawn",
    "stat_cpu_ns",
]

REPO = Path(__file__).resolve().parents[1]
_VENV_PYTHON = REPO / ".venv" / "bin" / "python"
PYTHON = str(_VENV_PYTHON if _VENV_PYTHON.exists() else Path(sys.executable))
"""The interpreter of the processes under test (the project's venv when there is one)."""

AGENT = (PYTHON, "-m", "acp_agent")
BASELINE = (PYTHON, str(REPO / "bench" / "baselines" / "relay.py"))
FLOOR = (PYTHON, str(REPO / "bench" / "baselines" / "sdk_floor.py"))
STACK_FLOOR = (PYTHON, str(REPO / "bench" / "baselines" / "stack_floor.py"))
"""Cold start's second reference: a minimal ACP agent on the agent's own stack (anyio, pydantic,
structlog), so spawn → `session/new` shows what that stack costs before the agent adds anything."""
MODEL = "claude-test-1"


class BenchError(RuntimeError):
    """A process under test misbehaved (no answer in time, wrong answer): the figure is void."""


# ── environment ──────────────────────────────────────────────────────────────────────────────
class Scratch:
    """A temp dir with HOME, the XDG dirs, a state dir and a tiny workspace; removed on close."""

    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="acp-bench-")
        root = Path(self._tmp.name)
        self.root = root
        self.home = root / "home"
        self.workspace = root / "workspace"
        self.logs = root / "logs"
        for path in (self.home, self.workspace, self.logs, root / "state"):
            path.mkdir(parents=True)
        (self.workspace / "README.md").write_text("# bench workspace\n")
        self.extras = root / "request-extras.json"
        self._n = 0

    def note_agent_request(self, body: Mapping[str, Any]) -> None:
        """Keep the agent's `system`, `tools` and `max_tokens` for the baseline to send too
        (it reads them at its first prompt), so both send requests of the same size."""
        if not self.extras.exists():
            extras = {k: body[k] for k in ("system", "tools", "max_tokens") if k in body}
            self.extras.write_text(json.dumps(extras))

    def env(self, base_url: str, *, streaming: bool = True, **extra: str) -> dict[str, str]:
        """Exactly the environment a process under test gets: nothing of the caller's leaks in.

        `BENCH_AGENT_PYTHONPATH` (in the caller's environment) runs the agent from another
        checkout, e.g. an export of an earlier commit, for a before/after with the same benches."""
        home = str(self.home)
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": home,
            "XDG_CONFIG_HOME": f"{home}/.config",
            "XDG_DATA_HOME": f"{home}/.local/share",
            "XDG_STATE_HOME": f"{home}/.local/state",
            "XDG_CACHE_HOME": f"{home}/.cache",
            "ANTHROPIC_CONFIG_DIR": f"{home}/.config/anthropic",
            "ACP_AGENT_STATE_DIR": str(self.root / "state"),
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            "PYTHONPATH": os.environ.get("BENCH_AGENT_PYTHONPATH") or str(REPO),
            "ANTHROPIC_API_KEY": "bench",
            "ANTHROPIC_BASE_URL": base_url,
            "ACP_AGENT_MODEL": MODEL,
            "ACP_AGENT_STREAMING": "1" if streaming else "0",
            "BENCH_REQUEST_EXTRAS": str(self.extras),
        }
        env.update(extra)
        return env

    def stderr_path(self, label: str) -> Path:
        self._n += 1
        return self.logs / f"{self._n:04d}-{label}.log"

    def close(self) -> None:
        self._tmp.cleanup()

    def __enter__(self) -> Scratch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ── /proc readers ────────────────────────────────────────────────────────────────────────────
def cpu_ns(pid: int) -> int:
    """ns on CPU of all live threads of `pid` (first field of each task's schedstat)."""
    total = 0
    base = f"/proc/{pid}/task"
    for tid in os.listdir(base):
        with (
            contextlib.suppress(FileNotFoundError, ProcessLookupError),
            open(f"{base}/{tid}/schedstat", "rb") as f,
        ):
            total += int(f.read().split(maxsplit=1)[0])
    return total


_TICK_NS = 1e9 / os.sysconf("SC_CLK_TCK")


def stat_cpu_ns(pid: int) -> int:
    """utime + stime of the whole process from /proc/<pid>/stat, threads that ended included,
    at clock-tick resolution: a cross-check for `cpu_ns`, which sees only live threads."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return int((int(fields[11]) + int(fields[12])) * _TICK_NS)


def rss_kb(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak) in KiB."""
    out: dict[str, int] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":", 1)
                out[key] = int(value.split()[0])
    return out


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def p90(values: Sequence[float]) -> float:
    """Nearest-rank 90th percentile (the 9th of 10)."""
    ordered = sorted(values)
    return float(ordered[max(0, -(-9 * len(ordered) // 10) - 1)])


# ── the client ───────────────────────────────────────────────────────────────────────────────
_CHUNK = b'"agent_message_chunk"'


class Peer:
    """One ACP server process (agent or baseline) driven over pipes by a reader thread.

    `agent_message_chunk` lines are counted without parsing (the client must not be the
    bottleneck of a throughput figure); every other line is parsed. Agent→client requests are
    answered -32601 (the bench client has no capabilities).
    """

    def __init__(self, command: Sequence[str], env: Mapping[str, str], cwd: Path, stderr_path: Path) -> None:
        self._stderr_path = stderr_path
        self._write_lock = threading.Lock()
        self._cond = threading.Condition()
        self._responses: dict[int, tuple[float, dict[str, Any]]] = {}
        self._next_id = 1
        self.chunks = 0
        self.first_chunk_at: float | None = None
        self.last_chunk_at: float | None = None
        self.first_chunk = threading.Event()
        self.other_updates = 0
        self.eof_at: float | None = None
        self.on_message: Callable[[dict[str, Any], float], None] | None = None
        """Called (in the reader thread) with every parsed line and its arrival time."""
        with open(stderr_path, "wb") as err:
            self.spawned_at = time.perf_counter()
            self.proc = subprocess.Popen(
                list(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=dict(env),
                cwd=cwd,
                start_new_session=True,
            )
        self.pid = self.proc.pid
        self._exit_fd: int | None = None
        with contextlib.suppress(OSError, AttributeError):
            self._exit_fd = os.pidfd_open(self.pid)
        self._reader = threading.Thread(target=self._read, name=f"peer-{self.pid}", daemon=True)
        self._reader.start()

    # ── reading ──────────────────────────────────────────────────────────────────────────────
    def _read(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        clock = time.perf_counter
        for line in stdout:
            now = clock()
            if _CHUNK in line:
                self.chunks += 1
                self.last_chunk_at = now
                if self.first_chunk_at is None:
                    self.first_chunk_at = now
                    self.first_chunk.set()
                continue
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if self.on_message is not None:
                self.on_message(message, now)
            if "id" in message and "method" in message:
                self.answer_request(message)
            elif "id" in message:
                with self._cond:
                    self._responses[message["id"]] = (now, message)
                    self._cond.notify_all()
            else:
                self.other_updates += 1
        self.eof_at = clock()
        with self._cond:
            self._cond.notify_all()

    def answer_request(self, message: dict[str, Any]) -> None:
        """Answer an agent→client request (called in the reader thread): -32601 unless overridden."""
        self._send(
            {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}}
        )

    def reset_chunks(self) -> None:
        """Forget chunks seen so far (call only while no turn is streaming)."""
        self.chunks = 0
        self.first_chunk_at = self.last_chunk_at = None
        self.first_chunk.clear()

    # ── writing ──────────────────────────────────────────────────────────────────────────────
    def _send(self, message: dict[str, Any]) -> float:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        stdin = self.proc.stdin
        assert stdin is not None
        with self._write_lock:
            sent = time.perf_counter()
            try:
                stdin.write(data)
                stdin.flush()
            except (BrokenPipeError, ValueError, OSError) as exc:
                raise BenchError(f"pid {self.pid} closed stdin: {exc}{self.stderr_tail()}") from None
        return sent

    def start(self, method: str, params: Any) -> tuple[int, float]:
        """Send a request; return its id and the time it was written."""
        rid = self._next_id
        self._next_id += 1
        return rid, self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})

    def notify(self, method: str, params: Any) -> float:
        return self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait(self, rid: int, timeout: float = 30.0) -> tuple[float, dict[str, Any]]:
        """(arrival time, response) of request `rid`; BenchError when it does not come in time."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while rid not in self._responses:
                left = deadline - time.monotonic()
                if left <= 0 or self.eof_at is not None:
                    why = "closed stdout" if self.eof_at is not None else f"no answer in {timeout} s"
                    raise BenchError(f"pid {self.pid}: {why} (request {rid}){self.stderr_tail()}")
                self._cond.wait(left)
            return self._responses.pop(rid)

    def call(self, method: str, params: Any, timeout: float = 30.0) -> tuple[float, float, Any]:
        """(sent, answered, result); an error answer is a BenchError."""
        rid, sent = self.start(method, params)
        answered, message = self.wait(rid, timeout)
        if "error" in message:
            raise BenchError(f"{method} failed: {message['error']}{self.stderr_tail()}")
        return sent, answered, message.get("result")

    # ── ACP shortcuts ────────────────────────────────────────────────────────────────────────
    def initialize(self) -> float:
        """Answer time of `initialize`."""
        return self.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})[1]

    def new_session(self, cwd: Path) -> tuple[float, str]:
        _, answered, result = self.call("session/new", {"cwd": str(cwd), "mcpServers": []})
        return answered, str(result["sessionId"])

    def start_prompt(self, session_id: str, text: str) -> tuple[int, float]:
        return self.start(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        )

    def prompt(self, session_id: str, text: str, timeout: float = 60.0) -> tuple[float, float, Any]:
        rid, sent = self.start_prompt(session_id, text)
        answered, message = self.wait(rid, timeout)
        if "error" in message:
            raise BenchError(f"prompt {text!r} failed: {message['error']}{self.stderr_tail()}")
        return sent, answered, message["result"]

    def cpu_ns(self) -> int:
        return cpu_ns(self.pid)

    def stat_cpu_ns(self) -> int:
        return stat_cpu_ns(self.pid)

    def rss_kb(self) -> dict[str, int]:
        return rss_kb(self.pid)

    # ── ending ───────────────────────────────────────────────────────────────────────────────
    def close_stdin(self) -> float:
        """EOF on stdin; returns when it was sent."""
        now = time.perf_counter()
        with self._write_lock, contextlib.suppress(OSError, ValueError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        return now

    def wait_exit(self, timeout: float) -> float | None:
        """When the process exited (pidfd: no polling delay), or None if it did not in time."""
        if self._exit_fd is not None:
            ready, _, _ = select.select([self._exit_fd], [], [], timeout)
            if not ready:
                return None
            now = time.perf_counter()
            self.proc.wait()
            return now
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        return time.perf_counter()

    def kill(self) -> None:
        """SIGKILL to the whole process group, then reap."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)

    def close(self, timeout: float = 10.0) -> None:
        """EOF, a bounded wait for exit, then the group is killed whatever happened."""
        if self.proc.poll() is None:
            self.close_stdin()
            self.wait_exit(timeout)
        self.kill()  # also takes any child the process left in its group
        self._reader.join(5)
        for stream in (self.proc.stdout, self.proc.stdin):
            with contextlib.suppress(OSError, ValueError):
                if stream is not None:
                    stream.close()
        if self._exit_fd is not None:
            os.close(self._exit_fd)
            self._exit_fd = None

    def stderr_tail(self, size: int = 1500) -> str:
        with contextlib.suppress(OSError):
            data = self._stderr_path.read_bytes()[-size:]
            if data:
                return "\n--- stderr tail ---\n" + data.decode("utf-8", "replace")
        return ""

    def __enter__(self) -> Peer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextlib.contextmanager
def spawn(command: Sequence[str], scratch: Scratch, env: Mapping[str, str], label: str) -> Iterator[Peer]:
    """A Peer that is always closed (and its group killed) when the block ends."""
    peer = Peer(command, env, scratch.workspace, scratch.stderr_path(label))
    try:
        yield peer
    finally:
        peer.close()
