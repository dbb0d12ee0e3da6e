"""The trust question: may what this project's files widen take effect (`claude/trust.py`)?

Asked once per project content, at the session's first prompt, before its first request, as a
`session/request_permission` every client shows: the question lists exactly what trusting would
enable, each item with its file, whole (a long line folded, never cut: `folded`; a server's env,
headers and the `${VAR}`s it would read on lines of their own). "Trust this folder" and "Don't
trust" are remembered in the state dir (by folder and content digest: a changed hook or hook
script, or a new allow rule, asks again); the two others hold for this session. A client that
cannot answer, or an answer that is no offered choice, leaves the folder untrusted for the
session: the agent works as it would without those files, and `/status` and `/permissions` say
what was left off.
"""

from __future__ import annotations

from typing import Any

import structlog

from acp_agent.claude_code.setup.trust import ProjectTrust, TrustAnswer
from acp_agent.errors import RpcError
from acp_agent.session.editor.permissions import read_answer
from acp_agent.session.editor.updates import permission_tool_call
from acp_agent.session.requester import Requester
from acp_agent.turn.journal.entries import ToolCallShown

__all__ = ["TRUST_OPTIONS", "ask_trust", "folded"]

log = structlog.get_logger(__name__)

TRUST_OPTIONS = [
    {"optionId": "trust_always", "name": "Trust this folder (remembered)", "kind": "allow_always"},
    {"optionId": "trust_once", "name": "Trust it for this session", "kind": "allow_once"},
    {"optionId": "distrust_once", "name": "Not now", "kind": "reject_once"},
    {"optionId": "distrust_always", "name": "Don't trust (remembered)", "kind": "reject_always"},
]
FOLD_WIDTH = 100
_ANSWERS: dict[str, tuple[TrustAnswer, bool]] = {
    "trust_always": ("trusted", True),
    "trust_once": ("trusted", False),
    "distrust_once": ("declined", False),
    "distrust_always": ("declined", True),
}


def folded(text: str, width: int = FOLD_WIDTH) -> str:
    """`text` with each line longer than `width` folded onto indented lines: nothing is cut (the
    issue-41 hook hid a `curl … | sh` past 200 characters), and an editor that does not wrap still
    shows all of it."""
    lines = []
    for line in text.split("\n"):
        first, rest = line[:width], line[width:]
        lines.append(first)
        lines += [f"    ↪ {rest[i : i + width]}" for i in range(0, len(rest), width)]
    return "\n".join(lines)


async def ask_trust(session_id: str, requester: Requester, trust: ProjectTrust) -> tuple[TrustAnswer, bool]:
    """Ask whether to trust the project folder for what it widens: the answer, and whether to
    remember it (`ProjectTrust.settle` records it)."""
    items = list(trust.items)
    text = (
        f"The Claude Code settings of {trust.folder} would let more run without asking. "
        "Trusting this folder enables:\n"
        + "\n".join(folded(f"- {item.whole()}") for item in items)
        + "\n\nNot trusted, the agent works without them; the project's deny and ask rules apply "
        "either way."
    )
    raw_input: dict[str, Any] = {"folder": str(trust.folder), "enables": [item.whole() for item in items]}
    params = {
        "sessionId": session_id,
        "options": TRUST_OPTIONS,
        "toolCall": permission_tool_call(
            f"trust_{trust.digest()[:16]}",
            f"Trust the project settings in {trust.folder.name or trust.folder}?",
            "other",
            raw_input,
            ToolCallShown(text=text),
        ),
    }
    try:
        answer = await requester.request("session/request_permission", params)
    except RpcError as exc:
        log.warning("claude.trust_not_asked", code=exc.code, message=exc.message[:200])
        return "declined", False
    kind, option = read_answer(answer, _ANSWERS)
    chosen, remember = _ANSWERS[option] if kind == "selected" and option else ("declined", False)
    log.info("claude.trust_answered", folder=str(trust.folder), answer=chosen, remembered=remember)
    return chosen, remember
