"""A journaled session opened again: `session/load`'s reading (`reload.py`) and its replay to the
editor (`replay.py`), and a fork's copy of another session's conversation (`fork.py`).

May import `editor/` (the update builder), `journal/`, `turn/` and the leaves; imported by the
lifecycle core.
"""
