"""What the real Messages API does with `document` blocks: the fake refuses them the same way.

Written independently of the agent's own checks (`acp_agent.session.acp.prompts`). A document is a
PDF (`source.type` `base64`, `media_type` `application/pdf`, bytes that are a PDF) or plain text
(`source.type` `text`, `media_type` `text/plain`); anything else is a 400. A model whose rules say it
reads no PDF (`ModelRules.pdf`) refuses one; a model without rules takes it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from acp_agent.testing.rules.model_rules import RULES
from acp_agent.testing.rules.request_blocks import sources_of

__all__ = ["INVALID_PDF", "document_error"]

INVALID_PDF = "The PDF specified was not valid."


def document_error(body: Mapping[str, Any]) -> str | None:
    """The 400's message for this request's documents; None: every one is fine."""
    model = str(body.get("model") or "")
    rules = RULES.get(model)
    for path, source in sources_of(body, "document"):
        kind, media_type = source.get("type"), source.get("media_type")
        if kind == "text":
            if media_type != "text/plain" or not isinstance(source.get("data"), str):
                return f"{path}.source.text: media_type must be text/plain and data a string"
            continue
        if kind != "base64":
            return f"{path}.source.type: Input tag {kind!r} does not match the expected tags 'base64', 'text'"
        if media_type != "application/pdf":
            return f"{path}.source.base64.media_type: Input should be 'application/pdf'"
        if rules is not None and not rules.pdf:
            return f"{path}: {model} does not support PDF input."
        try:
            data = base64.b64decode(str(source.get("data") or ""), validate=True)
        except (binascii.Error, ValueError):
            return f"{path}.source.base64.data: {INVALID_PDF}"
        if not data.startswith(b"%PDF-"):
            return f"{path}.source.base64.data: {INVALID_PDF}"
    return None
