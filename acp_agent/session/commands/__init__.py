"""A session's commands, answered by the session itself: what a built-in command answers
(`command_answers.py`), a command file's, skill's or MCP prompt's turn (`command_turn.py`), and
`/rewind` and `_session/rewind` on a live session (`rewinding.py`). What a session offers is read
by `claude_code/conventions/`.
"""
