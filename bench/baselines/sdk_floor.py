"""The SDK's own share of a model request: replay recorded request bodies through the SDK alone.

Given the bodies a process under test sent (a JSON list), this sends each one again with the same
client setup (`AsyncAnthropic(max_retries=0)`, raw stream events or one `messages.create`) and
consumes the reply, doing nothing else. Its CPU per request is what any relay pays to the SDK
(request build and serialisation, HTTP, SSE decoding, response parse); the bench subtracts it to
see what the agent itself adds.

Protocol with the bench: prints `ready` once the SDK is imported and the client built (the first
body is sent once as a warm-up), waits for a line on stdin, replays, prints `done`.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any


async def _send(client: Any, body: dict[str, Any]) -> int:
    kwargs = {k: v for k, v in body.items() if k != "stream"}
    events = 0
    if body.get("stream") is True:
        stream = await client.messages.create(stream=True, **kwargs)
        try:
            async for event in stream:
                events += 1
                if event.type == "content_block_delta":
                    _ = event.delta.type
        finally:
            await stream.close()
    else:
        message = await client.messages.create(**kwargs)
        events = len(message.content)
    return events


async def _main(path: str) -> None:
    import anthropic

    with open(path) as f:
        bodies: list[dict[str, Any]] = json.load(f)
    client = anthropic.AsyncAnthropic(max_retries=0)
    await _send(client, bodies[0])
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.readline)
    for body in bodies:
        await _send(client, body)
    sys.stdout.write("done\n")
    sys.stdout.flush()
    await client.close()


if __name__ == "__main__":
    asyncio.run(_main(sys.argv[1]))
