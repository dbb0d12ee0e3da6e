"""The package's exception tree, so callers learn what to catch from one place.

Every exception class in `acp_agent` derives from `AgentError` (where a builtin base is kept as
well, code that catches the builtin still works). Each line says what raises the class → who
catches it. Classes defined elsewhere (where their room needs them) are marked with their module;
`tests/unit/test_errors_tree.py` checks that every class is named here and derives from `AgentError`.

    AgentError
      ├─ RpcError              a JSON-RPC error object (code, message, data); named constructors below
      │    │                     handlers (session/), rpc/messages.classify (-32700/-32600), and
      │    │                     rpc/outgoing.Outgoing.request when the client answers an error
      │    │                     → rpc/endpoint.Endpoint (answered as is), session/client_io (→ ToolError),
      │    │                       session/permissions (→ the call is not run)
      │    └─ ConnectionClosed   Outgoing.request after stdin EOF → caught with RpcError, as above
      ├─ LineTooLong           rpc/framing.LineReader: a line over --max-line-bytes was skipped
      │                          → Endpoint.serve answers -32600 and reads on
      ├─ LimitsError (ValueError)  a bad per-session `_meta` value or effort: limits.Limits,
      │                          turn/strategies/loops, session/manager → session/acp/handlers
      │                          answers -32602 naming the field
      ├─ ToolError             recoverable, raised by tools/* and session/client_io
      │    │                     → turn/runner makes it an is_error tool_result; the turn goes on
      │    ├─ PathOutsideCwd      a path that resolves outside the session's roots
      │    ├─ PathDenied          a path a settings deny rule names (tools/paths.resolve_inside)
      │    ├─ InvalidToolInput    arguments that fail the tool's input schema
      │    └─ ToolTimeout         the tool ran past its time allowance
      ├─ Stopped               a tool's worker thread sees its stop flag (tools/files, search, ignore)
      │                          → nobody: the abandoned thread just ends (tools/disk.in_thread)
      ├─ PermissionCancelled   the user cancelled a permission question: turn/tool_batch, strategies/phased
      │                          → turn/driver ends the turn `cancelled`
      ├─ LimitReached          turn/meter: a budget ran out (it carries the `Limit`): TurnMeter,
      │                          turn/runner, strategies/verify and phased → turn/driver, once (the
      │                          phased strategy catches it to note where the next prompt resumes)
      ├─ TurnHalted            turn/hooks: a hook answered `continue: false`: turn/runner, turn/driver
      │                          → turn/driver, once: the turn ends `end_turn` with a notice
      ├─ TurnFailed            terminal for the turn: model/anthropic, turn/ (runner, judge, history)
      │    │                     → turn/driver records it; session/acp/handlers answers with the turn record
      │    ├─ ModelUnavailable    the API refused or failed and retrying did not help
      │    ├─ StreamBroken        the reply broke off after output was relayed, or had no stop_reason
      │    ├─ AuthRequired        no credentials, or the API said 401/403 (-32000)
      │    └─ JournalFailed       the session journal could not be written (a full disk; -32010)
      ├─ MalformedReply (ValueError)  model/stream_events: a usage figure that is no count
      │                          (not a whole number >= 0) → model/anthropic (→ StreamBroken)
      ├─ CassetteError (ValueError)  model/cassette: a cassette that cannot be read, a record file
      │                          not written → cli (a clear exit), model/cassette
      ├─ ProfileError (ValueError)   model/profiles: a setting the model does not accept
      │                          → session/manager (→ LimitsError "effort"), cli (a clear exit)
      ├─ EntryProblem (ValueError)       turn/journal_lines: a line that is not an entry of a known
      │                          shape → session/store (→ JournalCorrupt, naming the line)
      ├─ JournalCorrupt (ValueError)     session/store: a journal that is not ours → session/manager (-32010)
      ├─ JournalWriteFailed (OSError)    session/store: an entry not written (a full disk, a closed
      │                          session) → turn/history (→ JournalFailed),
      │                          session/manager (→ -32010 on session/load)
      ├─ StateDirError (OSError)         session/state_dir: the state dir is unusable
      │                          → app (serve unjournaled)
      ├─ CursorError (ValueError)        session/listing: a session/list cursor not ours
      │                          → session/acp/handlers answers -32602
      ├─ PromptNotFound (LookupError)    journal/timeline, rewind: no prompt of that number or
      │                          messageId → session/commands/rewinding answers -32602 (/rewind says so)
      ├─ SnapshotFailed (RuntimeError)   journal/shadow_git: a git command of the snapshot
      │                          store failed → journal/checkpoints (the root is given up,
      │                          /status says so)
      ├─ UnclassifiedKey (AssertionError)  claude_code/settings/settings_keys: a settings key read with
      │                          no line in SETTINGS_KEYS (a mistake in the code, never input) → nobody
      ├─ OffRoot               journal/file_images: a file a rewind would touch is outside
      │                          its root, or behind a link → journal/rewind (a conflict)
      └─ HarnessError          client side only (`acp-agent smoke` / `harness`), never in the agent process
           ├─ AgentRpcError        harness/client: the agent answered an error → harness/smoke
           ├─ AgentExitedError     harness/client: the agent's stdout closed → harness/smoke, runner
           ├─ AgentSpawnError      harness/process: the agent could not start → harness/smoke, script
           ├─ StepFailed           harness/runner: a step did not get what it expected → runner
           ├─ ScriptError (ValueError)   harness/steps: a script that cannot be run → harness/script
           ├─ PatternError (ValueError)  harness/pattern: an unbound `$name`, a bad operator → runner
           └─ FakeModelError       harness/fake_model: the fake did not start → harness/script

Defined outside this module (their rooms import only this leaf): LimitReached (turn/meter.py: it
carries turn's `Limit`), ProfileError (model/profiles.py), MalformedReply (model/stream_events.py),
EntryProblem (turn/journal/lines.py), JournalCorrupt, JournalWriteFailed (journal/store.py),
StateDirError (journal/state_dir.py), CursorError (journal/listing.py),
PromptNotFound (journal/timeline.py), SnapshotFailed (journal/shadow_git.py),
OffRoot (journal/file_images.py), UnclassifiedKey (claude_code/settings/settings_keys.py), and the
HarnessError family (harness/). Private classes (`_Name`) are raised and caught inside one module
and are not listed."""

from __future__ import annotations

from typing import Any

__all__ = [
    "AUTH_REQUIRED",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "JOURNAL_ERROR",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "QUEUE_FULL",
    "REQUEST_CANCELLED",
    "RESOURCE_NOT_FOUND",
    "AgentError",
    "AuthRequired",
    "CassetteError",
    "ConnectionClosed",
    "HarnessError",
    "InvalidToolInput",
    "JournalFailed",
    "LimitsError",
    "LineTooLong",
    "ModelUnavailable",
    "PathOutsideCwd",
    "PermissionCancelled",
    "RpcError",
    "Stopped",
    "StreamBroken",
    "ToolError",
    "ToolTimeout",
    "TurnFailed",
]


class AgentError(Exception):
    """Base of every error the package raises on purpose."""


# ── JSON-RPC error answers ───────────────────────────────────────────────────────────────────────
# JSON-RPC 2.0's codes, then ACP's (-32800, -32000, -32002), then ours (-32001, -32010: the
# -32000..-32099 range is for servers).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_CANCELLED = -32800
AUTH_REQUIRED = -32000
QUEUE_FULL = -32001
RESOURCE_NOT_FOUND = -32002
JOURNAL_ERROR = -32010


class RpcError(AgentError):
    """An error with a JSON-RPC code: raised to answer a request with an error, and raised to the
    caller when the client answers one of our requests with an error.

    The one error type of both rooms: `session/` raises it from a handler and the endpoint writes
    it as it is; `rpc/` raises it from `Outgoing.request` and `session/` catches it.
    `request_id` is set by the line classifier when the offending message had a readable id, so
    the error answer can echo it (None means the answer carries `"id": null`).
    """

    def __init__(self, code: int, message: str, data: Any | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.request_id: Any = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r}, data={self.data!r})"

    def to_dict(self) -> dict[str, Any]:
        """The JSON-RPC `error` object; `data` only when there is some."""
        if self.data is None:
            return {"code": self.code, "message": self.message}
        return {"code": self.code, "message": self.message, "data": self.data}

    @classmethod
    def parse_error(cls, detail: str) -> RpcError:
        return cls(PARSE_ERROR, f"Parse error: {detail}")

    @classmethod
    def invalid_request(cls, message: str, data: Any | None = None) -> RpcError:
        return cls(INVALID_REQUEST, message, data)

    @classmethod
    def method_not_found(cls, method: str) -> RpcError:
        return cls(METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method})

    @classmethod
    def invalid_params(cls, message: str, data: Any | None = None) -> RpcError:
        return cls(INVALID_PARAMS, message, data)

    @classmethod
    def internal_error(cls, message: str, data: Any | None = None) -> RpcError:
        return cls(INTERNAL_ERROR, message, data)

    @classmethod
    def request_cancelled(cls) -> RpcError:
        return cls(REQUEST_CANCELLED, "Request cancelled")

    @classmethod
    def auth_required(cls, message: str, data: Any | None = None) -> RpcError:
        return cls(AUTH_REQUIRED, message, data)

    @classmethod
    def queue_full(cls, message: str, data: Any | None = None) -> RpcError:
        """The session's prompt queue is full (docs/decisions.md D3)."""
        return cls(QUEUE_FULL, message, data)

    @classmethod
    def session_not_found(cls, session_id: str) -> RpcError:
        """session/load of a session that has no journal (ACP's resource not found)."""
        return cls(RESOURCE_NOT_FOUND, f"Session not found: {session_id!r}", {"sessionId": session_id})

    @classmethod
    def session_closed(cls, session_id: str) -> RpcError:
        """A request for a session that session/close or session/delete is closing (resource not found)."""
        return cls(
            RESOURCE_NOT_FOUND,
            f"Session {session_id!r} is closed (session/close or session/delete came first); "
            "session/load it to go on",
            {"sessionId": session_id},
        )

    @classmethod
    def journal_error(cls, message: str, data: Any | None = None) -> RpcError:
        """A session journal that cannot be read or written (-32010: a server error of ours)."""
        return cls(JOURNAL_ERROR, message, data)

    @classmethod
    def unknown_session(cls, session_id: str) -> RpcError:
        return cls(
            INVALID_PARAMS,
            f"Invalid params: sessionId: unknown session {session_id!r}",
            {"sessionId": session_id},
        )


class ConnectionClosed(RpcError):
    """The client went away (stdin EOF) before answering one of our requests.

    A subclass of `RpcError` so code that treats "the client call failed" one way needs a
    single `except RpcError`; catch this class to tell the two apart.
    """

    def __init__(self, message: str = "the client closed the connection") -> None:
        super().__init__(INTERNAL_ERROR, message)


class LineTooLong(AgentError):
    """A line longer than the cap was skipped; the reader has moved on to the next line."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"line of {size} bytes exceeds the {limit}-byte limit")
        self.size = size
        self.limit = limit


class LimitsError(AgentError, ValueError):
    """A per-session limit override is invalid; `field` names it for the -32602 answer."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"_meta.acp-agent.{field}: {message}")
        self.field = field


# ── tools ──────────────────────────────────────────────────────────────────────────────────────
class ToolError(AgentError):
    """A tool could not do what was asked; the model sees the message and may try again."""


class PathOutsideCwd(ToolError):
    """A path resolved outside the session's working directory."""


class PathDenied(ToolError):
    """A path the user's settings deny (`Read(./.env)`); the message is the rule's one line."""


class InvalidToolInput(ToolError):
    """The model's arguments do not fit the tool's input schema."""


class ToolTimeout(ToolError):
    """The tool ran past its time allowance; `partial` holds what it produced so far."""

    def __init__(self, message: str, partial: str = "") -> None:
        super().__init__(message)
        self.partial = partial


class Stopped(AgentError):
    """The caller went away (cancel or timeout); the worker thread just ends."""


# ── the turn ───────────────────────────────────────────────────────────────────────────────────
class PermissionCancelled(AgentError):
    """The user cancelled a permission question: the turn ends `cancelled`."""


class TurnFailed(AgentError):
    """The turn cannot go on. `kind` names the failure; `retryable` says if trying again may help."""

    kind = "internal"

    def __init__(self, message: str, *, retryable: bool = False, detail: dict[str, Any] | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.detail = detail or {}


class ModelUnavailable(TurnFailed):
    """The Messages API failed, and retrying did not help or was not allowed."""

    kind = "model_unavailable"


class StreamBroken(TurnFailed):
    """The model's reply broke off: after output was relayed, or without a stop_reason.

    `partial` holds the assistant content blocks received before the break.
    """

    kind = "stream_broken"

    def __init__(
        self, message: str, *, partial: list[dict[str, Any]] | None = None, retryable: bool = False
    ) -> None:
        super().__init__(message, retryable=retryable)
        self.partial = partial or []


class AuthRequired(TurnFailed):
    """No usable credentials (none found, or the API answered 401/403)."""

    kind = "auth_required"


class JournalFailed(TurnFailed):
    """An entry could not be written to the session journal; the message names the file."""

    kind = "journal"


# ── files the agent reads ──────────────────────────────────────────────────────────────────────
class CassetteError(AgentError, ValueError):
    """A cassette that cannot be read (missing, not JSON lines, not this format), or a record file
    that cannot be written."""


class HarnessError(AgentError):
    """Base of the client-side tools' errors (`acp-agent smoke`, `acp-agent harness`)."""
