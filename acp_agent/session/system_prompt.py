"""The system prompt, assembled per session from what is true for that session.

The model is told its tools, the workspace, today's date, the limits in force and a few safety
rules, so it can pace itself and stay inside the workspace.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from acp_agent.limits import Limits

__all__ = [
    "RULES",
    "SUBAGENT_MARKER",
    "PromptParts",
    "build_agent_prompt",
    "build_subagent_prompt",
    "build_system_prompt",
    "rules",
]

_RULES: tuple[tuple[str, bool], ...] = (
    (
        "- Stay inside the workspace; paths are relative to its root. Look at files before you answer\n"
        "  questions about them.",
        False,
    ),
    (
        "- Ask the user before destructive or irreversible steps (deleting files, rewriting history,\n"
        "  anything outside the task).",
        False,
    ),
    (
        "- Prefer small, checked steps: read, edit, then verify (run the tests or the command that "
        "shows it works).",
        True,
    ),
    (
        "- When a budget is close to running out, stop starting new work and summarise what was done and "
        "what remains.",
        False,
    ),
    ("- Be concise: the user reads your text in an editor panel.", True),
)
"""The rules of the system prompt, each marked True when it is a coding instruction: an output
style without `keep-coding-instructions` leaves those out (`commands/output_styles.py`)."""


def rules(*, coding: bool = True) -> str:
    """The rules section, with or without the coding instructions."""
    return "\n".join(["Rules:", *(text for text, is_coding in _RULES if coding or not is_coding)])


RULES = rules()


SUBAGENT_MARKER = "You are a subagent of acp-agent"
"""How a subagent's system prompt begins (a test's fake tells its requests apart by it)."""

SUBAGENT_RULES = """Rules:
- You work for another agent, not for a person: nobody will answer a question, so do not ask one.
  Decide with what you can find, and say what you assumed.
- Stay inside the workspace; paths are relative to its root. Look at files before you state
  anything about them, and cite the paths (and lines) your answer rests on.
- Your requests and tool calls count against the budget of the turn you work in: use few, and
  stop searching once you can answer.
- Your final message is your answer, and the only thing the other agent sees of your work: make
  it complete and self-contained (what you found, where, and what remains unknown)."""


_RECENT: dict[str, str] = {}
"""The latest prompts made, each its own key: sessions of one project get one string, not a copy each."""
_RECENT_MAX = 8
_SHARED_MAX_CHARS = 50_000
"""A longer prompt (large instruction files) is not kept once its sessions are gone."""


def _shared(text: str) -> str:
    """`text`, or the equal string a recent session's prompt already is (the same characters, so
    the same request bytes and cache prefix), so a thousand sessions of one workspace hold one."""
    if len(text) > _SHARED_MAX_CHARS:
        return text
    kept = _RECENT.get(text)
    if kept is not None:
        return kept
    if len(_RECENT) >= _RECENT_MAX:
        del _RECENT[next(iter(_RECENT))]
    _RECENT[text] = text
    return text


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0].split(". ", 1)[0].rstrip(".")


def build_system_prompt(
    *,
    cwd: Path,
    tools: Iterable[tuple[str, str]],
    limits: Limits,
    today: dt.date | None = None,
    instructions: str = "",
    appended: str = "",
    skills: str = "",
    extra_roots: Sequence[Path] = (),
    style: str = "",
    coding_rules: bool = True,
) -> str:
    """The prompt for one session; `tools` are (name, description) pairs; `skills` lists the Agent
    Skills the model may load; `instructions` is the project instructions' section (AGENTS.md
    and Claude Code's memory files, `commands/instructions.py`), as the user's own words;
    `appended` is the client's system text (acpx `--system-prompt`); `style` is the output
    style's section, at the very end, and `coding_rules` False leaves the coding instructions
    out (a style without `keep-coding-instructions`); `extra_roots` are the client's additional
    workspace roots. Built once per session: the same text on every request keeps the prompt
    cache warm."""
    today = today or dt.date.today()
    tool_lines = "\n".join(f"- {name}: {_first_line(description)}" for name, description in tools)
    budget = [f"at most {limits.max_turn_requests} model requests"]
    if limits.max_tool_calls is not None:
        budget.append(f"{limits.max_tool_calls} tool calls")
    if limits.max_turn_seconds is not None:
        budget.append(f"{limits.max_turn_seconds:g} seconds")
    return _shared(
        "You are acp-agent, a coding assistant working inside the user's editor through the "
        "Agent Client Protocol.\n"
        f"Workspace root: {cwd}\n" + _roots_lines(extra_roots) + f"Today's date: {today.isoformat()}\n\n"
        f"Tools:\n{tool_lines}\n\n"
        f"Limits for each user prompt: {', '.join(budget)}. Edits and commands may need the "
        "user's permission; if the user declines, do not retry the same call.\n\n"
        f"{rules(coding=coding_rules)}"
        + (f"\n\n{skills}" if skills else "")
        + (f"\n\n{instructions}" if instructions else "")
        + (f"\n\nInstructions from the client:\n{appended}" if appended else "")
        + (f"\n\n{style}" if style else "")
    )


@dataclass(frozen=True, slots=True)
class PromptParts:
    """What a session's system prompt is built from, kept so that another output style can
    rebuild it (`build`) with everything else unchanged."""

    cwd: Path
    tools: tuple[tuple[str, str], ...]
    limits: Limits
    today: dt.date
    instructions: str = ""
    appended: str = ""
    skills: str = ""
    extra_roots: tuple[Path, ...] = ()

    def build(self, *, style: str = "", coding_rules: bool = True) -> str:
        return build_system_prompt(
            cwd=self.cwd,
            tools=self.tools,
            limits=self.limits,
            today=self.today,
            instructions=self.instructions,
            appended=self.appended,
            skills=self.skills,
            extra_roots=self.extra_roots,
            style=style,
            coding_rules=coding_rules,
        )


def build_subagent_prompt(
    *,
    cwd: Path,
    tools: Iterable[tuple[str, str]],
    today: dt.date | None = None,
    instructions: str = "",
    skills: str = "",
    extra_roots: Sequence[Path] = (),
) -> str:
    """The prompt of every subagent of one session: the same workspace facts, tools, skills and
    project instructions as the session's own, and no task (that is the first user message), so
    every subagent of the session, in every turn, shares one cached prefix."""
    today = today or dt.date.today()
    tool_lines = "\n".join(f"- {name}: {_first_line(description)}" for name, description in tools)
    return (
        f"{SUBAGENT_MARKER}, a coding assistant. Another agent gave you a task, in the first "
        "message; work on it with your tools and answer it in your final message.\n"
        f"Workspace root: {cwd}\n" + _roots_lines(extra_roots) + f"Today's date: {today.isoformat()}\n\n"
        f"Tools:\n{tool_lines}\n\n"
        f"{SUBAGENT_RULES}"
        + (f"\n\n{skills}" if skills else "")
        + (f"\n\n{instructions}" if instructions else "")
    )


def build_agent_prompt(
    *,
    prompt: str,
    cwd: Path,
    tools: Iterable[tuple[str, str]],
    today: dt.date,
    skills: str = "",
    extra_roots: Sequence[Path] = (),
) -> str:
    """A custom agent's prompt: its file's body, then what every subagent is told of its
    workspace, tools and rules. The project's instructions are left out: as in Claude Code, the
    body is the agent's whole brief. The same text on each of its calls: one cached prefix."""
    environment = build_subagent_prompt(
        cwd=cwd, tools=tools, today=today, skills=skills, extra_roots=extra_roots
    )
    return f"{prompt}\n\n---\n\n{environment}"


def _roots_lines(extra_roots: Sequence[Path]) -> str:
    """The client's additional workspace roots, one line each (nothing without them)."""
    if not extra_roots:
        return ""
    lines = "".join(f"- {root}\n" for root in extra_roots)
    return (
        "Additional workspace roots (reach them by absolute path; relative paths are the "
        f"workspace root's):\n{lines}"
    )
