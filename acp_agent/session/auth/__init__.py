"""The agent's key: the auth methods offered in `initialize` (`methods.py`), `authenticate` and
`logout` (`login.py`), and the key kept in the user's config dir, with `acp-agent login`
(`keys.py`).

May import `editor/` (the key form's answers), the `Requester` seam, `params.py`, `model/` and the
leaves; imported by the lifecycle core, `app.py` and `cli.py`.
"""
