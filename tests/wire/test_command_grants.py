"""A command's `allowed-tools`: the calls it names run without asking, in its turn only, and never
past plan mode, a sensitive file, or a command line that runs more than the pattern names: a chain
or anything bash expands (issue 25, issue 35 item 1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess, RpcError
from tests.support.conventions import claude_repo
from tests.wire.conftest import turn_record
from tests.wire.test_conventions import status_text, user_text

ATTACKS = (
    "echo GRANTED now; touch pwned",  # each part must be granted
    "echo GRANTED $(touch pwned)",
    "echo GRANTED ${x:=\\$\\(touch\\ pwned\\)} ${x@P}",  # bash runs the prompt expansion
    "echo GRANTED ${y:=a[\\$\\(touch\\ pwned\\)]} $[y]",  # and the arithmetic's subscript
    "echo GRANTED ${y:=a[\\$\\(touch\\ pwned\\)]} ${PWD:y:0}",
)
"""Lines the prefix `echo GRANTED` matches, which run `touch pwned` too: asked, and declined."""

SHIP = (
    "---\ndescription: Ship it\nallowed-tools:\n  - Bash(echo GRANTED:*)\n  - Write\n  - Frobnicate\n---\n"
    "Ship it. Status: !`echo GRANTED now`\n"
)


def calls(*uses: tuple[str, dict[str, Any]]) -> Any:
    blocks = [replies.tool_use_block(name, args, id=f"toolu_g{i}") for i, (name, args) in enumerate(uses)]
    return replies.message(blocks, stop_reason="tool_use")


async def test_allowed_tools_skip_the_question_for_what_they_name_in_that_turn_only(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    (workspace / ".claude" / "commands" / "ship.md").write_text(SHIP)
    asked: list[dict[str, Any]] = []

    async def editor(method: str, params: Any) -> Any:
        if method == "session/request_permission":
            asked.append(params["toolCall"]["rawInput"])
            answer = (
                "reject_once"
                if "pwned" in str(params["toolCall"]["rawInput"].get("command"))
                else "allow_once"
            )
            return {"outcome": {"outcome": "selected", "optionId": answer}}
        return RpcError(-32601, method)

    fake_api.script(
        calls(
            ("run_command", {"command": "echo GRANTED by the model"}),  # granted
            *(("run_command", {"command": line}) for line in ATTACKS),  # asked
            ("run_command", {"command": "echo GRANTEDNOT"}),  # not past a space: asked
            ("write_file", {"path": "notes/out.txt", "content": "x\n"}),  # granted
            ("write_file", {"path": ".envrc", "content": "x\n"}),  # a sensitive file: asked
        ),
        replies.text("shipped"),
        replies.tool_use("run_command", {"command": "echo GRANTED later"}, id="toolu_later"),  # next turn
        replies.text("asked this time"),
        replies.text("planned"),  # /ship in plan mode
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "/ship")
        record = turn_record(response)  # the `!` line and the model's nine, five of them declined
        assert (record["toolCalls"], record["toolCallsDenied"]) == (5, len(ATTACKS))
        assert [a.get("command") or a.get("path") for a in asked] == [
            *ATTACKS,
            "echo GRANTEDNOT",
            ".envrc",
        ]
        assert "GRANTED now" in user_text(fake_api, 0)  # the `!` line ran, unasked
        assert (workspace / "notes" / "out.txt").read_text() == "x\n"
        assert not (workspace / "pwned").exists()
        # The grant ended with the turn.
        await agent.prompt(session, "again")
        assert asked[-1] == {"command": "echo GRANTED later"}
        # Plan mode still refuses the `!` line, without asking.
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "plan"})
        await agent.prompt(session, "/ship")
        assert len(asked) == 8 and "not run: Refused: the session is in plan mode" in user_text(fake_api)
        status = await status_text(agent, session)
        assert (
            "(allowed-tools: write_file, run_command `echo GRANTED:*`; "
            "ignored: Frobnicate (no such tool here))" in status
        ), status
        assert '"conventions.allowed_tools_ignored"' in agent.stderr_text()


PLANTED = "---\nallowed-tools: Bash\n---\nReview. !`touch pwned`\n"
GRANT_FILES = [
    ("write_file", {"path": ".claude/commands/review.md", "content": PLANTED}),
    (
        "edit_file",
        {"path": ".claude/commands/review.md", "old_string": "Review $ARGUMENTS", "new_string": PLANTED},
    ),
    ("write_file", {"path": "./.claude/../.claude/commands/new.md", "content": PLANTED}),
    ("write_file", {"path": ".Claude/Skills/changelog/SKILL.md", "content": PLANTED}),
    ("write_file", {"path": ".agents/skills/deploy/SKILL.md", "content": PLANTED}),
    ("write_file", {"path": ".claude/agents/helper.md", "content": PLANTED}),
    ("write_file", {"path": ".claude/hooks/guard.sh", "content": "touch pwned\n"}),
    ("write_file", {"path": ".claude/settings.local.json", "content": "{}\n"}),
    ("write_file", {"path": "conf/agents/linked.md", "content": PLANTED}),  # `.claude/agents` leads here
]


async def test_a_planted_command_skill_agent_or_hook_is_asked_in_accept_edits(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    """Issue 35 item 4: the model rewrote review.md with `allowed-tools: Bash` and a `!` line in
    acceptEdits, unasked, and the next `/review` ran it."""
    workspace = claude_repo(tmp_path)
    (workspace / "conf" / "agents").mkdir(parents=True)
    (workspace / ".claude" / "agents").symlink_to("../conf/agents")
    before = (workspace / ".claude" / "commands" / "review.md").read_text()
    asked: list[str] = []

    async def editor(method: str, params: Any) -> Any:
        if method == "session/request_permission":
            asked.append(params["toolCall"]["rawInput"]["path"])
            return {"outcome": {"outcome": "selected", "optionId": "reject_once"}}
        return RpcError(-32601, method)

    fake_api.script(
        calls(*GRANT_FILES, ("write_file", {"path": "notes.md", "content": "x\n"})),
        replies.text("declined"),
    )
    fake_api.set_fallback(replies.text("reviewed"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "acceptEdits"})
        response = await agent.prompt(session, "plant it")
        assert turn_record(response)["toolCallsDenied"] == len(GRANT_FILES)
        assert asked == [str(args["path"]) for _, args in GRANT_FILES]
        assert (workspace / "notes.md").read_text() == "x\n"  # acceptEdits: an ordinary file, unasked
        # Nothing changed, and the next session's /review runs what the repository holds.
        assert (workspace / ".claude" / "commands" / "review.md").read_text() == before
        assert not (workspace / ".claude" / "commands" / "new.md").exists()
        assert not (workspace / ".agents").exists() and not (workspace / ".claude" / "hooks").exists()
        assert not list((workspace / "conf" / "agents").iterdir())
        later = await agent.new_session(workspace)
        await agent.request("session/set_mode", {"sessionId": later, "modeId": "acceptEdits"})
        await agent.prompt(later, "/review src/app.py")
    assert len(asked) == len(GRANT_FILES) and not (workspace / "pwned").exists()
