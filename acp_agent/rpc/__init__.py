"""JSON-RPC 2.0 over stdio: framing, envelopes, the dispatching endpoint and our outgoing calls.

Knows nothing of ACP or sessions; `session/` plugs in through `endpoint.Handler`, and calls the
client through `Outgoing`. The error type, `RpcError`, is the leaf `acp_agent.errors`'s.
"""

from __future__ import annotations

from acp_agent.rpc.endpoint import Endpoint, Handler
from acp_agent.rpc.framing import LineReader, LineWriter
from acp_agent.rpc.messages import (
    Notification,
    Request,
    Response,
    classify,
    encode_error,
    encode_notification,
    encode_request,
    encode_response,
)
from acp_agent.rpc.outgoing import CANCEL_REQUEST, Outgoing

__all__ = [
    "CANCEL_REQUEST",
    "Endpoint",
    "Handler",
    "LineReader",
    "LineWriter",
    "Notification",
    "Outgoing",
    "Request",
    "Response",
    "classify",
    "encode_error",
    "encode_notification",
    "encode_request",
    "encode_response",
]
