"""What a request carries: the conversation kept valid (`history.py`), summarised when it grows
too long (`compaction.py`), the old tool results a long session's requests leave out (`clearing.py`
decides, `cleared.py` makes the view), the images a request may carry (`media_budget.py`), and
the instructions scoped to a file read that join the conversation after it (`attachments.py`).

May import `journal/`, the meter, events and settings of the loop's core, `model/`, `tools/` and
the leaves; imported by the loop's core, `subagents/`, `strategies/` and `session/`.
"""
