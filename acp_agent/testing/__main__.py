"""`python -m acp_agent.testing`: run the fake Messages API in the foreground for manual checks.

Prints its base_url on stdout (this is a test tool, not the agent) and serves until killed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
from typing import Any

from acp_agent.testing.messages_api import FakeMessagesAPI
from acp_agent.testing.replies import Message, ReplyFactory, text, tool_use

__all__ = ["main"]


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m acp_agent.testing", description="A loopback fake of the Anthropic Messages API."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument(
        "--reply",
        choices=("text", "tool_use"),
        default="text",
        help="text: answer with --text; tool_use: call a tool forever",
    )
    parser.add_argument("--text", default="Hello from the fake Messages API.")
    parser.add_argument("--chunks", type=int, default=None, help="stream the text as N deltas")
    parser.add_argument("--tool", default="read_file", help="the tool name for --reply tool_use")
    parser.add_argument(
        "--tool-input",
        default='{"path": "file-{n}.txt"}',
        help="JSON input for --reply tool_use; {n} becomes the attempt number",
    )
    return parser.parse_args(argv)


def _fallback(args: argparse.Namespace) -> Message | ReplyFactory:
    if args.reply == "text":
        return text(args.text, chunks=args.chunks)
    template: str = args.tool_input
    json.loads(template.replace("{n}", "0"))  # fail at start-up, not per request

    def call_tool(body: dict[str, Any], n: int) -> Message:
        return tool_use(args.tool, json.loads(template.replace("{n}", str(n))))

    return call_tool


def main(argv: list[str] | None = None) -> int:
    """Serve until SIGINT or SIGTERM."""
    args = _parse(argv)
    fake = FakeMessagesAPI(host=args.host, port=args.port)
    fake.set_fallback(_fallback(args))
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    with fake:
        sys.stdout.write(fake.base_url + "\n")
        sys.stdout.flush()
        with contextlib.suppress(KeyboardInterrupt):
            done.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
