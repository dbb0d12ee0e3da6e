"""What builds a session and runs its turns: a session built from the configuration, its
`_meta` and its Claude Code setup (`builder.py`); its runtime, built once its project's trust is
settled (`trust_settling.py`), and its turns started (`engine.py`); its roots (`roots.py`), the
sandbox policy (`sandboxing.py`), and its MCP servers started (`mcp_startup.py`).
"""
