"""The one governed tool-calling loop. Knows nothing of ACP or JSON-RPC.

Here, at the top, the loop's core: one turn (`driver.py`), the request → relay → tools loop
(`runner.py`, holding what the session's requests spent, `session_usage.py`), a reply's tool calls
(`tool_batch.py`), the meter and its limits (`meter.py`, with `repeats.py`), the turn record
(`record.py`), the events the loop emits (`events.py`), its stop reasons (`stop.py`), what its
requests carry (`settings.py`), the loops a session may choose (`loops.py`), the hooks seam
(`hooks.py`), the messages the user sends the running
turn (`steering.py`), the server tools' calls as the editor sees them (`server_calls.py`), and a
turn run from Python (`inprocess.py`). By concept below:

- `journal/`     the journal's vocabulary: every entry kind, and an entry's line on disk;
- `context/`     what a request carries: the history, its compaction, the cleared old results, images;
- `subagents/`   the `task` tool: a child loop inside the turn's meter, and what the editor sees of it;
- `strategies/`  the strategies that drive the runner (tools, verify, phased).

Imported by `session/`, `api.py`, `cli.py` and `schemas.py`; imports `permissions/` (the seam
that asks permission, and the engine that decides), `model/`, `tools/` and the leaves. Inside,
`journal/` is the ground, `context/` stands on it and the loop's core on both; `subagents/` and
`strategies/` stand on the core.
"""
