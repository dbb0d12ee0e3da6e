"""`ask_user`: a question to the user, as a form in the editor, answered before the turn goes on.

Offered only to a client that advertised elicitation forms, for the whole session (the tool list is
part of the cached prompt prefix). It changes nothing, so it needs no permission and runs in plan
mode too, but it is not `read_only`: a reply's calls never show two questions at once. The answer,
a decline and a dismissal all come back to the model as the result; `session/cancel` abandons the
question with the turn (docs/decisions.md D24).
"""

from __future__ import annotations

from typing import Any

from acp_agent.errors import ToolError
from acp_agent.tools.base import ToolContext, ToolResult

__all__ = ["ASK_SECONDS", "AskUser", "question_form"]

ASK_SECONDS = 1800.0
"""How long a question waits for its answer (someone may have stepped away)."""
MAX_CHOICES = 10
MAX_ANSWER_CHARS = 8000
"""The text box's `maxLength`: an answer outside the form (longer, or a choice never offered)
comes back from the `Elicitation` as a dismissal, so what reaches the model was offered."""

DECLINED = (
    "The user declined to answer. Do not ask the same again: go on with your best judgement, "
    "or say what you need in your reply and end your turn."
)
DISMISSED = (
    "The user dismissed the question without answering. Go on with your best judgement, or ask "
    "in your reply and end your turn."
)


def question_form(question: str, choices: list[str], free_text: bool) -> dict[str, Any]:
    """The elicitation form: a single choice among `choices`, a text box, or both."""
    properties: dict[str, Any] = {}
    if choices:
        properties["choice"] = {"type": "string", "title": "Choose one", "enum": choices}
    if free_text:
        title = "Or answer in your own words" if choices else "Your answer"
        properties["answer"] = {"type": "string", "title": title, "maxLength": MAX_ANSWER_CHARS}
    required = ["choice"] if choices and not free_text else [] if choices else ["answer"]
    return {
        "mode": "form",
        "message": question,
        "requestedSchema": {"type": "object", "properties": properties, "required": required},
    }


class AskUser:
    """Ask the user one question (optional choices, optional free text) and wait for the answer."""

    name = "ask_user"
    kind = "other"
    permission = None
    description = (
        "Ask the user a question and wait for the answer, given in a form in their editor. Use it "
        "when a decision is theirs to make and you cannot go on well without it (which of several "
        "approaches, a fact only they know); never for what your tools can find out. One question "
        "per call. Offer `choices` when the answer is one of a few options; `free_text` (default: "
        "true without choices, false with them) adds a text box. The result is the answer, or that "
        "the user declined or dismissed the question."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "question": {
                "type": "string",
                "minLength": 1,
                "description": "The question, short and self-contained.",
            },
            "choices": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "description": f"Up to {MAX_CHOICES} answers to choose from; leave out for an open question.",
            },
            "free_text": {"type": "boolean", "description": "Also let the user answer in their own words."},
        },
        "required": ["question"],
        "additionalProperties": False,
    }

    def title(self, args: dict[str, Any]) -> str:
        question = " ".join(str(args.get("question", "")).split())
        return f"Ask: {question[:80]}{'…' if len(question) > 80 else ''}"

    def time_allowance(self, args: dict[str, Any]) -> float:
        """The wait for a person, not the usual tool timeout; our own timeout fires first."""
        return ASK_SECONDS + 5.0

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        elicitation = ctx.elicitation
        if elicitation is None or "form" not in elicitation.modes:
            raise ToolError("ask_user: this editor cannot show questions; ask in your reply instead")
        choices = list(dict.fromkeys(str(c).strip() for c in args.get("choices") or [] if str(c).strip()))
        if len(choices) > MAX_CHOICES:
            raise ToolError(f"ask_user: at most {MAX_CHOICES} choices (got {len(choices)})")
        free_text = args.get("free_text", not choices)
        if not choices and not free_text:
            raise ToolError("ask_user: give choices, or let the user answer in their own words")
        request = question_form(str(args["question"]).strip(), choices, bool(free_text))
        answer = await elicitation.elicit(request, call_id=ctx.call_id, timeout=ASK_SECONDS)
        action = answer.get("action")
        if action == "decline":
            return ToolResult(DECLINED, raw_output={"action": "decline"})
        if action != "accept":
            return ToolResult(DISMISSED, raw_output={"action": "cancel"})
        content = answer.get("content") or {}
        lines = []
        choice, text = content.get("choice"), content.get("answer")
        if isinstance(choice, str) and choice.strip():
            lines.append(f"The user chose: {choice.strip()}")
        if isinstance(text, str) and text.strip():
            lines.append(f"The user answered: {text.strip()}")
        return ToolResult(
            "\n".join(lines) or "The user submitted the form without an answer.",
            raw_output={"action": "accept"},
        )
