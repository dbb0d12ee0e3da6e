"""What a session's settings hold for it (`setup.py`: `ClaudeSetup`, the rule engine's
`RuleSource`), and the project's trust: what a repository widens waits for the user's answer,
remembered by content (`trust.py`; the items a project file widens, `widenings.py`), the plugins
`enabledPlugins` enables (`plugins.py`), Claude Code's MCP server files (`mcp_files.py`), and
what a write to the agent's own files would enable, for its question (`write_guard.py`).
"""
