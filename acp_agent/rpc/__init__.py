"""JSON-RPC 2.0 over stdio: framing, envelopes, the dispatching endpoint and our outgoing calls.

Knows nothing of ACP or sessions; `session/` plugs in through `endpoint.Handler`, and calls the
client through `Outgoing`. The error type, `RpcError`, is the leaf `acp_agent.errors`'s.
"""
