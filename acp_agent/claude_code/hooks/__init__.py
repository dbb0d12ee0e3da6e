"""The hooks: read from the settings (`hook_config.py`: matchers, `if`, trust), each run as a
sandboxed process (`hook_process.py`) with Claude Code's input and answers (`hook_payloads.py`),
and run for a session's turns, shown and journaled (`hooks.py`: `SessionHooks`, the loop's
`TurnHooks`).
"""
