"""ACP prompt content → Messages API user blocks, and a prompt read for the turn it asks for.

Text and resource links are baseline; embedded text resources arrive as their text under their
uri; images become image blocks; an embedded PDF becomes a `document` block, for a model that
reads PDFs (`ModelProfile.pdf_input`); a text blob (`text/*`, JSON, XML, YAML...) is decoded as
UTF-8 and arrives as a text resource. Anything the agent cannot pass on (audio, another blob, a
PDF for a model that reads none) is refused before any request, naming the type or the model.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from acp_agent.claude_code.conventions.builtins import CLAUDE_CODE_NAMES, command_of, slash_of
from acp_agent.errors import RpcError
from acp_agent.model.profiles import ModelProfile
from acp_agent.protocol.session import (
    IMAGE_TYPES,
    AudioContent,
    BlobResource,
    EmbeddedResource,
    ImageContent,
    PromptRequest,
    ResourceLink,
    TextContent,
)
from acp_agent.tools.files.image_headers import image_size
from acp_agent.tools.files.images import MAX_IMAGE_BASE64
from acp_agent.turn.context.media_budget import MAX_MEDIA_BYTES

__all__ = [
    "PDF",
    "TEXT_APPLICATIONS",
    "PreparedPrompt",
    "is_empty_prompt",
    "prepared_prompt",
    "to_model_blocks",
]

PDF = "application/pdf"
TEXT_APPLICATIONS = frozenset(
    {
        "json",
        "xml",
        "yaml",
        "x-yaml",
        "toml",
        "javascript",
        "x-javascript",
        "typescript",
        "x-sh",
        "sql",
        "graphql",
    }
)
"""`application/…` types that are text (besides `…+json` and `…+xml`)."""


def to_model_blocks(prompt: list[Any], *, model: str = "", pdf: bool = False) -> list[dict[str, Any]]:
    """Convert a validated prompt for `model` (`pdf`: it reads PDFs); raises RpcError (-32602)
    for content we cannot pass on."""
    if not prompt:
        raise RpcError.invalid_params("Invalid params: prompt: must hold at least one block")
    blocks: list[dict[str, Any]] = []
    for index, block in enumerate(prompt):
        if isinstance(block, TextContent):
            blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ResourceLink):
            blocks.append({"type": "text", "text": _link_line(block)})
        elif isinstance(block, ImageContent):
            blocks.append(_image(block.mime_type, block.data, f"prompt.{index}"))
        elif isinstance(block, EmbeddedResource):
            blocks.append(_embedded(block, index, model, pdf))
        elif isinstance(block, AudioContent):
            raise RpcError.invalid_params(
                f"Invalid params: prompt.{index}: audio is not supported (promptCapabilities.audio is false)"
            )
    if not any(b.get("text") or b["type"] in ("image", "document") for b in blocks):
        raise RpcError.invalid_params("Invalid params: prompt: holds no text or image")
    return blocks


def _link_line(link: ResourceLink) -> str:
    parts = [f"[Resource: {link.name}]({link.uri})"]
    if link.mime_type:
        parts.append(f"type {link.mime_type}")
    if link.title:
        parts.append(f"title {link.title!r}")
    if link.description:
        parts.append(link.description)
    if link.uri.startswith("file://"):
        parts.append("(a workspace file: read it with your tools if you need its content)")
    return " — ".join(parts)


def _image(mime_type: str, data: str, where: str) -> dict[str, Any]:
    """An image block, once its bytes are checked: one the API cannot process would fail this
    request and every later one of the session (issue 29)."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise RpcError.invalid_params(
            f"Invalid params: {where}: the image data is not valid base64"
        ) from None
    if len(data) > MAX_IMAGE_BASE64:
        raise RpcError.invalid_params(
            f"Invalid params: {where}: the image is {len(data):,} bytes as base64; the API takes "
            f"at most {MAX_IMAGE_BASE64:,}"
        )
    try:
        image_size(raw, mime_type)
    except ValueError as exc:
        raise RpcError.invalid_params(
            f"Invalid params: {where}: not a valid {mime_type} image ({exc})"
        ) from None
    return {"type": "image", "source": {"type": "base64", "media_type": mime_type, "data": data}}


def _embedded(block: EmbeddedResource, index: int, model: str, pdf: bool) -> dict[str, Any]:
    resource = block.resource
    if not isinstance(resource, BlobResource):
        return _text_resource(resource.uri, resource.text)
    where = f"prompt.{index}.resource"
    mime = (resource.mime_type or "").split(";", 1)[0].strip().lower()
    if mime in IMAGE_TYPES:
        return _image(mime, resource.blob, where)
    if mime == PDF:
        if not pdf:
            raise RpcError.invalid_params(
                f"Invalid params: {where}: the model {model} does not read PDFs (application/pdf); "
                "switch to one that does, or attach the text"
            )
        return _document(resource.blob, where)
    if _is_text(mime):
        return _text_resource(resource.uri, _decoded(resource.blob, mime, where))
    raise RpcError.invalid_params(
        f"Invalid params: {where}: binary {resource.mime_type or 'data without a mimeType'} is not "
        "supported (images: png, jpeg, gif, webp; PDFs; text)"
    )


def _text_resource(uri: str, text: str) -> dict[str, Any]:
    return {"type": "text", "text": f'<resource uri="{uri}">\n{text}\n</resource>'}


def _is_text(mime: str) -> bool:
    """`text/*`, any `…+json` or `…+xml` (SVG too), and the application types that are text."""
    kind, _, sub = mime.partition("/")
    return (
        kind == "text"
        or sub.endswith(("+json", "+xml"))
        or (kind == "application" and sub in TEXT_APPLICATIONS)
    )


def _raw(data: str, where: str, what: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise RpcError.invalid_params(
            f"Invalid params: {where}: the {what} data is not valid base64"
        ) from None


def _decoded(data: str, mime: str, where: str) -> str:
    try:
        return _raw(data, where, mime).decode("utf-8")
    except UnicodeDecodeError:
        raise RpcError.invalid_params(f"Invalid params: {where}: the {mime} data is not UTF-8 text") from None


def _document(data: str, where: str) -> dict[str, Any]:
    """A PDF as a `document` block, once it is one and within what a request may carry."""
    if len(data) > MAX_MEDIA_BYTES:
        raise RpcError.invalid_params(
            f"Invalid params: {where}: the PDF is {len(data):,} bytes as base64; at most "
            f"{MAX_MEDIA_BYTES:,} are taken"
        )
    if not _raw(data, where, PDF).startswith(b"%PDF-"):
        raise RpcError.invalid_params(f"Invalid params: {where}: not a PDF (it does not start with %PDF-)")
    return {"type": "document", "source": {"type": "base64", "media_type": PDF, "data": data}}


class PreparedPrompt(NamedTuple):
    """A prompt's content as the editor sent it (`shown`), the built-in command it names (with its
    arguments), whether it is empty, its blocks for the model (none for a command or an empty
    prompt), and the `/name` its blocks start with (read once: the command, skill or MCP prompt it
    runs is looked up by that name once the session's runtime is built, `command_turn.py`)."""

    shown: list[dict[str, Any]]
    command: tuple[str, str] | None
    empty: bool
    blocks: list[dict[str, Any]]
    slash: tuple[str, str] | None = None


async def prepared_prompt(
    request: PromptRequest, profile: ModelProfile, taken: Callable[[str], Awaitable[bool]]
) -> PreparedPrompt:
    """Read a prompt's content for the session's model (-32602 for content it cannot take), its
    `/name` once; `taken`: whether the project's command of that name replaces a built-in named
    after one of Claude Code's everyday commands (`CLAUDE_CODE_NAMES`: asked only for those)."""
    shown = [block.to_wire() for block in request.prompt]
    command = command_of(shown)
    if command is not None and command[0] in CLAUDE_CODE_NAMES and await taken(command[0]):
        command = None
    empty = is_empty_prompt(shown)
    blocks = (
        []
        if empty or command is not None
        else to_model_blocks(request.prompt, model=profile.id, pdf=profile.pdf_input)
    )
    return PreparedPrompt(shown, command, empty, blocks, None if command is not None else slash_of(blocks))


def is_empty_prompt(shown: list[dict[str, Any]]) -> bool:
    """`[]` (codecompanion's Enter on an empty line), or text blocks with nothing but whitespace:
    the API would refuse either with a 400, so the turn ends at once without a request."""
    return all(block.get("type") == "text" and not str(block.get("text", "")).strip() for block in shown)
