"""Subagents: the `task` tool, one child loop with a fresh context inside the turn's meter
(`task.py`), and what the editor sees of it and how it asks permission, through the parent's tool
call or a child session (`progress.py`, with the `ChildSessions` seam that `session/` fills), and
the subagents it offers by name, custom agents, with how its schema lists them (`types.py`).

May import the loop's core, `context/`, `tools/` and the leaves; imported by `session/`.
"""
