"""The journal's vocabulary: every kind of entry a session journal holds (`entries.py`, with the
workspace history's checkpoints, changes and rewinds in `workspace_entries.py`), the API blocks and
messages they carry (`api_blocks.py`), what the editor is shown of a tool call (`shown_calls.py`),
how each of them is declared (`journaled.py`), and an entry's line on disk (`lines.py`). The file
itself is `journal/store.py`.

Imports only the tool seam and the leaves; imported by the rest of `turn/` and by `session/`.
"""
