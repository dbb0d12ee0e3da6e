"""The journal's vocabulary: every kind of entry a session journal holds (`entries.py`), an entry's
line on disk (`lines.py`) and the checks of the API blocks and messages it carries
(`api_blocks.py`). The file itself is `session/journal/store.py`.

Imports only the tool seam and the leaves; imported by the rest of `turn/` and by `session/`.
"""
