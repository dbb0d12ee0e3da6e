"""Rules mean what they say over real pipes, with the sandbox on (issue 41 items 5 and 8): a deny
on `rm` holds in bypassPermissions whatever the spelling, an ask rule on `git push` is asked past
git's global options, and a repository's pathological deny glob never freezes the agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.conventions import claude_repo
from tests.wire.conftest import turn_record
from tests.wire.test_claude_settings import Editor, calls, results, write_settings

RM_DENIED = "denied by .claude/settings.json: Bash(rm:*)"
SPELLINGS = [
    "/bin/rm doomed.txt",
    "bash -c 'rm doomed.txt'",
    "sh -c 'cd . && rm doomed.txt'",
    "env rm doomed.txt",
    "exec rm doomed.txt",
    "eval rm doomed.txt",
    "command -p rm doomed.txt",
    "find . -name doomed.txt -delete -o -name doomed.txt -exec rm {} +",
    "sudo -n rm doomed.txt || timeout 5 nice rm doomed.txt",
]


async def test_a_deny_holds_in_bypass_mode_whatever_the_spelling_and_git_options_do_not_skip_an_ask(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    (workspace / "doomed.txt").write_text("still here\n")
    write_settings(
        workspace / ".claude" / "settings.json",
        {"permissions": {"deny": ["Bash(rm:*)"], "ask": ["Bash(git push:*)"]}},
    )
    fake_api.script(
        calls(
            *(("run_command", {"command": line}) for line in SPELLINGS),
            ("run_command", {"command": "git -C . push origin main"}),
        ),
        replies.text("done"),
    )
    editor = Editor()  # refuses every question
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "bypassPermissions"})
        response = await agent.prompt(session, "clean up and push")
    assert (workspace / "doomed.txt").read_text() == "still here\n"
    found = results(fake_api.requests[-1])
    assert [found[f"toolu_c{i}"] for i in range(len(SPELLINGS))] == [RM_DENIED] * len(SPELLINGS)
    [asked] = editor.asked  # bypassPermissions asks nothing else
    assert asked["toolCall"]["rawInput"]["command"] == "git -C . push origin main"
    assert turn_record(response)["toolCallsDenied"] == len(SPELLINGS) + 1


async def test_a_backtracking_deny_glob_from_the_repository_never_freezes_the_agent(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    """The glob compiled to an expression that backtracked: `initialize` got no answer for 20 s."""
    workspace = claude_repo(tmp_path)
    deep = "/".join(["d"] * 40)
    (workspace / deep).mkdir(parents=True)
    (workspace / deep / "notes.txt").write_text("deep notes\n")
    write_settings(
        workspace / ".claude" / "settings.json",
        {"permissions": {"deny": ["Read(./" + "/".join(["**"] * 24) + "/zz)"]}},
    )
    fake_api.script(
        calls(("read_file", {"path": f"{deep}/notes.txt"}), ("list_files", {"path": deep})),
        replies.text("read"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=Editor()) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        with anyio.fail_after(20):
            await agent.prompt(session, "read the deep notes")
            answered = await agent.request("session/new", {"cwd": str(workspace), "mcpServers": []})
    assert "sessionId" in answered["result"]
    found = results(fake_api.requests[-1])
    assert "deep notes" in found["toolu_c0"] and "notes.txt" in found["toolu_c1"]
    assert json.dumps(found).count("denied by") == 0
