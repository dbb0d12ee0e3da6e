"""The floor the agent is measured against: a minimal ACP relay over the `anthropic` SDK.

Standard library plus `anthropic`, one file, no validation, no logging. It speaks the subset the
benches use (initialize, session/new, session/prompt, session/cancel) the way the agent does:
`AsyncAnthropic(max_retries=0)`, raw events of `messages.create(stream=True)` with one
`agent_message_chunk` per text delta, or one `messages.create` per model request without
streaming; every tool_use gets the same fixed tool_result. Like the agent, it answers
`initialize` first and imports the SDK in a background thread after that.

Settings come from the agent's own environment variables (ACP_AGENT_MODEL, ACP_AGENT_STREAMING,
ACP_AGENT_MAX_TURN_REQUESTS, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL). BENCH_REQUEST_EXTRAS names a
JSON file with `system`, `tools` and `max_tokens`, so its requests are as big as the agent's.
Output lines are queued and written once per event-loop iteration, the agent's own technique.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import uuid
from typing import Any

MODEL = os.environ.get("ACP_AGENT_MODEL", "claude-test-1")
STREAMING = os.environ.get("ACP_AGENT_STREAMING", "1").lower() in ("1", "true", "yes", "on")
MAX_REQUESTS = int(os.environ.get("ACP_AGENT_MAX_TURN_REQUESTS") or 50)
TOOL_RESULT = "ok"

EXTRAS: dict[str, Any] = {"max_tokens": 16000}
_extras_loaded = False


def _load_extras() -> None:
    """Read at the first prompt: the bench writes the file from the agent's first request."""
    global _extras_loaded
    _extras_loaded = True
    path = os.environ.get("BENCH_REQUEST_EXTRAS")
    if path and os.path.exists(path):
        with open(path) as f:
            EXTRAS.update(json.load(f))


_sdk_ready = threading.Event()
_sdk: Any = None
_client: Any = None


def _import_sdk() -> None:
    global _sdk
    import anthropic
    import anthropic.resources.messages
    import anthropic.types

    _sdk = anthropic
    _sdk_ready.set()


_out = bytearray()
_flush_pending = False


def _flush() -> None:
    """Write everything queued since the last loop iteration in one go (as the agent does)."""
    global _flush_pending
    _flush_pending = False
    view = memoryview(_out)
    while view:
        view = view[os.write(1, view) :]
    view.release()
    _out.clear()


def _write(message: dict[str, Any]) -> None:
    global _flush_pending
    _out.extend((json.dumps(message, separators=(",", ":")) + "\n").encode())
    if not _flush_pending:
        _flush_pending = True
        asyncio.get_running_loop().call_soon(_flush)


def _answer(rid: Any, result: Any) -> None:
    _write({"jsonrpc": "2.0", "id": rid, "result": result})


def _chunk(session_id: str, text: str, message_id: str) -> None:
    _write(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": session_id,
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": text},
                    "messageId": message_id,
                },
            },
        }
    )


async def _client_ready() -> Any:
    global _client
    if not _sdk_ready.is_set():
        await asyncio.get_running_loop().run_in_executor(None, _sdk_ready.wait)
    if _client is None:
        _client = _sdk.AsyncAnthropic(max_retries=0)
    return _client


async def _stream_once(client: Any, sid: str, kwargs: dict[str, Any]) -> tuple[list[Any], Any]:
    stream = await client.messages.create(stream=True, **kwargs)
    message_id = str(uuid.uuid4())
    blocks: dict[int, dict[str, Any]] = {}
    parts: dict[int, list[str]] = {}
    stop_reason = None
    try:
        async for event in stream:
            kind = event.type
            if kind == "content_block_delta":
                delta = event.delta
                if delta.type == "text_delta":
                    parts[event.index].append(delta.text)
                    _chunk(sid, delta.text, message_id)
                elif delta.type == "input_json_delta":
                    parts[event.index].append(delta.partial_json)
            elif kind == "content_block_start":
                block = event.content_block
                if block.type == "tool_use":
                    blocks[event.index] = {"type": "tool_use", "id": block.id, "name": block.name}
                else:
                    blocks[event.index] = {"type": "text"}
                parts[event.index] = []
            elif kind == "message_delta":
                stop_reason = event.delta.stop_reason
    finally:
        await stream.close()
    content = []
    for index, block in sorted(blocks.items()):
        joined = "".join(parts[index])
        if block["type"] == "tool_use":
            block["input"] = json.loads(joined) if joined else {}
        else:
            block["text"] = joined
        content.append(block)
    return content, stop_reason


async def _create_once(client: Any, sid: str, kwargs: dict[str, Any]) -> tuple[list[Any], Any]:
    message = await client.messages.create(**kwargs)
    message_id = str(uuid.uuid4())
    content = []
    for block in message.content:
        if block.type == "text":
            _chunk(sid, block.text, message_id)
            content.append({"type": "text", "text": block.text})
        elif block.type == "tool_use":
            content.append({"type": "tool_use", "id": block.id, "name": block.name, "input": block.input})
    return content, message.stop_reason


async def _turn(rid: Any, sid: str, history: list[Any], prompt: list[Any]) -> None:
    if not _extras_loaded:
        _load_extras()
    history.append(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": b.get("text", "")} for b in prompt if b.get("type") == "text"
            ],
        }
    )
    stop = "end_turn"
    try:
        client = await _client_ready()
        once = _stream_once if STREAMING else _create_once
        for _ in range(MAX_REQUESTS):
            content, model_stop = await once(client, sid, {"model": MODEL, "messages": history, **EXTRAS})
            history.append({"role": "assistant", "content": content})
            uses = [b for b in content if b["type"] == "tool_use"]
            if model_stop != "tool_use" or not uses:
                break
            history.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": b["id"], "content": TOOL_RESULT} for b in uses
                    ],
                }
            )
        else:
            stop = "max_turn_requests"
    except asyncio.CancelledError:
        stop = "cancelled"
    except Exception as exc:  # the floor still answers, so the bench sees what went wrong
        _write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": repr(exc)}})
        return
    _answer(rid, {"stopReason": stop})


async def _serve() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    sessions: dict[str, list[Any]] = {}
    running: dict[str, asyncio.Task[None]] = {}
    while line := await reader.readline():
        if not line.strip():
            continue
        message = json.loads(line)
        method, rid, params = message.get("method"), message.get("id"), message.get("params") or {}
        if method == "initialize":
            _answer(rid, {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []})
            if _sdk is None and not _sdk_ready.is_set():
                threading.Thread(target=_import_sdk, daemon=True).start()
        elif method == "session/new":
            sid = f"sess_{uuid.uuid4().hex}"
            sessions[sid] = []
            _answer(rid, {"sessionId": sid})
        elif method == "session/prompt":
            sid = params["sessionId"]
            task = asyncio.create_task(_turn(rid, sid, sessions[sid], params["prompt"]))
            running[sid] = task
            task.add_done_callback(lambda _, sid=sid: running.pop(sid, None))
        elif method == "session/cancel":
            task = running.get(params.get("sessionId"))
            if task is not None:
                task.cancel()
        elif rid is not None:
            _write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})
    for task in list(running.values()):
        task.cancel()
    await asyncio.gather(*running.values(), return_exceptions=True)
    _flush()


if __name__ == "__main__":
    asyncio.run(_serve())
