"""Images that would break a session never do (issue 29 item 8), on the loopback fake, which refuses
what the real API refuses: an image that does not decode (400 "Could not process image"), a
request over 32 MB (413).

- A file that only starts like a PNG is never attached.
- An image the API cannot process is taken out of the history (a note in its place, journaled),
  the request is sent again, and later prompts and a loaded session work.
- Eight 3.7 MB screenshots: the oldest leave the history before a request would pass the budget.
"""

from __future__ import annotations

import base64
import os
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from acp_agent.testing.rules.image_rules import MAX_REQUEST_BYTES, TOO_LARGE
from acp_agent.turn.context.media_budget import OVER_BUDGET, REFUSED
from tests.support.agent import AgentProcess
from tests.support.images import png


def images_in(body: dict[str, Any]) -> list[str]:
    """The base64 data of every image a request carried, oldest first."""
    found = []
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            parts = block.get("content") if block.get("type") == "tool_result" else [block]
            found += (
                [p["source"]["data"] for p in parts if p.get("type") == "image"]
                if isinstance(parts, list)
                else []
            )
    return found


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def undecodable_png() -> bytes:
    """A PNG whose chunks and CRCs are right but whose image data does not inflate: it passes a
    header check, and the API cannot process it."""
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0))
        + _chunk(b"IDAT", b"not zlib data at all")
        + _chunk(b"IEND", b"")
    )


def screenshot() -> bytes:
    """A 3.7 MB PNG of noise (it does not compress), a different one each time."""
    side = 1110
    rows = b"".join(b"\x00" + os.urandom(side * 3) for _ in range(side))
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0))
        + _chunk(b"IDAT", zlib.compress(rows, 0))  # stored: noise would not shrink, and deflating costs 0.3 s
        + _chunk(b"IEND", b"")
    )


async def test_a_file_that_only_starts_like_a_png_is_never_sent_as_an_image(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    (workspace / "fake.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"just some text, no chunks\n" * 20)
    fake_api.script(replies.tool_use("read_file", {"path": "fake.png"}, id="toolu_fake"), replies.text("ok"))
    response = await agent.prompt(session, "look at fake.png")
    assert response["result"]["stopReason"] == "end_turn", response
    [result] = [
        b for b in fake_api.requests[-1].body["messages"][-1]["content"] if b["type"] == "tool_result"
    ]
    assert (
        result["is_error"] and "starts like a PNG image but is not one the API can take" in result["content"]
    )
    assert not any(images_in(r.body) for r in fake_api.requests)
    fake_api.script(replies.text("fine"))
    assert (await agent.prompt(session, "again"))["result"]["stopReason"] == "end_turn"


async def test_an_image_the_api_cannot_process_is_taken_out_and_the_session_recovers(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    (workspace / "broken.png").write_bytes(undecodable_png())
    (workspace / "good.png").write_bytes(png(2, 2))
    good = base64.b64encode(png(2, 2)).decode()
    fake_api.script(
        replies.tool_use("read_file", {"path": "good.png"}, id="toolu_good"),
        replies.tool_use("read_file", {"path": "broken.png"}, id="toolu_broken"),
        replies.text("one was broken"),  # the refused request is sent again without it
        replies.text("next prompt"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "look at both")
        assert response["result"]["stopReason"] == "end_turn", response
        bodies = [r.body for r in fake_api.requests]
        assert len(bodies) == 4  # 3 requests, the third refused once and sent again
        assert images_in(bodies[2]) == [good, base64.b64encode(undecodable_png()).decode()]
        assert images_in(bodies[3]) == [good]  # the one it took stays
        assert REFUSED in str(bodies[3]["messages"])
        record = response["result"]["_meta"]["acp-agent"]["turn"]
        assert (record["modelRequests"], record["retries"]) == (3, 1)  # the re-send is a retry
        assert (await agent.prompt(session, "and now?"))["result"]["stopReason"] == "end_turn"
    fake_api.script(replies.text("after load"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        loaded = await agent.request(
            "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
        )
        assert "result" in loaded
        response = await agent.prompt(session, "after a restart")
        assert response["result"]["stopReason"] == "end_turn", response
    assert images_in(fake_api.requests[-1].body) == [good] and REFUSED in str(fake_api.requests[-1].body)


@pytest.mark.slow  # ~6 s alone; ten requests of up to ~20 MB each: over 30 s on a loaded box
@pytest.mark.timeout(300)
async def test_eight_large_screenshots_never_push_a_request_past_the_limit(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    for n in range(8):
        (workspace / f"shot{n}.png").write_bytes(screenshot())
        assert 3_600_000 < (workspace / f"shot{n}.png").stat().st_size < 3_900_000
    fake_api.script(
        *[replies.tool_use("read_file", {"path": f"shot{n}.png"}, id=f"toolu_{n}") for n in range(8)],
        replies.text("seen them all"),
        replies.text("and more"),
    )
    response = await agent.prompt(session, "look at every screenshot", timeout=240)
    assert response["result"]["stopReason"] == "end_turn", response
    assert (await agent.prompt(session, "next", timeout=120))["result"]["stopReason"] == "end_turn"
    sizes = [int(r.headers["content-length"]) for r in fake_api.requests]
    assert len(sizes) == 10 and max(sizes) < MAX_REQUEST_BYTES, sizes  # no 413, no second try
    last = fake_api.requests[-1].body
    newest = base64.b64encode((workspace / "shot7.png").read_bytes()).decode()
    assert images_in(last)[-1] == newest and 1 <= len(images_in(last)) <= 4
    assert OVER_BUDGET in str(last["messages"])


async def test_a_413_takes_out_the_oldest_images_and_the_request_is_sent_again(
    agent: AgentProcess, session: str, fake_api: FakeMessagesAPI, workspace: Path
) -> None:
    for n in range(4):
        (workspace / f"pic{n}.png").write_bytes(png(n + 1, 1))
    fake_api.script(
        *[replies.tool_use("read_file", {"path": f"pic{n}.png"}, id=f"toolu_{n}") for n in range(4)],
        replies.Error(413, "request_too_large", TOO_LARGE),  # a gateway with a lower limit, say
        replies.text("done"),
    )
    response = await agent.prompt(session, "look")
    assert response["result"]["stopReason"] == "end_turn", response
    kept = images_in(fake_api.requests[-1].body)
    assert kept == [base64.b64encode(png(n + 1, 1)).decode() for n in (2, 3)]  # the newest half
