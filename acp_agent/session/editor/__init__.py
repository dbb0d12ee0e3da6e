"""The editor-facing relay: what the editor is shown and asked.

Turn events → `session/update` (`relay.py`), every tool call, chunk, plan and notice built by one
builder (`updates.py`) that the replay and the permission question use too; the `/` menu
(`announce.py`); the permission question under the session's mode (`permissions.py`); the editor's
files and terminals (`client_io.py`) and forms (`elicitation.py`, every answer checked by
`form_answers.py`).

May import the `Requester` seam, `commands/` (the grants' type), `turn/`, `tools/` and the leaves;
imported by the rest of `session/`, never the reverse.
"""
