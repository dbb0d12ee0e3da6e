"""JSON-RPC 2.0 over stdio: framing, envelopes, errors and the dispatching endpoint.

Knows nothing of ACP or sessions; `session/` plugs in through `endpoint.Handler`.
"""

from __future__ import annotations

from acp_agent.rpc.endpoint import CANCEL_REQUEST, Endpoint, Handler
from acp_agent.rpc.errors import ConnectionClosed, RpcError
from acp_agent.rpc.framing import LineReader, LineTooLong, LineWriter
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

__all__ = [
    "CANCEL_REQUEST",
    "ConnectionClosed",
    "Endpoint",
    "Handler",
    "LineReader",
    "LineTooLong",
    "LineWriter",
    "Notification",
    "Request",
    "Response",
    "RpcError",
    "classify",
    "encode_error",
    "encode_notification",
    "encode_request",
    "encode_response",
]
