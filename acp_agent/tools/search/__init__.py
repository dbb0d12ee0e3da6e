"""Finding files and text: the list_files and search_text tools.

`listing.py` lists (by `rg --files` or a walk, with the same ignore rules, `ignore.py`);
`text.py` searches, on ripgrep (`rg.py`, running it with `ripgrep.py`) or in Python (`python.py`,
its patterns bounded by `regex_bounds.py`), both filling one `query.py:Found`.

May import the top of `tools/`, `files/` (the disk) and the leaves; imported by the registry.
"""
