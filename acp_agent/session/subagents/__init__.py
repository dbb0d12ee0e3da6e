"""The `task` tool's session side: which tools a session's subagents get and their system prompt,
the custom agents' included (`tool.py`), `/agents` (`listing.py`), and each subagent shown as a
child session to a client that advertises ACP's unstable `subagents` (`sessions.py`). The loop
side is `turn/subagents/`.

May import the lifecycle core's `state.py`, `editor/`, `turn/`, `tools/` and the leaves; imported
by the engine.
"""
