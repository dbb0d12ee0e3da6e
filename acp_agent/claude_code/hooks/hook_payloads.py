"""A tool call as Claude Code's hooks see it, and a hook's answer as this agent reads it.

A hook written for Claude Code reads `tool_name` (`Bash`, `Edit`, `Read`: the one table of
`permissions/tool_names.py`) and `tool_input` in Claude Code's shapes: `file_path` absolute, Bash's `timeout`
in milliseconds, an edit's `old_string`/`new_string`. `claude_input` gives that shape of one of this
agent's calls; `own_input` reads a hook's `updatedInput` back (which replaces the whole input, and
is then checked again like any call); `claude_response` is PostToolUse's `tool_response`.

`read_answer` reads a run's exit code and output by Claude Code's protocol: exit 0 with a JSON
object on stdout (its first non-space character `{`), or plain text; exit 2 blocks, with stderr
as the message; any other code is an error that blocks nothing, unless stdout holds a JSON object,
which then decides alone. A PreToolUse hook that could not start for a reason of the agent's (its
sandbox: `HookProcess.ours`) blocks the call, saying why; any other failure blocks nothing.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_agent.claude_code.hooks.hook_process import HookProcess
from acp_agent.claude_code.settings import json_text
from acp_agent.tools.base import ToolResult

__all__ = [
    "DECISIONS",
    "MAX_CONTEXT_CHARS",
    "HookAnswer",
    "claude_input",
    "claude_response",
    "own_input",
    "read_answer",
]

MAX_CONTEXT_CHARS = 10_000
"""A hook's text for the model (`additionalContext`, a reason) is cut past this (Claude Code's cap)."""
MAX_RESPONSE_CHARS = 100_000
_FILE_TOOLS = frozenset({"read_file", "write_file", "edit_file"})
_PATH_TOOLS = frozenset({"search_text", "list_files"})
DECISIONS = ("allow", "deny", "ask")


def claude_input(tool: str, args: dict[str, Any], cwd: Path) -> dict[str, Any]:
    """`args` of this agent's `tool` as Claude Code's tool of that name takes them."""
    shaped = dict(args)
    if tool in _FILE_TOOLS and isinstance(path := shaped.pop("path", None), str):
        shaped = {"file_path": os.path.normpath(os.path.join(cwd, path)), **shaped}
    elif tool in _PATH_TOOLS and isinstance(path := shaped.get("path"), str):
        shaped["path"] = os.path.normpath(os.path.join(cwd, path))
    elif tool == "run_command" and isinstance(seconds := shaped.get("timeout"), int | float):
        shaped["timeout"] = int(seconds * 1000)
    return shaped


def own_input(tool: str, given: dict[str, Any]) -> dict[str, Any]:
    """A hook's `updatedInput` (Claude Code's shape, or this agent's) as `tool` takes it."""
    args = dict(given)
    if tool in _FILE_TOOLS and "file_path" in args:
        args["path"] = args.pop("file_path")
    if tool == "edit_file" and args.get("replace_all") is False:
        del args["replace_all"]  # one occurrence, as this agent's edit always replaces
    elif tool == "run_command":
        if isinstance(ms := args.get("timeout"), int | float) and ms > 600:
            args["timeout"] = max(1, math.ceil(ms / 1000))  # milliseconds, as Claude Code's Bash takes
        if args.pop("run_in_background", None) is True:
            args.setdefault("background", True)
        args.pop("description", None)
    return args


def claude_response(tool: str, args: dict[str, Any], result: ToolResult, cwd: Path) -> dict[str, Any]:
    """PostToolUse's `tool_response`: the result's text and figures, in Claude Code's words where
    it has them (`filePath`, `success`; Bash's `stdout`, `stderr`, `interrupted`)."""
    text = result.text[:MAX_RESPONSE_CHARS]
    response: dict[str, Any] = {"success": not result.is_error}
    if tool in _FILE_TOOLS and isinstance(args.get("path"), str):
        response["filePath"] = os.path.normpath(os.path.join(cwd, args["path"]))
    raw = result.raw_output or {}
    if tool == "run_command":
        response |= {
            "stdout": text,
            "stderr": "",
            "interrupted": bool(raw.get("timedOut")),
            "isImage": False,
            "exitCode": raw.get("exitCode"),
        }
    else:
        response["content"] = text
    return response


@dataclass(frozen=True, slots=True)
class HookAnswer:
    """What one run said, by Claude Code's protocol."""

    blocked: str | None = None
    """Exit 2's stderr, or `decision: block`'s reason: the action is blocked (or, for Stop, goes on)."""
    decision: str | None = None
    """PreToolUse's `permissionDecision` (allow, deny, ask)."""
    reason: str = ""
    updated_input: dict[str, Any] | None = None
    context: str = ""
    """`additionalContext`, or plain stdout where that is context (UserPromptSubmit, SessionStart)."""
    halt: str | None = None
    """`continue: false`: its `stopReason` (or a plain line)."""
    warning: str | None = None
    """The run failed to answer (could not start, timed out, exit 1, garbage): it blocks nothing."""


def read_answer(run: HookProcess, event: str) -> HookAnswer:
    """The answer of one run of a hook of `event`."""
    if run.error is not None:
        if run.ours and event == "PreToolUse":  # a guard we failed to start never lets the call through
            why = f"the hook did not run: {run.error}; the call is blocked rather than run unguarded"
            return HookAnswer(blocked=why, warning=run.error)
        return HookAnswer(warning=run.error)
    stdout = run.stdout.strip()
    data: dict[str, Any] | None = None
    bad_json = None
    if stdout.startswith("{"):
        try:
            parsed = json_text.loads(stdout)
        except ValueError as exc:
            bad_json = f"printed invalid JSON ({str(exc)[:80]})"
        else:
            data = parsed if isinstance(parsed, dict) else None
    if data is not None:  # a JSON object decides, whatever the exit code
        answer = _from_json(data, event)
        return answer if run.exit_code in (0, 2) else _with_warning(answer, _exit_warning(run))
    if run.exit_code == 2:
        return HookAnswer(blocked=_cap(run.stderr.strip() or "(no message)"))
    if run.exit_code != 0:
        return HookAnswer(warning=_exit_warning(run))
    if bad_json is not None:
        return HookAnswer(warning=bad_json)
    plain = _cap(stdout) if event in ("UserPromptSubmit", "SessionStart") else ""
    return HookAnswer(context=plain)


def _exit_warning(run: HookProcess) -> str:
    first = next((line for line in run.stderr.splitlines() if line.strip()), "")
    if run.exit_code == 127:
        return f"exit code 127 (command not found?){': ' + first[:200] if first else ''}"
    return f"exit code {run.exit_code}{': ' + first[:200] if first else ''}"


def _with_warning(answer: HookAnswer, warning: str) -> HookAnswer:
    return HookAnswer(
        answer.blocked,
        answer.decision,
        answer.reason,
        answer.updated_input,
        answer.context,
        answer.halt,
        warning,
    )


def _from_json(data: dict[str, Any], event: str) -> HookAnswer:
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    context = specific.get("additionalContext")
    context = _cap(context) if isinstance(context, str) else ""
    halt = None
    if data.get("continue") is False:
        reason = data.get("stopReason")
        halt = _cap(reason) if isinstance(reason, str) and reason.strip() else "a hook ended the turn"
    reason = data.get("reason")
    reason = _cap(reason) if isinstance(reason, str) else ""
    decision = specific.get("permissionDecision") if event == "PreToolUse" else None
    legacy = data.get("decision")
    blocked = None
    if event == "PreToolUse":
        if decision not in DECISIONS:  # the old top-level decision: approve / block
            decision = {"approve": "allow", "block": "deny"}.get(legacy) if isinstance(legacy, str) else None
        why = specific.get("permissionDecisionReason")
        reason = _cap(why) if isinstance(why, str) and why.strip() else reason
    elif legacy == "block":
        blocked = reason or "(no reason given)"
    updated = specific.get("updatedInput") if event == "PreToolUse" else None
    return HookAnswer(
        blocked,
        decision if decision in DECISIONS else None,
        reason,
        updated if isinstance(updated, dict) else None,
        context,
        halt,
    )


def _cap(text: str) -> str:
    return (
        text if len(text) <= MAX_CONTEXT_CHARS else text[:MAX_CONTEXT_CHARS] + "… [cut at 10,000 characters]"
    )
