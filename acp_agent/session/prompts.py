"""ACP prompt content → Messages API user blocks.

Text and resource links are baseline; embedded text resources arrive as their text under their
uri; images become image blocks. Anything the agent cannot pass on is refused before any request.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from acp_agent.errors import RpcError
from acp_agent.protocol.session import (
    IMAGE_TYPES,
    AudioContent,
    BlobResource,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)
from acp_agent.tools.image_headers import image_size
from acp_agent.tools.images import MAX_IMAGE_BASE64

__all__ = ["to_model_blocks"]


def to_model_blocks(prompt: list[Any]) -> list[dict[str, Any]]:
    """Convert a validated prompt; raises RpcError (-32602) for content we cannot pass on."""
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
            blocks.append(_embedded(block, index))
        elif isinstance(block, AudioContent):
            raise RpcError.invalid_params(
                f"Invalid params: prompt.{index}: audio is not supported (promptCapabilities.audio is false)"
            )
    if not any(b.get("text") or b["type"] == "image" for b in blocks):
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


def _embedded(block: EmbeddedResource, index: int) -> dict[str, Any]:
    resource = block.resource
    if isinstance(resource, BlobResource):
        if resource.mime_type in IMAGE_TYPES:
            return _image(resource.mime_type or "", resource.blob, f"prompt.{index}.resource")
        raise RpcError.invalid_params(
            f"Invalid params: prompt.{index}.resource: binary {resource.mime_type or 'data'} "
            "is not supported (only png, jpeg, gif and webp images)"
        )
    return {"type": "text", "text": f'<resource uri="{resource.uri}">\n{resource.text}\n</resource>'}
