"""What makes the process start fast without changing what it does: the collector paused through
the start-up imports (`collector.py`), and the methods `dataclasses` writes for each class kept
compiled beside the bytecode (`dataclass_code.py`).

A leaf package: imports nothing of the agent; `__main__.py` sets both up before the first import,
and `cli.py`, `app.py` and the front handler (`session/acp/front.py`) say when start-up is over.
"""
