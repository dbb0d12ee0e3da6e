"""The command sandbox: a session's policy and the one wrapper every command and hook goes through
(`command_sandbox.py`), bubblewrap's argv, probe and clean launch (`bwrap.py`), what a command
names that its private `/tmp` would hide (`named.py`), and the git dirs a sandboxed command may
not write (`git_dirs.py`).

May import only `grant.py` and `hidden.py` at the top of `tools/`, and the leaves; imported by
`shell/`, the tool seam (a type only), `turn/` and `session/`.
"""
