"""The one governed tool-calling loop. Knows nothing of ACP or JSON-RPC."""
