"""Claude Code's own files, read as Claude Code reads them (issues 33, 42): the settings and the
managed policy (`settings/`), what they hold for one session and what of it waits for the
project's trust (`setup/`), the hooks they configure, run as sandboxed processes (`hooks/`), the
memory files (`memory/`), and the commands, skills, agents and output styles a session offers
(`conventions/`). ACP-free: what the editor sees of them is `session/`'s.

May import `permissions/`, `turn/`, `tools/`, `model/` and the leaves; imported by `session/`,
`app.py` and `cli.py` (the start-up settings), never the reverse. Inside, `settings/` is the
ground; `setup/` stands on it; `hooks/`, `memory/` and `conventions/` on both.
"""
