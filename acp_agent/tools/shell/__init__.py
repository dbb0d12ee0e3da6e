"""Running commands: the run_command tool, here (`local.py`) or in the editor's terminal
(`terminal.py`), its output as the model and the editor see it (`output.py`), the leftovers it
stops (`process_group.py`), and a command line read into the argv of its simple commands for the
grants that name commands (`command_line.py`). The session's background commands (`tasks.py`):
how each runs (`task_runs.py`), its output on disk (`spool.py`), and the command_output and
stop_command tools (`task_tools.py`).

May import the top of `tools/`, `sandbox/` and the leaves; imported by the registry, `turn/`
(the verify strategy) and `session/`.
"""
