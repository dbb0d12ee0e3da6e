"""What the model can do. Knows nothing of ACP or of the turn loop.

Here, at the top: the tool seam (`base.py`: `Tool`, `ToolContext`, `ToolResult`, the editor's
Protocols), the registry that lists the tools for the API and checks the model's arguments
(`registry.py`), confinement to the session's roots (`paths.py`) outside the agent's own paths
(`hidden.py`), the small pieces every tool shares (`grant.py`, `shown.py`, `printable.py`,
`truncate.py`) and the small tools (`plan.py`, `ask_user.py`, `skill.py`). By concept below:

- `files/`    reading and editing files, the disk under them, and the paths that make tools run code;
- `search/`   finding files and text: list_files, search_text, the ignore rules, ripgrep;
- `shell/`    running commands: run_command, locally or in the editor's terminal, and their output;
- `sandbox/`  confining those commands (bubblewrap), with the git dirs it guards;
- `mcp/`      MCP servers: their tools, prompts and questions.

Imported by `turn/`, `session/` and `api.py`; imports only the leaf modules. Inside, arrows run
down the list above's reverse: `search/` reads through `files/`, `shell/` through `sandbox/`, and
nothing here imports `registry.py` but the layers above.
"""
