"""What a session offers from its files: the built-in slash commands' names (`builtins.py`), the
custom commands, skills, MCP prompts and custom agents it holds (`conventions.py`, read from disk
by `convention_files.py`, their `allowed-tools` by `allowed_tools.py`, an agent file by
`agents.py`), Claude Code's own prompt commands (`prompt_commands.py`), a command file's text
expanded (`expansion.py`) with its `!` lines and `@` files made tool calls (`shell_lines.py`), and
the output styles (`output_styles.py`). A command's turn is `session/commands/command_turn.py`.
"""
