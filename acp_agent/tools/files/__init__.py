"""Files: the read_file, write_file and edit_file tools, and what they stand on.

The disk work in a worker thread a cancel abandons (`disk.py`), opening without following a
planted symlink (`confined.py`), the local `FileSystem` (`localfs.py`; the editor's is the
session's), images (`images.py`, `image_headers.py`), the files a repository provides to the agent
read under the same rules (`provided.py`), and the paths whose contents make tools run code: the
sensitive-path guard (`sensitive.py`, with `gitdir.py` and `grant_dirs.py`).

May import the top of `tools/` (the seam, `paths.py`, `hidden.py`) and the leaves; imported by
`search/`, the registry, `skill.py`, `turn/` and `session/`.
"""
