"""The ACP face of the session layer: the front handler, which answers `initialize` itself
(`front.py`, the answer in `handshake.py`) and builds the rest of the layer after it (D4); the
method table and the session lifecycle (`handlers.py`); and a prompt's way to its answer
(`prompting.py`, its content read in `prompts.py`).
"""
