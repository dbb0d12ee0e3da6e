"""What a session offers: the built-in slash commands (`builtins.py`), the custom commands, skills
and MCP prompts it holds (`conventions.py`, read from disk by `convention_files.py`, their
frontmatter by `frontmatter.py`, their `allowed-tools` by `allowed_tools.py`), a command file's text
expanded (`expansion.py`) with its `!` lines run (`shell_lines.py`), and the AGENTS.md / CLAUDE.md
instructions (`instructions.py`). A command's turn is `session/command_turn.py`, beside the engine
that runs it. The user's Claude Code setup (issue 33: settings, memory, custom agents, output
styles) lands beside, in its own package.

May import `client_options.py`, `tools/`, `turn/` and the leaves; imported by `state.py`,
`editor/` and the lifecycle core.
"""
