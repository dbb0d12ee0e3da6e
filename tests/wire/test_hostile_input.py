"""Hostile input: whatever arrives on stdin, the agent never crashes, writes only JSON-RPC to
stdout, and answers every request exactly once (durable issue, part 6; decisions D3, D5).

The property test keeps each example cheap: one agent process for the whole test, driven from a
plain subprocess with a reader thread, many lines per example. What each line must get back is
decided by a small oracle written from the JSON-RPC 2.0 rules and the line cap, not from the
agent's code: an answer carrying the request's id, one error with `"id": null`, or nothing.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support import REPO_ROOT, base_env
from tests.support.agent import AgentProcess
from tests.support.examples import examples
from tests.support.schema import AcpSchema, Transcript, id_key, message_kind, shorten

LINE_CAP = 65_536  # ACP_AGENT_MAX_LINE_BYTES for these tests
NULL = id_key(None)  # where answers with `"id": null` are counted
ANSWER_TIMEOUT = 15.0
SLOW = "[slow]"  # a prompt whose last block says this gets a reply that takes a moment


# ── the oracle ────────────────────────────────────────────────────────────────────────────────


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_decode = json.JSONDecoder(parse_constant=_no_constants).decode


def _valid_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def expected_answer(line: bytes, cap: int = LINE_CAP) -> str | None:
    """Where the answer to one line (no newline) is counted: its id's key, NULL, or None (none).

    JSON-RPC 2.0: a request is answered with its id; a notification and a response to us are
    not answered; anything unparsable or invalid gets one error, with the id when it can be read
    and `null` when not. A line over the cap cannot be read at all: one error with `null`.
    """
    if len(line) > cap:
        return NULL
    if line.endswith(b"\r"):
        line = line[:-1]
    if not line or line.isspace():
        return None  # no message at all
    try:
        obj = _decode(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return NULL
    if not isinstance(obj, dict):
        return NULL
    key = None
    if "id" in obj:
        if not _valid_id(obj["id"]):
            return NULL
        key = id_key(obj["id"])
    if obj.get("jsonrpc") != "2.0":
        return key or NULL
    if "method" in obj:
        params = obj.get("params")
        if not isinstance(obj["method"], str) or not (params is None or isinstance(params, dict | list)):
            return key or NULL
        return key  # a request (its id, possibly null), or a notification (None)
    if key is not None and ("result" in obj or "error" in obj):
        error = obj.get("error")
        return None if error is None or isinstance(error, dict) else key
    return key or NULL


def test_the_oracle_follows_json_rpc() -> None:
    """The oracle decides what the property test demands, so it is pinned on its own."""
    cases = {
        b"": None,
        b"  \t": None,
        b"\r": None,
        b"{": NULL,
        b"\xff": NULL,
        b"[]": NULL,
        b"1": NULL,
        b"NaN": NULL,
        b'{"jsonrpc":"2.0","method":"m"}': None,
        b'{"jsonrpc":"2.0","method":"m","id":7}': "7",
        b'{"jsonrpc":"2.0","method":"m","id":"7"}': '"7"',
        b'{"jsonrpc":"2.0","method":"m","id":null}': NULL,
        b'{"jsonrpc":"2.0","method":"m","id":1.5}': NULL,
        b'{"jsonrpc":"2.0","method":"m","id":true}': NULL,
        b'{"jsonrpc":"1.0","method":"m","id":7}': "7",
        b'{"method":"m","id":7}': "7",
        b'{"method":"m"}': NULL,
        b'{"jsonrpc":"2.0","method":3,"id":7}': "7",
        b'{"jsonrpc":"2.0","method":"m","params":3,"id":7}': "7",
        b'{"jsonrpc":"2.0","method":"m","params":3}': NULL,
        b'{"jsonrpc":"2.0","method":"m","params":null,"id":7}': "7",
        b'{"jsonrpc":"2.0","id":7,"result":{}}': None,
        b'{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"x"}}': None,
        b'{"jsonrpc":"2.0","id":7,"error":"x"}': "7",
        b'{"jsonrpc":"2.0","id":7}': "7",
        b'{"jsonrpc":"2.0"}': NULL,
        b'{"jsonrpc":"2.0","method":"m","id":7}\r': "7",
    }
    assert {line: expected_answer(line) for line in cases} == cases
    assert expected_answer(b" " * (LINE_CAP + 1)) == NULL
    assert expected_answer(b'{"jsonrpc":"2.0","method":"m","id":7}'.ljust(LINE_CAP)) == "7"


# ── a synchronous driver ──────────────────────────────────────────────────────────────────────


@dataclass
class Ledger:
    """Answers expected and received, by id key (NULL for `"id": null`)."""

    expected: Counter[str] = field(default_factory=Counter)
    either: dict[str, int] = field(default_factory=dict)  # id key → how many may come as NULL
    received: Counter[str] = field(default_factory=Counter)

    def _nulls_allowed(self) -> int:
        return self.expected[NULL] + sum(
            count - min(count, self.received[key]) for key, count in self.either.items()
        )

    def settled(self) -> bool:
        """Every expected answer is in, and no more than expected."""
        if any(self.received[key] > count for key, count in self.either.items()):
            return False
        wanted = {k: v for k, v in self.expected.items() if k != NULL}
        got = {k: v for k, v in self.received.items() if k != NULL and k not in self.either}
        return got == wanted and self.received[NULL] == self._nulls_allowed()

    def overshot(self) -> bool:
        """Some answer came more often than asked for: waiting longer cannot mend that."""
        limits = {**{k: v for k, v in self.expected.items() if k != NULL}, **self.either}
        return self.received[NULL] > self._nulls_allowed() or any(
            count > limits.get(key, 0) for key, count in self.received.items() if key != NULL
        )

    def report(self) -> str:
        keys = set(self.expected) | set(self.received) | set(self.either)
        wrong = {
            k: (self.expected[k] + self.either.get(k, 0), self.received[k])
            for k in sorted(keys)
            if self.expected[k] + self.either.get(k, 0) != self.received[k]
        }
        return f"(expected, received) answers by id where they differ: {wrong}"

    def forgive(self) -> None:
        """After a reported failure: take what arrived as expected, so later examples start clean."""
        self.expected = Counter(self.received)
        self.either.clear()


class SyncAgent:
    """`python -m acp_agent` on real pipes; a thread reads stdout, answering the agent's own
    requests with -32601 (a client with no capabilities), and counts every response by id."""

    def __init__(self, env: dict[str, str], schema: AcpSchema | None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "acp_agent"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=REPO_ROOT,
            start_new_session=True,
        )
        self.transcript = Transcript(schema)
        self.ledger = Ledger()
        self.changed = threading.Condition()
        self.stdout_closed = False
        self._stderr = bytearray()
        self._write_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._threads = [
            threading.Thread(target=self._read, daemon=True),
            threading.Thread(target=self._drain, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def next_id(self) -> int:
        return next(self._ids)

    def send(self, data: bytes, expect: dict[str, int] | None = None) -> None:
        """Write bytes; every line in them is booked with the oracle (or `expect` as given)."""
        with self.changed:
            if expect is None:
                for line in data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"):
                    if (key := expected_answer(line)) is not None:
                        self.ledger.expected[key] += 1
            else:
                for key, count in expect.items():
                    self.ledger.either[key] = self.ledger.either.get(key, 0) + count
            self._note_methods(data)
        self._write(data)

    def _note_methods(self, data: bytes) -> None:
        """Tell the transcript which method each id asked for, so results are schema-checked.

        Requests with `"id": null` are left out: several may be in flight under that one key.
        """
        for line in data.split(b"\n"):
            if len(line) > LINE_CAP:
                continue
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(message, dict) and message.get("id") is not None:
                self.transcript.note_sent(message)

    def request(self, method: str, params: Any, timeout: float = ANSWER_TIMEOUT) -> dict[str, Any]:
        """A well-formed request; waits for and returns its answer."""
        rid = self.next_id()
        self.send(encode({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}))
        key = id_key(rid)
        self.wait(lambda: self.ledger.received[key] >= 1, timeout, f"an answer to {method}")
        return next(
            m
            for m in self.transcript.messages
            if message_kind(m) == "response" and id_key(m.get("id")) == key
        )

    def wait(self, predicate: Callable[[], bool], timeout: float, what: str) -> None:
        with self.changed:
            if not self.changed.wait_for(lambda: predicate() or self.stdout_closed, timeout):
                raise AssertionError(f"no {what} within {timeout} s{self.context()}")
            if not predicate():
                raise AssertionError(f"the agent closed stdout before {what}{self.context()}")

    def problems(self) -> str:
        return self.transcript.problems_report()

    def context(self) -> str:
        code = self.proc.poll()
        return (
            f"\n--- agent {'running' if code is None else f'exit code {code}'}; "
            f"{self.ledger.report()}\nlast messages:{self.transcript.recent(6)}"
            f"\n--- stderr tail ---\n{self.stderr_text()[-3000:]}"
        )

    def stderr_text(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    def close(self, timeout: float = 10.0) -> int | None:
        """EOF on stdin, then up to `timeout` s to leave; SIGKILL to its group after that."""
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
            for thread in self._threads:
                thread.join(5)
            for pipe in (self.proc.stdout, self.proc.stderr):
                if pipe is not None:
                    pipe.close()

    def _write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        with self._write_lock, contextlib.suppress(BrokenPipeError):
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in iter(self.proc.stdout.readline, b""):
            terminated = raw.endswith(b"\n")
            asks: dict[str, Any] | None = None
            with self.changed:
                try:
                    index = self.transcript.feed(raw[:-1] if terminated else raw, terminated=terminated)
                except RecursionError:
                    self.transcript.protocol_violations.append(
                        f"a line nested too deeply to parse: {shorten(raw.decode('utf-8', 'replace'))}"
                    )
                    index = None
                if index is not None:
                    message = self.transcript.messages[index]
                    kind = message_kind(message)
                    if kind == "response":
                        self.ledger.received[id_key(message.get("id"))] += 1
                    elif kind == "request":
                        asks = message
                self.changed.notify_all()
            if asks is not None:  # the agent asked us something: no capability for it
                self._write(
                    encode(
                        {
                            "jsonrpc": "2.0",
                            "id": asks.get("id"),
                            "error": {"code": -32601, "message": "Method not found"},
                        }
                    )
                )
        with self.changed:
            self.stdout_closed = True
            self.changed.notify_all()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        fd = self.proc.stderr.fileno()
        for chunk in iter(lambda: os.read(fd, 65536), b""):
            self._stderr += chunk
            del self._stderr[:-200_000]


def encode(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def fake_model(body: dict[str, Any], attempt: int) -> replies.Reply:
    """Quick answers; a prompt ending in SLOW streams for a little while, so that a cancel sent
    right after it finds it running."""
    last = body["messages"][-1]["content"][-1]
    if SLOW in json.dumps(last):
        return replies.text("a slow answer", chunks=3, chunk_delay=0.03)
    return replies.text("ok")


@pytest.fixture
def hostile_env(tmp_path: Path, fake_api: FakeMessagesAPI) -> dict[str, str]:
    fake_api.set_fallback(fake_model)
    return base_env(
        tmp_path,
        ANTHROPIC_API_KEY="test-key",
        ANTHROPIC_BASE_URL=fake_api.base_url,
        ACP_AGENT_MODEL="claude-test-1",
        ACP_AGENT_STREAMING="1",
        ACP_AGENT_STALL_SECONDS="5",
        ACP_AGENT_MAX_LINE_BYTES=str(LINE_CAP),
        ACP_AGENT_STATE_DIR=str(tmp_path / "state"),
    )


@dataclass
class Target:
    agent: SyncAgent
    session: str  # a live session, so prompts really run
    cwd: str


@pytest.fixture
def target(hostile_env: dict[str, str], acp_schema: AcpSchema, workspace: Path) -> Iterator[Target]:
    """One agent for the whole property test. Before `initialize`, it is asked out of order."""
    agent = SyncAgent(hostile_env, acp_schema)
    try:
        early = agent.request(
            "session/prompt", {"sessionId": "sess_never_made", "prompt": [{"type": "text", "text": "hi"}]}
        )
        assert early["error"]["code"] == -32602, early
        agent.send(
            encode({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "sess_never_made"}})
        )
        assert "result" in agent.request("initialize", {"protocolVersion": 1})
        session = agent.request("session/new", {"cwd": str(workspace), "mcpServers": []})
        yield Target(agent, session["result"]["sessionId"], str(workspace))
    finally:
        code = agent.close()
    assert code == 0, f"the agent did not exit 0 after stdin closed (got {code}){agent.context()}"
    assert agent.ledger.settled(), agent.ledger.report()


# ── strategies ────────────────────────────────────────────────────────────────────────────────

JSON_LEAF = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=16)
)
JSON_VALUE = st.recursive(
    JSON_LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)

METHODS = (
    "initialize",
    "session/new",
    "session/prompt",
    "session/cancel",
    "session/set_mode",
    "session/set_config_option",
    "session/load",
    "authenticate",
    "$/cancel_request",
    "_vendor/x",
    "no/such_method",
)


def base_params(method: str, t: Target) -> dict[str, Any]:
    """Well-formed params for `method` (against the live session where one is named)."""
    table: dict[str, dict[str, Any]] = {
        "initialize": {
            "protocolVersion": 1,
            "clientInfo": {"name": "fuzz", "version": "1"},
            "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False},
        },
        "session/new": {"cwd": t.cwd, "mcpServers": []},
        "session/prompt": {"sessionId": t.session, "prompt": [{"type": "text", "text": "hi"}]},
        "session/cancel": {"sessionId": t.session},
        "session/set_mode": {"sessionId": t.session, "modeId": "default"},
        "session/set_config_option": {"sessionId": t.session, "configId": "mode", "value": "default"},
        "session/load": {"sessionId": "sess_unknown", "cwd": t.cwd, "mcpServers": []},
        "authenticate": {"methodId": "anthropic-api-key"},
        "$/cancel_request": {"requestId": 1},
    }
    return table.get(method, {})


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value that a wrong type can be put (the root excluded)."""
    found: list[tuple[Any, ...]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        found.append((*prefix, key))
        found += paths_of(child, (*prefix, key))
    return found


_DELETE = object()


def mutated(params: dict[str, Any], index: int, value: Any) -> dict[str, Any]:
    """`params` (copied) with the index-th place replaced by `value`, or removed for _DELETE."""
    params = json.loads(json.dumps(params))
    paths = paths_of(params)
    if not paths:
        return params
    *parents, last = paths[index % len(paths)]
    node: Any = params
    for key in parents:
        node = node[key]
    if value is _DELETE:
        del node[last]
    else:
        node[last] = value
    return params


@dataclass(frozen=True)
class Call:
    """One JSON-RPC message: the method, how its params are made, and its envelope."""

    method: str
    params: str  # base | mutate | random | absent | deep
    place: int
    value: Any
    id_form: Any  # int | negative | big | str | null | notification, or an invalid id value
    jsonrpc: Any  # "2.0", another JSON value, or _DELETE
    depth: int = 0

    def render(self, t: Target) -> tuple[bytes, dict[str, int] | None]:
        message: dict[str, Any] = {"jsonrpc": self.jsonrpc}
        if self.jsonrpc is _DELETE:
            del message["jsonrpc"]
        key = None
        if self.id_form != "notification":
            n = t.agent.next_id()
            message["id"] = (
                {
                    "int": 10**9 + n,
                    "negative": -(10**9) - n,
                    "big": 2**70 + n,
                    "str": f"fuzz-{n}",
                    "unicode": f"ïd\u2028{n}",
                    "null": None,
                }.get(self.id_form, self.id_form)
                if isinstance(self.id_form, str)
                else self.id_form
            )
            key = id_key(message["id"]) if _valid_id(message["id"]) else None
        message["method"] = self.method
        base = base_params(self.method, t)
        if self.params == "base":
            message["params"] = base
        elif self.params == "mutate":
            message["params"] = mutated(base, self.place, self.value)
        elif self.params == "random" and self.value is not _DELETE:
            message["params"] = self.value
        elif self.params == "deep":
            # Deeper than the JSON parser may recurse: it is read (answered by id) or not (null).
            deep = "[" * self.depth + "]" * self.depth
            slot = json.dumps("DEEP")
            text = json.dumps(
                mutated(base, self.place, "DEEP") if base else {"x": "DEEP"}, separators=(",", ":")
            )
            message["params"] = "PARAMS"
            line = encode(message).replace(b'"PARAMS"', text.replace(slot, deep).encode(), 1)
            if self.depth > 500 and key is not None and key != NULL:
                return line, {key: 1}
            return line, None
        return encode(message), None


ID_FORMS = st.sampled_from(
    ["int", "int", "int", "str", "unicode", "negative", "big", "null", "notification"]
) | st.sampled_from([1.5, True, False, [], {}, [1], {"a": 1}, 0.0])
JSONRPC = st.sampled_from(["2.0"] * 8 + ["1.0", 2.0, None, _DELETE, "2.0 ", ""])

calls = st.builds(
    Call,
    method=st.sampled_from(METHODS) | st.text(max_size=12),
    params=st.sampled_from(["base", "mutate", "mutate", "mutate", "random", "absent"]),
    place=st.integers(0, 50),
    value=JSON_VALUE | st.just(_DELETE),
    id_form=ID_FORMS,
    jsonrpc=JSONRPC,
)
deep_calls = st.builds(
    Call,
    method=st.sampled_from(METHODS),
    params=st.just("deep"),
    place=st.integers(0, 50),
    value=st.none(),
    id_form=st.just("int"),
    jsonrpc=st.just("2.0"),
    depth=st.integers(1, 400) | st.integers(401, 5000) | st.just(200_000),
)


@dataclass(frozen=True)
class Raw:
    """Arbitrary bytes, newlines and all: each line in them is judged by the oracle."""

    data: bytes

    def render(self, t: Target) -> tuple[bytes, dict[str, int] | None]:
        return self.data, None


@dataclass(frozen=True)
class Huge:
    """A line around or over the cap: junk, or a request with a big string in it."""

    size: int
    as_request: bool

    def render(self, t: Target) -> tuple[bytes, dict[str, int] | None]:
        if not self.as_request:
            return b"x" * self.size + b"\n", None
        block = {"type": "text", "text": ""}
        message = {
            "jsonrpc": "2.0",
            "id": t.agent.next_id(),
            "method": "session/prompt",
            "params": {"sessionId": "sess_unknown", "prompt": [block]},
        }
        block["text"] = "y" * max(0, self.size - len(encode(message)))
        return encode(message), None


@dataclass(frozen=True)
class Busy:
    """Out of order: a second prompt while one runs, then maybe a cancel of either kind."""

    then: str  # nothing | session/cancel | $/cancel_request | cancel_unknown

    def render(self, t: Target) -> tuple[bytes, dict[str, int] | None]:
        first, second = t.agent.next_id(), t.agent.next_id()
        lines = [
            {
                "jsonrpc": "2.0",
                "id": first,
                "method": "session/prompt",
                "params": {"sessionId": t.session, "prompt": [{"type": "text", "text": SLOW}]},
            },
            {
                "jsonrpc": "2.0",
                "id": second,
                "method": "session/prompt",
                "params": {"sessionId": t.session, "prompt": [{"type": "text", "text": "again"}]},
            },
        ]
        if self.then == "session/cancel":
            lines.append({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": t.session}})
        elif self.then == "$/cancel_request":
            lines.append({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": first}})
        elif self.then == "cancel_unknown":
            lines.append(
                {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "sess_unknown"}}
            )
        return b"".join(map(encode, lines)), None


operations = st.one_of(
    calls,
    calls,
    calls,
    calls,
    calls,
    deep_calls,
    st.builds(Raw, st.binary(max_size=300)),
    st.builds(Raw, st.text(max_size=200).map(lambda s: s.encode("utf-8"))),
    st.builds(Huge, st.integers(LINE_CAP - 2048, 3 * LINE_CAP), st.booleans()),
    st.builds(Busy, st.sampled_from(["nothing", "session/cancel", "$/cancel_request", "cancel_unknown"])),
)


@pytest.mark.slow
@pytest.mark.timeout(600)
@settings(
    max_examples=examples(500),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batch=st.lists(operations, min_size=1, max_size=6))
def test_any_input_is_answered_exactly_once_and_never_crashes_the_agent(
    target: Target, batch: list[Any]
) -> None:
    agent = target.agent
    transcript = agent.transcript
    seen = (len(transcript.protocol_violations), len(transcript.schema_problems))
    sent: list[bytes] = []
    try:
        for operation in batch:
            data, either = operation.render(target)
            if data and not data.endswith(b"\n"):
                data += b"\n"  # the next operation starts on a line of its own
            agent.send(data, either)
            sent.append(data)
        # A well-formed request after the barrage must still be answered.
        alive = agent.request("no/such_method", {})
        assert alive["error"]["code"] == -32601, alive
        ledger = agent.ledger
        agent.wait(lambda: ledger.settled() or ledger.overshot(), ANSWER_TIMEOUT, "all answers")
        assert ledger.settled(), f"an answer came twice, or unasked: {ledger.report()}"
        assert agent.proc.poll() is None, f"the agent exited{agent.context()}"
        fresh = (transcript.protocol_violations[seen[0] :], transcript.schema_problems[seen[1] :])
        assert fresh == ([], []), f"the agent broke the protocol: {fresh}"
    except AssertionError as exc:
        agent.ledger.forgive()
        shown = [shorten(d.decode("utf-8", "replace"), 300) for d in sent]
        raise AssertionError(f"{exc}\n--- lines sent in this example: {shown}") from None


# ── the line cap ──────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("streaming", [True], ids=["stream"])  # framing knows no API path
async def test_a_line_over_the_cap_gets_a_clear_error_and_the_agent_goes_on(
    agent_env: dict[str, str], acp_schema: AcpSchema, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    env = {**agent_env, "ACP_AGENT_MAX_LINE_BYTES": str(LINE_CAP)}
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        start = len(agent.messages)
        huge = {
            "jsonrpc": "2.0",
            "id": "too-big",
            "method": "session/prompt",
            "params": {"sessionId": session, "prompt": [{"type": "text", "text": "z" * 100_000}]},
        }
        await agent.send_raw(encode(huge))
        error = await agent.wait_for(lambda m: "error" in m, since=start)
        assert error["id"] is None and error["error"]["code"] == -32600, error
        assert "65536" in error["error"]["message"] and "line" in error["error"]["message"], error
        assert fake_api.attempts == 0
        # Just under the cap is read as usual, and the session still works.
        fake_api.script(replies.text("fine"))
        response = await agent.prompt(session, "w" * (LINE_CAP - 400))
        assert response["result"]["stopReason"] == "end_turn", response
        assert [m for m in agent.messages if m.get("id") == "too-big"] == []


# ── every field of the core methods, with every wrong type ────────────────────────────────────

WRONG = [None, 0, -1.5, True, "", "x", [], [1], {}, {"a": 1}, _DELETE]
CORE = ("initialize", "session/new", "session/prompt", "session/cancel")


@pytest.mark.parametrize("streaming", [True], ids=["stream"])
async def test_a_wrong_type_in_any_field_of_the_core_methods_is_answered_once_naming_it(
    agent: AgentProcess, session: str, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.set_fallback(replies.text("ok"))
    t = Target(agent=None, session=session, cwd=str(workspace))  # type: ignore[arg-type]
    problems = []
    for method in CORE:
        base = base_params(method, t)
        for index, where in enumerate(paths_of(base)):
            for value in WRONG:
                params = mutated(base, index, value)
                shown = "<missing>" if value is _DELETE else json.dumps(value)
                label = f"{method} {'.'.join(map(str, where))}={shown}"
                if method == "session/cancel":  # a notification: never answered, never fatal
                    await agent.notify(method, params)
                    continue
                response = await agent.request(method, params)
                error = response.get("error")
                if error is None:
                    continue  # some wrong-looking values are allowed (null capabilities, ...)
                if error["code"] != -32602 or str(where[0]) not in error["message"]:
                    problems.append(f"{label}: {error}")
    alive = await agent.request("initialize", {"protocolVersion": 1})
    assert "result" in alive
    assert problems == [], "\n".join(problems)
