"""The raw-SDK floor of a first request: a fresh process sends one Messages request with the SDK, and ends.

    python bench/baselines/sdk_request.py BODY.json [--lean]

What any Python agent on the official SDK pays before its first request reaches the API: the
interpreter, `import anthropic`, `AsyncAnthropic(max_retries=0)` (its HTTP client and TLS context),
and the request itself, built from BODY (the body the agent sent, so the request is the same). It
reads the streamed reply to its end and exits. `--lean` imports the SDK the way the agent does
(`acp_agent.model.sdk.anthropic_sdk`: only what a request needs), for the floor of that way.
`bench/first_request.py` times spawn → the request reaching the loopback fake.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any


async def _main(body: dict[str, Any], lean: bool) -> None:
    if lean:
        from acp_agent.model.sdk import anthropic_sdk

        anthropic = anthropic_sdk.now()
    else:
        import anthropic
    client = anthropic.AsyncAnthropic(max_retries=0)
    kwargs = {k: v for k, v in body.items() if k != "stream"}
    stream = await client.messages.create(stream=True, **kwargs)
    async for _event in stream:
        pass
    await client.close()


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        request = json.load(f)
    asyncio.run(_main(request, "--lean" in sys.argv[2:]))
