"""MCP servers as tools: a session's connections (`connections.py`), what a server is
(`servers.py`), its tools as the model's (`tool.py`), its prompts as slash commands (`prompts.py`,
followed by `prompt_watch.py`), its questions relayed to the editor (`elicit.py`), and the slow
`mcp` SDK, imported only when a session has servers (`sdk.py`, D4).

May import the top of `tools/` and the leaves; imported by `session/`.
"""
