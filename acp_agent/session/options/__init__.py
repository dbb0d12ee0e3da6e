"""A session's config options, offered, changed, journaled and restored in one place
(`config_options.py`: mode, model, effort, loop, web), and the models the process knows with what
each accepts (`catalog.py`).

May import the lifecycle core's `state.py`, `editor/`, `model/`, `turn/` and the leaves; imported
by the lifecycle core.
"""
