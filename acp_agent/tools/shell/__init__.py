"""Running commands: the run_command tool, here (`local.py`) or in the editor's terminal
(`terminal.py`), its output as the model and the editor see it (`output.py`), the leftovers it
stops (`process_group.py`), and the one analysis of a command line every rule on commands reads
(`command_analysis.py`, over tree-sitter's syntax tree, `shell_syntax.py`, and the strict reader
of plain lines, `command_line.py`), with the `Bash(…)` patterns it is matched by
(`command_patterns.py`). The session's background commands (`tasks.py`):
how each runs (`task_runs.py`), its output on disk (`spool.py`), and the command_output and
stop_command tools (`task_tools.py`).

May import the top of `tools/`, `sandbox/` and the leaves; imported by the registry, `turn/`
(the verify strategy) and `session/`.
"""
