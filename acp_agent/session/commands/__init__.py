"""What a session offers: the built-in slash commands (`builtins.py`), the custom commands, skills,
MCP prompts and custom agents it holds (`conventions.py`, read from disk by `convention_files.py`,
their frontmatter by `frontmatter.py`, their `allowed-tools` by `allowed_tools.py`, an agent file
by `agents.py`), a command file's text expanded (`expansion.py`) with its `!` lines run
(`shell_lines.py`), and the memory: AGENTS.md and Claude Code's CLAUDE.md files in the system
prompt (`instructions.py`), read with their imports (`memory_files.py`, patterns in
`memory_paths.py`), and the memory that waits for a file to be read (`scoped_instructions.py`). A
command's turn is `session/command_turn.py`, beside the engine that runs it. The rest of the
user's Claude Code setup (issue 33: settings, output styles) lands beside, in its own package.

May import `client_options.py`, `tools/`, `turn/` and the leaves; imported by `state.py`,
`editor/` and the lifecycle core.
"""
