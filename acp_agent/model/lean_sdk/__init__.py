"""The `anthropic` SDK imported for what the agent uses (`model/sdk.py` starts it): its packages'
re-exports resolved on first use (`import_hook.py`), what a module imports only for its functions
imported when a function first reads it (`late_names.py`), and what both work out from the SDK's
sources kept beside its bytecode (`side_cache.py`).
"""
