"""ACP semantics: sessions and their turns as the editor sees them.

Here, at the top, the lifecycle core: the front handler that answers `initialize` before the rest
is imported (`front.py`, `handshake.py`), the method table (`handlers.py`, params → -32602 in
`params.py`), a prompt and a steering message run and answered (`prompting.py`), the sessions and
their queue of turns (`manager.py`, `state.py`, `queue.py`), what a session is built from
(`builder.py`), the per-session turn machinery (`engine.py`, with a slash command's turn in
`command_turn.py` and a built-in command's answer in `command_answers.py`), the project's trust
settled before the first request (`trust_settling.py`), the session's MCP servers planned
(`mcp_servers.py`) and started (`mcp_startup.py`), what it spent and what fills its context
(`usage.py`), the Requester seam to the client (`requester.py`), `/rewind` on a live session
(`rewinding.py`), a prompt's content (`prompts.py`), the system prompt (`system_prompt.py`), the
roots (`roots.py`), the sandbox policy (`sandboxing.py`) and the client's options from acpx's
`_meta` (`client_options.py`). By concept below:

- `editor/`     the editor-facing relay: updates, the permission question, fs, terminals, forms;
- `loading/`    a journaled session opened again: session/load's reading and replay, a fork;
- `options/`    a session's config options (mode, model, effort, loop) and the models' catalogue;
- `auth/`       the auth methods offered, authenticate and logout, the stored key;
- `subagents/`  the `task` tool's session side: its tools and prompt, and child sessions.

Claude Code's own files are `claude_code/`'s, the journal file and checkpoints `journal/`'s: both
ACP-free, below this room.

Imported by `app.py` (and `cli.py` for `acp-agent login`); imports `protocol/`, `claude_code/`,
`journal/`, `turn/`, `permissions/`, `model/`, `tools/` and the leaves. Inside, `state.py` (what a
session is) stands on `editor/`; `loading/`, `options/`, `subagents/` and the rest of the core
stand on it.
"""
