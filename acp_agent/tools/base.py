"""The tool seam: a name, an input schema, and an async `run` that returns a ToolResult.

A tool raises `ToolError` (or a subclass) for anything the model should hear about and retry;
the runner turns any other exception into a failed tool call as well, so a tool never ends a turn.
Tools reach the editor only through the small Protocols here (`FileSystem`, `Terminal`,
`Elicitation`), which the session implements over ACP and injects (docs/decisions.md D6); with none
injected they use the local disk and local processes, and ask the user nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from acp_agent.tools.grant import Grant
from acp_agent.tools.hidden import NOTHING_HIDDEN, HiddenPaths
from acp_agent.tools.paths import resolve_inside

if TYPE_CHECKING:
    from acp_agent.tools.sandbox.command_sandbox import CommandSandbox

__all__ = [
    "ANSWER_CHARS",
    "NO_CHECKPOINT",
    "BackgroundCommands",
    "Checkpoint",
    "Diff",
    "Elicitation",
    "FileSystem",
    "NamedWritesTool",
    "PlanEntry",
    "Preview",
    "PreviewTool",
    "Progress",
    "ReadOnlyTool",
    "SelfTimedTool",
    "TerminalExit",
    "TerminalHost",
    "TerminalOutput",
    "Tool",
    "ToolContext",
    "ToolResult",
    "TwinTool",
    "reads_only",
]

Permission = Literal["edit", "execute"]


class FileSystem(Protocol):
    """Text files by absolute path: the editor's buffers (fs/*) or the local disk.

    Raises:
        ToolError: the file cannot be read or written (missing, not text, refused by the editor).
    """

    async def read_text(self, path: Path) -> str: ...

    async def write_text(self, path: Path, text: str) -> None: ...


@dataclass(frozen=True, slots=True)
class TerminalExit:
    exit_code: int | None
    signal: str | None


@dataclass(frozen=True, slots=True)
class TerminalOutput:
    output: str
    truncated: bool
    exit: TerminalExit | None


class TerminalHost(Protocol):
    """The editor's terminals (ACP terminal/*), for a client that advertised `terminal`.

    Every created terminal must be released. Raises ToolError when the editor answers an error.
    """

    async def create(
        self,
        command: str,
        args: list[str],
        cwd: Path,
        output_byte_limit: int,
        env: Mapping[str, str] | None = None,
    ) -> str:
        """A new terminal running `command args` in `cwd`, with `env` added to the editor's."""
        ...

    async def wait_for_exit(self, terminal_id: str) -> TerminalExit: ...

    async def output(self, terminal_id: str) -> TerminalOutput: ...

    async def kill(self, terminal_id: str) -> None: ...

    async def release(self, terminal_id: str) -> None: ...


class BackgroundCommands(Protocol):
    """A session's background commands (`tools/shell/tasks.py`): started by run_command with
    `background: true`, read by command_output, stopped by stop_command. They outlive the turn
    that started them, never the session.

    Raises:
        ToolError: what the model should hear (an unknown task, the session's cap reached).
    """

    def refusal(self) -> str | None:
        """Why no command can start in the background now (the cap), or None."""
        ...

    async def start(
        self, command: str, argv: list[str], cwd: Path, ctx: ToolContext, *, sandboxed: bool
    ) -> ToolResult:
        """Start `argv` (the command line `command`, wrapped in the sandbox when `sandboxed`), in
        `ctx.terminal` if given, else here; the result names the task at once."""
        ...

    async def read(self, task_id: str, wait: float) -> ToolResult:
        """Its output since the last read, and its exit status once it ended (waiting up to
        `wait` seconds for that)."""
        ...

    async def stop(self, task_id: str) -> ToolResult:
        """Stop it and all it started; its last output and how it ended."""
        ...


ANSWER_CHARS = 16 * 1024
"""The longest answer to any question the agent asks (`ask_user`, a relayed MCP question, the key
form): every key and string of its content together, in characters. A longer one is a dismissal."""


class Elicitation(Protocol):
    """The editor's forms and links (ACP `elicitation/create`), for a client that advertised them.

    `modes` are the ones it advertised ("form", "url"); no other may be used. `request` is an
    elicitation as MCP and ACP share it, without its scope: `{"mode": "form", "message",
    "requestedSchema"}` or `{"mode": "url", "message", "url", "elicitationId"}`. The answer is
    `{"action": "accept" | "decline" | "cancel", "content"?: {...}}`, its content within the form's
    schema and `ANSWER_CHARS`; anything else the editor says comes back as "cancel". Cancelling
    the caller abandons the question (`$/cancel_request`).

    Raises:
        ToolError: the editor answered an error, or nothing within `timeout` seconds.
    """

    modes: frozenset[str]

    async def elicit(
        self, request: dict[str, Any], *, call_id: str | None, timeout: float
    ) -> dict[str, Any]: ...

    async def complete(self, elicitation_id: str) -> None:
        """A url elicitation is done (the MCP server said so): the editor may close its prompt."""
        ...


@dataclass(frozen=True, slots=True)
class Progress:
    """Something a running tool wants the editor to see now.

    `text` replaces earlier progress text (send a tail, never the whole output again);
    `terminal_id` embeds an editor terminal in the tool call. `cancelled`: the call is being
    cancelled and `text` says what it had done (how long it ran, its output so far); it is
    reported as the call's result instead of "not executed". `status` ("completed", "failed")
    moves the call on: only a background command's view does, after its call ended.
    """

    text: str | None = None
    terminal_id: str | None = None
    cancelled: bool = False
    status: str | None = None


async def _no_report(progress: Progress) -> None:
    return None


class Checkpoint(Protocol):
    """Keeps what a call is about to change, so that a rewind can put it back (the session's
    checkpoints, `journal/checkpoints.py`). Both return once it is kept."""

    async def before_change(self) -> None:
        """A call that may change anything in the workspace is about to run (a command, an MCP
        tool): the session's roots are snapshotted first, once a turn."""
        ...

    async def before_write(self, path: Path) -> None:
        """An edit tool is about to write `path` (absolute, confined): its before-image is kept,
        once a turn."""
        ...


class _NoCheckpoint:
    async def before_change(self) -> None:
        return None

    async def before_write(self, path: Path) -> None:
        return None


NO_CHECKPOINT: Checkpoint = _NoCheckpoint()
"""Nothing kept (the in-process API, unit tests, a session without a journal)."""


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a tool may touch: the session's roots (the first is the cwd), files, terminals and the
    user's attention; `call_id` names the tool call being run (None outside one).

    `sandbox` confines the commands the session runs (None: they run unconfined, as in unit tests);
    `grants` are what the user allowed for this one call beyond the usual (a `Grant` id); `hidden`
    are the agent's own paths, which no tool shows (the sandbox hides the same list);
    `background` holds the session's background commands (None: none can run here, as in a
    subagent or a turn run from Python); `checkpoint` keeps what a call is about to change, for a
    rewind.
    """

    cwd: Path
    fs: FileSystem | None = None
    terminal: TerminalHost | None = None
    report: Callable[[Progress], Awaitable[None]] = _no_report
    extra_roots: tuple[Path, ...] = ()
    elicitation: Elicitation | None = None
    call_id: str | None = None
    sandbox: CommandSandbox | None = None
    grants: frozenset[str] = frozenset()
    hidden: HiddenPaths = NOTHING_HIDDEN
    background: BackgroundCommands | None = None
    checkpoint: Checkpoint = NO_CHECKPOINT

    @property
    def roots(self) -> tuple[Path, ...]:
        return (self.cwd, *self.extra_roots)

    def resolve(self, path: str) -> Path:
        """`path` confined to the roots, outside the hidden paths (`paths.resolve_inside`)."""
        return resolve_inside(self.roots, path, hidden=self.hidden)


@dataclass(frozen=True, slots=True)
class Diff:
    """A file change for the editor to show: `old_text` None means a new file."""

    path: Path
    old_text: str | None
    new_text: str


@dataclass(frozen=True, slots=True)
class Preview:
    """What a call would do, shown to the user before they approve it (a tool's `preview`).

    `diffs` and `locations` as in ToolResult; `text` for anything else (a command line and where
    it runs); `grants` are extra choices for this call (they reach `run` as `ToolContext.grants`).
    Cosmetic: a tool that cannot tell returns an empty one. `error` says the call cannot succeed
    (an edit whose text is not in the file): the question is then not asked, and the model gets
    `error` at once as the call's result.
    """

    diffs: tuple[Diff, ...] = ()
    locations: tuple[tuple[Path, int | None], ...] = ()
    text: str | None = None
    grants: tuple[Grant, ...] = ()
    error: str | None = None


@dataclass(frozen=True, slots=True)
class PlanEntry:
    """One step of the agent's plan: priority high/medium/low, status pending/in_progress/completed."""

    content: str
    priority: str = "medium"
    status: str = "pending"


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool produced.

    `text` goes back to the model as the tool_result and is shown to the editor;
    `locations` are absolute paths (with an optional 1-based line) the editor can follow;
    `diffs` are shown as ACP diff content; `terminal_id` keeps an embedded terminal in the final update;
    `media` are API content blocks (images) that go to the model after `text`, never to the editor;
    `steps` are lines shown to the editor before `text`, never to the model (what a subagent did);
    `read` are the files the call read (absolute, resolved): instructions scoped to them may join
    the conversation after the result (`turn/context/attachments.py`).
    """

    text: str
    is_error: bool = False
    locations: tuple[tuple[Path, int | None], ...] = ()
    raw_output: dict[str, Any] | None = field(default=None)
    diffs: tuple[Diff, ...] = ()
    terminal_id: str | None = None
    plan: tuple[PlanEntry, ...] | None = None
    media: tuple[dict[str, Any], ...] = ()
    steps: tuple[str, ...] = ()
    read: tuple[Path, ...] = ()


class Tool(Protocol):
    """A tool the model can call.

    `kind` is one of read, edit, delete, move, search, execute, think, fetch, other.
    `permission` is None for tools that only look, "edit" for tools that change files and
    "execute" for tools that run commands: the session asks the user before those run.

    What a tool may also do is a small protocol of its own, which the runner checks with
    `isinstance` (so mypy sees each): `ReadOnlyTool` (it says it only looks), `TwinTool` (its calls
    of one reply run at once), `PreviewTool` (what a call would do, shown with its permission
    question), `SelfTimedTool` (its own time limit per call); and, inside `turn/`, `InTurnTool`
    (it runs inside the turn's budgets: the `task` tool).
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    kind: str

    @property
    def permission(self) -> Permission | None:
        """Read-only, so a frozen dataclass's class attribute (`permission = None`) fits."""
        ...

    def title(self, args: dict[str, Any]) -> str:
        """A short human title for the editor, e.g. "Read src/app.py"."""
        ...

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Do the work. Raises ToolError for recoverable failures."""
        ...


@runtime_checkable
class ReadOnlyTool(Protocol):
    """A tool that says whether it only looks (`read_only = True`): the runner then runs it beside
    the other read-only calls of the same reply, and a session's subagents get it by default."""

    @property
    def read_only(self) -> bool: ...


@runtime_checkable
class TwinTool(Protocol):
    """A tool whose calls of one reply run at once, even when it does not only look
    (`beside_itself = True`: the `task` tool, whose subagents share what is left of the turn)."""

    @property
    def beside_itself(self) -> bool: ...


@runtime_checkable
class NamedWritesTool(Protocol):
    """A tool whose every change is a file it names to the checkpoint first
    (`Checkpoint.before_write`, `names_its_writes = True`): its calls need no snapshot of the
    session's roots (the edit tools)."""

    @property
    def names_its_writes(self) -> bool: ...


@runtime_checkable
class PreviewTool(Protocol):
    """A tool that asks permission and can say what a call would change, computed without changing
    anything: shown with the question (a diff, a command line)."""

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> Preview: ...


@runtime_checkable
class SelfTimedTool(Protocol):
    """A tool that sets each call's time limit itself, instead of the turn's per-tool timeout."""

    def time_allowance(self, args: dict[str, Any]) -> float: ...


def reads_only(tool: object) -> bool:
    """Whether `tool` says it only looks (`ReadOnlyTool`)."""
    return isinstance(tool, ReadOnlyTool) and tool.read_only is True
