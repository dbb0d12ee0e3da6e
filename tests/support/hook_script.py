"""A Claude Code hook for the tests: `python hook_script.py <behaviour> <log file>`.

It reads the hook's JSON from stdin, appends one line to the log file (the event, the tool, its
file or command, `CLAUDE_PROJECT_DIR`), then behaves as asked: block by exit 2, answer with JSON,
or misbehave (garbage, a hang, 100 MB of output, exit 1).
"""

from __future__ import annotations

import json
import os
import sys
import time


def _log(path: str, data: dict) -> None:
    tool_input = data.get("tool_input") or {}
    what = tool_input.get("file_path") or tool_input.get("command") or data.get("prompt") or ""
    line = " | ".join(
        [
            str(data.get("hook_event_name")),
            str(data.get("tool_name", "")),
            str(what),
            str(data.get("stop_hook_active", "")),
            os.environ.get("CLAUDE_PROJECT_DIR", ""),
            str(data.get("permission_mode", "")),
            "key" if "ANTHROPIC_API_KEY" in os.environ else "",
        ]
    )
    with open(path, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def _say(text: str) -> None:
    """The hook's stdout (its answer): this script's own protocol, not the agent's."""
    sys.stdout.write(text + "\n")


def _answer(event: str, fields: dict) -> None:
    _say(json.dumps({"hookSpecificOutput": {"hookEventName": event, **fields}}))


def main() -> None:
    behaviour, log = sys.argv[1], sys.argv[2]
    data = json.load(sys.stdin)
    _log(log, data)
    command = str((data.get("tool_input") or {}).get("command", ""))
    if behaviour == "block-rm" and command.startswith("rm "):
        sys.stderr.write("rm is not allowed here: use the trash script\n")
        sys.exit(2)
    file_path = str((data.get("tool_input") or {}).get("file_path", ""))
    if behaviour == "deny-notes" and file_path.endswith("notes.txt"):  # the decision table's hook
        _answer(
            data["hook_event_name"],
            {"permissionDecision": "deny", "permissionDecisionReason": "the policy says no"},
        )
    elif behaviour == "decide":
        if "allow-me" in command:
            _answer(data["hook_event_name"], {"permissionDecision": "allow"})
        elif "ask-me" in command:
            _answer(data["hook_event_name"], {"permissionDecision": "ask"})
        elif "deny-me" in command:
            _answer(
                data["hook_event_name"],
                {"permissionDecision": "deny", "permissionDecisionReason": "the policy says no"},
            )
        elif "rewrite-me" in command:
            _answer(
                data["hook_event_name"],
                {"permissionDecision": "allow", "updatedInput": {"command": "echo rewritten-by-hook"}},
            )
    elif behaviour == "claude-shapes":  # updatedInput as a hook written for Claude Code gives it
        tool_input = data.get("tool_input") or {}
        if "file_path" in tool_input:
            target = os.path.join(os.path.dirname(tool_input["file_path"]), "rewritten.txt")
            updated = {"file_path": target, "content": "written where the hook said\n"}
        else:
            updated = {
                "command": "echo rewritten-in-claude-shape",
                "timeout": 120000,
                "description": "Say it",
                "run_in_background": False,
            }
        _answer(data["hook_event_name"], {"permissionDecision": "allow", "updatedInput": updated})
    elif behaviour == "context":
        _answer(
            data["hook_event_name"],
            {"additionalContext": f"formatted {data.get('tool_input', {}).get('file_path')}"},
        )
    elif behaviour == "stop-block":
        sys.stderr.write("the tests are not run yet: keep going\n")
        sys.exit(2)
    elif behaviour == "prompt-block" and "forbidden" in str(data.get("prompt")):
        sys.stderr.write("this prompt names a forbidden word\n")
        sys.exit(2)
    elif behaviour == "prompt-context":
        _say("PROMPT CONTEXT FROM A HOOK")
    elif behaviour == "halt":
        _say(json.dumps({"continue": False, "stopReason": "the hook ended the turn here"}))
    elif behaviour == "garbage":
        _say("{this is not json")
    elif behaviour == "hang":
        time.sleep(120)  # deliberate: a hook that hangs past its timeout
    elif behaviour == "flood":
        block = b"x" * (1 << 20)
        for _ in range(100):
            sys.stdout.buffer.write(block)
        sys.stdout.flush()
    elif behaviour == "exit1":
        sys.stderr.write("boom: the hook failed\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
