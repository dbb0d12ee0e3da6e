"""The session journal: one append-only file per session (`store.py`, its directory checked before
`initialize` by `state_dir.py`), `session/list`'s pages of them (`listing.py`), `session/load`'s
reading (`reload.py`) and replay to the editor (`replay.py`), a session's title (`titles.py`), and
a fork's copy of another session's conversation (`fork.py`). What an entry is, is `turn/journal/`.
Rewind (issue 34) lands here too.

May import `editor/` (the update builder), `turn/`, `tools/` and the leaves; imported by the
lifecycle core.
"""
