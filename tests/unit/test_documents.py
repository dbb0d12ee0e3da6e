"""PDFs and other blobs in a prompt (issue 24 item 6): the agent's conversion, and the fake's
`document` rules written from the API's, so a wire test on the fake catches a bad block."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from acp_agent.errors import RpcError
from acp_agent.model.profiles import builtin_profile, profile_from_api
from acp_agent.protocol.session import PromptRequest
from acp_agent.session.acp.prompts import to_model_blocks
from acp_agent.testing.rules.document_rules import INVALID_PDF, document_error
from acp_agent.testing.rules.model_rules import RULES

PDF = b"%PDF-1.7\n%%EOF\n"


def prompt(*blocks: dict[str, Any]) -> list[Any]:
    return PromptRequest.model_validate({"sessionId": "s", "prompt": list(blocks)}).prompt


def blob(data: bytes, mime_type: str) -> dict[str, Any]:
    return {
        "type": "resource",
        "resource": {"uri": "file:///a", "blob": base64.b64encode(data).decode(), "mimeType": mime_type},
    }


def document(data: bytes, media_type: str = "application/pdf") -> dict[str, Any]:
    return {
        "type": "document",
        "source": {"type": "base64", "media_type": media_type, "data": base64.b64encode(data).decode()},
    }


def test_a_pdf_becomes_a_document_block_for_a_model_that_reads_them() -> None:
    blocks = to_model_blocks(prompt(blob(PDF, "application/pdf")), model="m", pdf=True)
    assert blocks == [document(PDF)]  # a PDF alone is a prompt (no text needed)


@pytest.mark.parametrize(
    ("data", "mime_type", "pdf", "said"),
    [
        (PDF, "application/pdf", False, "the model m does not read PDFs"),
        (b"<html>", "application/pdf", True, "not a PDF"),
        (b"\xff\xfe", "application/json", True, "application/json data is not UTF-8 text"),
        (b"\x7fELF", "application/octet-stream", True, "binary application/octet-stream is not supported"),
    ],
)
def test_what_cannot_be_passed_on_is_refused_naming_why(
    data: bytes, mime_type: str, pdf: bool, said: str
) -> None:
    with pytest.raises(RpcError, match=said) as refused:
        to_model_blocks(prompt({"type": "text", "text": "x"}, blob(data, mime_type)), model="m", pdf=pdf)
    assert refused.value.code == -32602


def test_text_types_are_decoded() -> None:
    for mime_type in (
        "text/markdown",
        "application/json",
        "application/vnd.api+json",
        "image/svg+xml",
        "application/x-yaml",
    ):
        [block] = to_model_blocks(prompt(blob("é\n".encode(), mime_type)), model="m")
        assert block["type"] == "text" and "é" in block["text"], mime_type


def test_which_models_read_pdfs() -> None:
    assert builtin_profile("claude-sonnet-5-5").pdf_input and builtin_profile("claude-haiku-4-5").pdf_input
    unknown = builtin_profile("gw-model")
    assert not unknown.pdf_input  # nothing is sent that a model may refuse
    assert profile_from_api(unknown, {"capabilities": {"pdf_input": {"supported": True}}}).pdf_input


def test_the_fake_takes_documents_as_the_api_does() -> None:
    body = {"model": "claude-sonnet-5-5", "messages": [{"role": "user", "content": [document(PDF)]}]}
    assert document_error(body) is None
    for bad in (document(b"plain text"), document(PDF, "application/x-pdf")):
        body["messages"][0]["content"] = [{"type": "text", "text": "x"}, bad]
        assert document_error(body) is not None
    body["messages"][0]["content"] = [document(b"<html>")]
    assert document_error(body) == f"messages.0.content.0.source.base64.data: {INVALID_PDF}"
    text = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "hi"}}
    body["messages"][0]["content"] = [text]
    assert document_error(body) is None
    assert all(rules.pdf for rules in RULES.values())
