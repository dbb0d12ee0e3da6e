"""What makes the process start fast without changing what it does: the collector paused through
the start-up imports (`collector.py`), the methods `dataclasses` writes for each class kept
compiled beside the bytecode (`dataclass_code.py`), and such cache files written whole or not at
all (`atomic_file.py`).

A leaf package: imports nothing else of the agent; `__main__.py` sets the first two up before the
first import, and `cli.py`, `app.py` and the front handler (`session/acp/front.py`) say when
start-up is over.
"""
