"""read_file on an image: the model gets an image block inside the tool_result, the editor a line."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess


def tiny_png() -> bytes:
    """A valid 1x1 red PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
        + chunk(b"IEND", b"")
    )


def results_of(fake_api: FakeMessagesAPI, index: int) -> list[dict]:
    return [
        b
        for m in fake_api.requests[index].body["messages"]
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]


async def test_an_image_reaches_the_model_as_an_image_block_and_survives_a_load(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    data = tiny_png()
    (workspace / "logo").write_bytes(data)  # no extension: recognised by its bytes
    fake_api.script(
        replies.tool_use("read_file", {"path": "logo"}, id="toolu_img"), replies.text("a red dot")
    )
    response = await agent.prompt(session, "what is in logo?")
    assert response["result"]["stopReason"] == "end_turn"
    [result] = results_of(fake_api, 1)
    text, image = result["content"]
    assert text["type"] == "text" and "image/png" in text["text"]
    assert image == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": base64.b64encode(data).decode()},
    }
    live = [p["update"] for p in agent.updates(session) if p["update"].get("toolCallId") == "toolu_img"]
    announced, final = live[0], live[-1]
    assert announced["sessionUpdate"] == "tool_call" and announced["name"] == "read_file"
    assert final["status"] == "completed"
    # The editor sees the image too, as ACP image content after the text
    shown_image = {
        "type": "content",
        "content": {"type": "image", "data": base64.b64encode(data).decode(), "mimeType": "image/png"},
    }
    assert final["content"][0]["content"]["type"] == "text" and final["content"][1:] == [shown_image]
    # The journal keeps the block: a loaded session shows the image again, and sends it again.
    start = len(agent.messages)
    loaded = await agent.request(
        "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
    )
    assert "result" in loaded
    replayed = [
        m["params"]["update"]
        for m in agent.messages[start : agent.messages.index(loaded)]
        if m.get("method") == "session/update" and m["params"]["update"].get("toolCallId") == "toolu_img"
    ]
    assert replayed[0]["name"] == "read_file" and replayed[-1]["content"] == final["content"]
    fake_api.script(replies.text("still a red dot"))
    await agent.prompt(session, "and now?")
    [again] = results_of(fake_api, 2)
    assert again["content"][1] == image


async def test_too_large_images_and_other_binary_files_are_refused(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    (workspace / "huge.png").write_bytes(tiny_png() + b"\0" * (4 << 20))
    (workspace / "blob.png").write_bytes(b"\0\1\2binary, not an image" * 10)
    fake_api.script(
        replies.message(
            [
                replies.tool_use_block("read_file", {"path": "huge.png"}, id="toolu_huge"),
                replies.tool_use_block("read_file", {"path": "blob.png"}, id="toolu_blob"),
            ],
            stop_reason="tool_use",
        ),
        replies.text("ok"),
    )
    await agent.prompt(session, "look")
    huge, blob = results_of(fake_api, 1)
    assert huge["is_error"] and isinstance(huge["content"], str)
    assert "image/png" in huge["content"] and "3,932,160 bytes" in huge["content"]
    assert blob["is_error"] and "binary" in blob["content"]
