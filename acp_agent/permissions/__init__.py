"""May this run? The one place that decides, for every caller: a session's tool calls, its
subagents', a command's turn, a phase, a `/rewind`, and an embedder's turn.

The question a caller asks (`question.py`: `PermissionQuestion`, the hooks' `HookVerdict`, the
`PermissionAsker` seam that asks the user), the one rule engine and its order (`engine.py`), the
rules as Claude Code writes them (`rules.py`, paths in `path_rules.py`, Claude Code's tool names in
`tool_names.py`), the `Read(…)` deny rules as the file tools apply them (`path_denials.py`) and the
web tools as the rules leave them (`web_rules.py`).

Imports `tools/`, `model/` and the leaves; imported by `turn/`, `session/` and `api.py`. It knows
nothing of where the rules are written (`claude_code/` reads them, `engine.py:RuleSource`).
"""
