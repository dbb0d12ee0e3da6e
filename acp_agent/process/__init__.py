"""The agent's own process: the workspace kept off its import path (`import_path.py`), made
non-dumpable at start (`hardening.py`), and every process it starts tied to it, a kill -9
included (`lifetime.py`, with the stdlib-only `warden.py` that outlives it just long enough to
stop them).

A leaf package: imports nothing of the agent; any room may import it (`tools/` and `harness/`
start processes, `app.py` and `cli.py` set the process up).
"""
