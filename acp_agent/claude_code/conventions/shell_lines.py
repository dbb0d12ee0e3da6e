"""A command file's `` !`cmd` `` lines and `@file` reads, run as tool calls of the turn it starts.

Each runs through the turn's tool batch (`prompt_calls`): shown to the editor, put to the one rule
engine under the session's mode (and the command's `allowed-tools`), its hooks run, sandboxed,
counted against the tool-call budget. Its output, or why it did not run, takes its place in the
prompt; so the call is not a message of the model's history (no `tool_use` of the model's asked
for it). It is journaled all the same, as a `ShownCallEntry` with what the editor was shown, so
session/load shows it as the live turn did.
"""

from __future__ import annotations

import uuid
from typing import Any

from acp_agent.claude_code.conventions.expansion import MAX_SHELL_COMMANDS, Piece, shell_commands
from acp_agent.turn.context.history import History, JournalWriter, result_text
from acp_agent.turn.journal.entries import Entry, ShownCallEntry, ToolResultEntry
from acp_agent.turn.meter import TurnMeter
from acp_agent.turn.runner import TurnRunner

__all__ = ["prompt_calls", "run_shell_lines"]


class _ShownOnly:
    """The batch's journal: each call's result as a `ShownCallEntry` in the session's journal
    (its `tool_started` mark is not kept: no message of the history waits for its result)."""

    def __init__(self, journal: JournalWriter, calls: list[dict[str, Any]]) -> None:
        self.journal = journal
        self.calls = {call["id"]: call for call in calls}

    def __call__(self, entry: Entry, *, sync: bool = True) -> None:
        if isinstance(entry, ToolResultEntry):
            call = self.calls[entry.block["tool_use_id"]]
            self.journal(ShownCallEntry(call["id"], call["name"], call["input"], entry.shown), sync=sync)


async def prompt_calls(
    name: str,
    inputs: list[dict[str, Any]],
    runner: TurnRunner,
    meter: TurnMeter,
    journal: JournalWriter | None,
) -> list[tuple[str, bool]]:
    """Run `name` once per input as tool calls of the turn (its tool batch: shown, decided by the
    engine, hooked, counted); each call's (output text, whether it failed or was refused)."""
    calls = [
        {"id": f"toolu_cmd_{uuid.uuid4().hex[:20]}", "name": name, "input": dict(given)} for given in inputs
    ]
    # The results go into the prompt, not after a tool_use of the model's: a history of their own.
    scratch = History(journal=None if journal is None else _ShownOnly(journal, calls))
    await runner.tool_batch(calls, scratch, meter).run()
    return [
        (result_text(result.get("content", "")).rstrip(), bool(result.get("is_error")))
        for result in scratch.messages[-1]["content"]
    ]


async def run_shell_lines(
    pieces: list[Piece], runner: TurnRunner, meter: TurnMeter, journal: JournalWriter | None
) -> str:
    """The prompt's text, each `` !`cmd` `` replaced by its output (run as a run_command tool call)."""
    commands = shell_commands(pieces)
    outputs: dict[str, str] = {}
    if commands and "run_command" not in runner.tools:
        outputs = dict.fromkeys(commands, "[not run: run_command is not offered in this session]")
    elif commands:
        ran = commands[:MAX_SHELL_COMMANDS]
        outputs = dict.fromkeys(commands[len(ran) :], f"[not run: at most {MAX_SHELL_COMMANDS} commands run]")
        results = await prompt_calls("run_command", [{"command": c} for c in ran], runner, meter, journal)
        for command, (output, failed) in zip(ran, results, strict=True):
            outputs[command] = (
                f"[`{command}` failed or was not run: {output}]"
                if failed
                else f"\n```\n$ {command}\n{output}\n```\n"
            )
    return "".join(_shown(piece, outputs) for piece in pieces)


def _shown(piece: Piece, outputs: dict[str, str]) -> str:
    """What takes a piece's place in the prompt: text as it is, a `!` line's output or why not."""
    if isinstance(piece, str):
        return piece
    if piece.refused is not None:
        return f"[`{piece.command}` was not run: {piece.refused}]"
    return outputs[piece.command]
