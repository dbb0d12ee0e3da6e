"""The session journal: one append-only file per session (`store.py`, its directory checked before
`initialize` by `state_dir.py`), `session/list`'s pages of them (`listing.py`), `session/load`'s
reading (`reload.py`) and replay to the editor (`replay.py`), a session's title (`titles.py`),
where each prompt starts once rewinds are applied (`timeline.py`), a fork's copy of another
session's conversation (`fork.py`), and checkpoints and rewind: what turns change, kept
(`checkpoints.py`, over `shadow_git.py` and `file_images.py`) and put back (`rewind.py`). What an
entry is, is `turn/journal/`.

May import `editor/` (the update builder), `turn/`, `tools/` and the leaves; imported by the
lifecycle core.
"""
