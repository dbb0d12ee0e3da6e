"""The SDK's own share of a model request: replay recorded request bodies through the SDK alone.

Given the bodies a process under test sent (a JSON list), this sends each one again with the same
client setup (`AsyncAnthropic(max_retries=0)`, raw stream events or one `messages.create`) and
consumes the reply, doing nothing else. Its CPU per request is what any relay pays to the SDK
(request build and serialisation, HTTP, SSE decoding, response parse); the bench subtracts it to
see what the agent itself adds.

Line protocol with the bench, so one process serves many measurements: it prints `ready` once the
SDK is imported; then, per run, it reads the path of a bodies file, sends the first body once as a
warm-up and prints `warm`, reads `go`, replays them all and prints `done`. EOF ends it.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any


async def _send(client: Any, body: dict[str, Any]) -> None:
    kwargs = {k: v for k, v in body.items() if k != "stream"}
    if body.get("stream") is True:
        stream = await client.messages.create(stream=True, **kwargs)
        try:
            async for event in stream:
                if event.type == "content_block_delta":
                    _ = event.delta.type
        finally:
            await stream.close()
    else:
        await client.messages.create(**kwargs)


def _say(word: str) -> None:
    sys.stdout.write(word + "\n")
    sys.stdout.flush()


async def _main() -> None:
    import anthropic
    import anthropic.resources.messages
    import anthropic.types

    client = anthropic.AsyncAnthropic(max_retries=0)
    _say("ready")
    while path := sys.stdin.readline().strip():  # blocking reads: nothing else runs meanwhile
        with open(path) as f:  # noqa: ASYNC230 (nothing else runs in this process)
            bodies: list[dict[str, Any]] = json.load(f)
        await _send(client, bodies[0])
        _say("warm")
        if sys.stdin.readline().strip() != "go":
            break
        for body in bodies:
            await _send(client, body)
        _say("done")
    await client.close()


if __name__ == "__main__":
    asyncio.run(_main())
