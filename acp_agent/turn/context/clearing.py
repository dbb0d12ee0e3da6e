"""Old tool results cleared from what a long session sends, at a high-water mark (docs/decisions.md D28).

Every request resends the whole conversation. Cache reads are cheap, but they are paid on every
token of every request, and old tool results (file contents, command output) are most of a long
session's tail. So, before a request, when the latest request's context passed
`clear_results_at` tokens, the old results are replaced in ONE step by a short note that names the
call and says it can be made again ("[cleared to save context: the result of read_file src/app.py
(10.2 KB); read it again if you need it]"). The history and the journal keep them whole
(`cleared.py` makes the view a request carries), and session/load replays them whole.

Cache-wise, a clearing rewrites the cached prompt once from the first cleared result on; the
cleared prefix then stays byte for byte the same until the next clearing, so every request in
between reads it. Hence the rules:
- **Kept:** the latest results, up to `clear_results_keep` tokens (at most half the trigger), and
  always the last user message's (the batch the next request answers); errors (short, and what
  the model must not repeat); `update_plan`, `ask_user` and `skill` results (the plan, the user's
  answers, instructions: nothing a call can fetch again); results under ~1 KB (the note would
  save nothing).
- **Enough at once:** a clearing happens only when it frees at least half of
  (trigger - keep); otherwise the requests would churn, each rewriting the cache for a little.
- **Thinking:** the thinking blocks of every message after the first cleared one leave the
  requests with it (they were signed to the old prefix: the 5.5 models refuse them). Those of the
  current tool-use cycle cannot go (the API wants them back with their results), so while the
  cycle holds any, the clearing waits: with a thinking model it happens at a turn's first request.

A short session never reaches the trigger, and its requests are exactly what they were.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import structlog

from acp_agent.errors import LimitsError
from acp_agent.turn.context.history import THINKING_BLOCKS, History
from acp_agent.turn.journal.entries import ClearedResult, ClearingEntry
from acp_agent.turn.settings import RunnerSettings

__all__ = [
    "KEPT_TOOLS",
    "META_KEYS",
    "MIN_CLEARED_CHARS",
    "clear_old_results",
    "note_for",
    "status",
    "with_meta",
]

log = structlog.get_logger(__name__)

KEPT_TOOLS = frozenset({"update_plan", "ask_user", "skill"})
"""Results never cleared: the plan, the user's answers, a skill's instructions."""
MIN_CLEARED_CHARS = 1_000
CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1_600
"""About what one image costs (a 1.15-megapixel image, the API's size before it scales one down)."""
SHOWN_INPUT = 120
"""Characters of a call's input the note repeats at most."""

Message = dict[str, Any]
Block = dict[str, Any]


def _size(content: Any) -> tuple[int, int]:
    """(characters of text, images) of a tool_result's content."""
    if not isinstance(content, list):
        return len(str(content)), 0
    chars = sum(
        len(str(b.get("text", ""))) for b in content if isinstance(b, dict) and b.get("type") == "text"
    )
    images = sum(1 for b in content if isinstance(b, dict) and b.get("type") in ("image", "document"))
    return chars, images


def _tokens(chars: int, images: int) -> int:
    return chars // CHARS_PER_TOKEN + images * IMAGE_TOKENS


def estimated_tokens(content: Any) -> int:
    """What a text, or a list of content blocks (text and images), costs, estimated as the
    clearing estimates a tool result (also `/context`'s estimate)."""
    return _tokens(*_size(content))


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN_INPUT else text[: SHOWN_INPUT - 1] + "…"


def _call(use: Block | None) -> tuple[str, str]:
    """How the note names the call, and how the model gets its result back."""
    if use is None:
        return "an earlier tool call", "make the call again if you need it"
    name, args = str(use.get("name")), use.get("input")
    args = args if isinstance(args, dict) else {}
    if name == "read_file" and isinstance(args.get("path"), str):
        lines = ""
        if isinstance(args.get("offset"), int) or isinstance(args.get("limit"), int):
            lines = f" from line {args.get('offset') or 1}" + (
                f", {args['limit']} lines" if isinstance(args.get("limit"), int) else ""
            )
        return f"the result of read_file {_short(args['path'])}{lines}", "read it again if you need it"
    if name == "run_command" and isinstance(args.get("command"), str):
        return f"the output of run_command `{_short(args['command'])}`", "run it again if you need it"
    if name == "search_text" and isinstance(args.get("pattern"), str):
        where = f" in {_short(str(args['path']))}" if args.get("path") else ""
        return (
            f"the result of search_text {json.dumps(_short(args['pattern']))}{where}",
            "search again if you need it",
        )
    if name == "list_files":
        shown = _short(" ".join(str(args[k]) for k in ("path", "pattern") if args.get(k)) or ".")
        return f"the result of list_files {shown}", "list it again if you need it"
    shown = _short(json.dumps(args, ensure_ascii=False, sort_keys=True)) if args else ""
    return f"the result of {name} {shown}".rstrip(), "call it again if you need it"


def note_for(use: Block | None, chars: int, images: int) -> str:
    """The text sent in place of a cleared result: what it was, how big, how to get it back."""
    what, again = _call(use)
    size = [f"{chars / 1000:.1f} KB"] if chars or not images else []
    if images:
        size.append(f"{images} image{'s' if images > 1 else ''}")
    return f"[cleared to save context: {what} ({' and '.join(size)}); {again}]"


def _old_results(messages: list[Message], history: History, keep: int) -> list[tuple[int, Block]]:
    """(message index, block) of each result older than the latest `keep` tokens of them, oldest
    first, that may be cleared."""
    last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=-1)
    results = [
        (i, b)
        for i, m in enumerate(messages)
        if m["role"] == "user"
        for b in m["content"]
        if b.get("type") == "tool_result" and b.get("tool_use_id") not in history.cleared.notes
    ]
    kept, old = 0, len(results)
    while old > 0:
        i, block = results[old - 1]
        size = _tokens(*_size(block.get("content")))
        if i != last_user and kept + size > keep:
            break
        kept += size
        old -= 1
    return [(i, b) for i, b in results[:old] if not b.get("is_error")]


def _thinking_of_this_cycle(messages: list[Message], first: int) -> bool:
    """Whether a thinking block after message `first` belongs to the current tool-use cycle (the
    replies since the last user message that holds no tool result): the API wants those back, as
    they were, with their results, so a clearing that would leave them out waits for the turn's end."""
    start = max(
        (
            i
            for i, m in enumerate(messages)
            if m["role"] == "user" and not any(b.get("type") == "tool_result" for b in m["content"])
        ),
        default=-1,
    )
    return any(
        b.get("type") in THINKING_BLOCKS
        for m in messages[max(start, first) + 1 :]
        if m["role"] == "assistant"
        for b in m["content"]
    )


def clear_old_results(history: History, context_tokens: int, settings: RunnerSettings) -> int:
    """Clear the old tool results from what `history` sends, when `context_tokens` (the latest
    request's context) passed `clear_results_at` and enough can go; returns the context's size
    after, about (`context_tokens` when nothing was cleared: the common case touches nothing)."""
    at = settings.clear_results_at
    if not at or context_tokens < at:
        return context_tokens
    keep = min(settings.clear_results_keep, at // 2)
    messages = history.messages
    uses = {
        b.get("id"): b
        for m in messages
        if m["role"] == "assistant"
        for b in m["content"]
        if b.get("type") == "tool_use"
    }
    cleared: list[tuple[int, ClearedResult]] = []
    freed = 0
    for i, block in _old_results(messages, history, keep):
        use = uses.get(block["tool_use_id"])
        chars, images = _size(block.get("content"))
        if (use is not None and use.get("name") in KEPT_TOOLS) or (chars < MIN_CLEARED_CHARS and not images):
            continue
        note = note_for(use, chars, images)
        cleared.append((i, ClearedResult(block["tool_use_id"], note, chars, images)))
        freed += _tokens(chars, images) - len(note) // CHARS_PER_TOKEN
    if not cleared or freed < (at - keep) // 2:
        return context_tokens
    first = cleared[0][0]
    if _thinking_of_this_cycle(messages, first):
        log.debug("history.clearing_waits", reason="the current tool-use cycle has thinking blocks")
        return context_tokens
    history.clear_results(ClearingEntry(tuple(r for _, r in cleared), first, len(messages)))
    log.info("history.cleared", results=len(cleared), tokens=freed, context=context_tokens, first=first)
    return max(0, context_tokens - freed)


META_KEYS = {"clearResultsAt": "clear_results_at", "clearResultsKeep": "clear_results_keep"}
"""`_meta["acp-agent"]` keys of session/new and session/load that set these per session."""


def with_meta(settings: RunnerSettings, overrides: dict[str, Any]) -> RunnerSettings:
    """`settings` with a session's `clearResultsAt` / `clearResultsKeep` (tokens; 0 or null: never
    clear / keep nothing more than the latest batch).

    Raises:
        LimitsError: a value that is not a non-negative integer or null.
    """
    values: dict[str, Any] = {}
    for key, name in META_KEYS.items():
        if key not in overrides:
            continue
        value = overrides[key]
        if value is None:
            value = 0
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise LimitsError(key, "must be a non-negative integer (tokens) or null")
        values[name] = value
    return replace(settings, **values) if values else settings


def status(history: History, settings: RunnerSettings) -> str:
    """The /status line: what the requests leave out so far, and when the next clearing comes."""
    at = settings.clear_results_at
    when = f"when a request passes {at:,} tokens" if at else "off"
    return f"{history.cleared.status()} (clearing: {when})"
