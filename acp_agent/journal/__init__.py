"""The session journal, ACP-free: one append-only file per session (`store.py`, its directory
checked before `initialize` by `state_dir.py`), `session/list`'s pages of them (`listing.py`), a
session's title (`titles.py`), where each prompt starts once rewinds are applied
(`timeline.py`), and checkpoints and rewind: what turns change, kept (`checkpoints.py`, over
`shadow_git.py` and `file_images.py`) and put back (`rewind.py`). What an entry is, is
`turn/journal/`; a journal read back to the editor is `session/loading/`.

May import `turn/`, `tools/` and the leaves; imported by `session/` and `app.py`.
"""
