"""The memory: AGENTS.md and Claude Code's CLAUDE.md files in the system prompt
(`instructions.py`), read with their imports (`memory_files.py`, patterns in `memory_paths.py`),
and the memory that waits for a file to be read (`scoped_instructions.py`).
"""
