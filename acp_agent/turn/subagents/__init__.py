"""Subagents: the `task` tool, one child loop with a fresh context inside the turn's meter
(`task.py`), and what the editor sees of it and how it asks permission, through the parent's tool
call or a child session (`progress.py`, with the `ChildSessions` seam that `session/` fills).
Custom agents (issue 33) land beside.

May import the loop's core, `context/`, `tools/` and the leaves; imported by `session/`.
"""
