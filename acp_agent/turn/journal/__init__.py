"""The journal's vocabulary: every kind of entry a session journal holds, with the API blocks and
messages they carry (`entries.py`), and an entry's line on disk (`lines.py`). The file itself is
`session/journal/store.py`.

Imports only the tool seam and the leaves; imported by the rest of `turn/` and by `session/`.
"""
