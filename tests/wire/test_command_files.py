"""What a command file may do beyond text: `!` commands under the permission rules, `@` files under
the read confinement, its own model; and what the reader refuses (issue 25, issue 29 item 3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess, RpcError
from tests.support.conventions import claude_repo
from tests.support.sandbox import require_bwrap
from tests.wire.conftest import chunks, turn_record
from tests.wire.test_conventions import announced, status_text, tool_result_text, user_text

REPORT = "Report on the repository.\nGreeting: !`echo SHELL-OUTPUT-$((6*7))`\n"


async def test_a_shell_line_asks_permission_runs_as_a_tool_call_and_plan_mode_refuses_it(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    (workspace / ".claude" / "commands" / "report.md").write_text(REPORT)
    asked: list[dict[str, Any]] = []
    answer = {"optionId": "allow_once"}

    async def editor(method: str, params: Any) -> Any:
        if method == "session/request_permission":
            asked.append(params["toolCall"])
            return {"outcome": {"outcome": "selected", **answer}}
        return RpcError(-32601, method)

    fake_api.set_fallback(replies.text("ok"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "/report")
        assert turn_record(response)["modelRequests"] == 1 and turn_record(response)["toolCalls"] == 1
        assert [a["rawInput"]["command"] for a in asked] == ["echo SHELL-OUTPUT-$((6*7))"]
        sent = user_text(fake_api)
        assert sent.startswith("Report on the repository.\nGreeting: \n```\n$ echo SHELL-OUTPUT-$((6*7))\n")
        assert "SHELL-OUTPUT-42\n```" in sent
        shown = [u for u in agent.updates(session) if u["update"].get("toolCallId") == asked[0]["toolCallId"]]
        assert shown[0]["update"]["sessionUpdate"] == "tool_call" and shown[0]["update"]["kind"] == "execute"
        assert shown[-1]["update"]["status"] == "completed"
        # Declined: the prompt says so, and the model is still asked.
        answer["optionId"] = "reject_once"
        await agent.prompt(session, "/report")
        assert len(asked) == 2 and "SHELL-OUTPUT-42" not in user_text(fake_api)
        assert "[`echo SHELL-OUTPUT-$((6*7))` failed or was not run: The user declined" in user_text(fake_api)
        # Plan mode refuses it without asking.
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "plan"})
        await agent.prompt(session, "/report")
        assert len(asked) == 2
        assert "not run: Refused: the session is in plan mode" in user_text(fake_api)
        # Bypass runs it without asking.
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "bypassPermissions"})
        await agent.prompt(session, "/report")
        assert len(asked) == 2 and "SHELL-OUTPUT-42" in user_text(fake_api)


PASTE = (
    "---\nallowed-tools: Bash\n---\n"
    "Review `$ARGUMENTS`.\nFirst: $1\nIn a fence:\n```\n$ARGUMENTS[1]\n```\n"
    "Own: !`echo OWN-LINE`\nTyped: !`echo $2`\n"
)
TYPED = '"!`touch pwned1`" "```\n!`touch pwned2`\n```" z` !`touch pwned3` `'
"""Pasted text that would be `!` lines once substituted: in a code span it closes, as `$1`, in a
fence it closes, as a `!` line's argument."""


async def test_typed_arguments_are_data_and_never_become_a_shell_line(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    (workspace / ".claude" / "commands" / "paste.md").write_text(PASTE)
    asked: list[Any] = []

    async def editor(method: str, params: Any) -> Any:
        asked.append(params)
        return RpcError(-32601, method)

    fake_api.set_fallback(replies.text("ok"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, f"/paste {TYPED}")
    assert turn_record(response)["toolCalls"] == 1 and asked == []  # the file's own line, granted
    assert not [p.name for p in workspace.iterdir() if p.name.startswith("pwned")]
    sent = user_text(fake_api)
    fenced = "In a fence:\n```\n```\n!`touch pwned2`"
    assert sent.startswith(f"Review `{TYPED}`.\nFirst: !`touch pwned1`\n{fenced}")
    assert "$ echo OWN-LINE\n" in sent and "\nOWN-LINE\n```" in sent
    assert "[`echo $2` was not run: a `!` line takes no arguments" in sent


async def test_a_shell_line_runs_in_the_sandbox_run_command_runs_in(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    require_bwrap()
    workspace = claude_repo(tmp_path)
    state = agent_env["ACP_AGENT_STATE_DIR"]
    (workspace / ".claude" / "commands" / "where.md").write_text(
        f"Where: !`echo pid=$$; ls {state} >/dev/null 2>&1 && echo state-seen || echo state-hidden`\n"
    )
    fake_api.set_fallback(replies.text("ok"))
    env = {**agent_env, "ACP_AGENT_SANDBOX": "auto"}
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "bypassPermissions"})
        await agent.prompt(session, "/where")
    sent = user_text(fake_api)
    assert "\npid=2\n" in sent and "state-hidden" in sent  # its own PID namespace; the journals hidden


async def test_a_command_file_linked_outside_the_repository_is_refused_and_named(
    agent: AgentProcess, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    secret = tmp_path / "home" / "secret.md"
    secret.write_text("SECRET COMMAND BODY\n")
    leak = workspace / ".claude" / "commands" / "leak.md"
    leak.symlink_to(secret)
    skill_link = workspace / ".claude" / "skills" / "outside"
    skill_link.mkdir()
    (skill_link / "SKILL.md").symlink_to(secret)
    fake_api.set_fallback(replies.text("ok"))
    session = await agent.new_session(workspace)
    assert "leak" not in await announced(agent, session)
    status = await status_text(agent, session)
    assert f"{leak} (refused: it resolves to {secret.resolve()}, outside {workspace.resolve()})" in status
    assert f"{skill_link / 'SKILL.md'} (refused: it resolves to" in status
    await agent.prompt(session, "/leak now")
    assert user_text(fake_api) == "/leak now"  # not a command: sent as typed
    assert "SECRET" not in str(fake_api.requests[0].body)


async def test_at_references_outside_the_workspace_are_refused_with_a_note(
    agent: AgentProcess, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    (tmp_path / "outside.txt").write_text("OUTSIDE TEXT\n")
    (workspace / ".claude" / "commands" / "peek.md").write_text(
        "Compare @src/app.py with @../outside.txt, ask @someone.\n"
    )
    fake_api.set_fallback(replies.text("ok"))
    session = await agent.new_session(workspace)
    await agent.prompt(session, "/peek")
    sent = user_text(fake_api)
    assert '<file path="src/app.py">' in sent and "hello, {name}" in sent
    assert "[@../outside.txt was not read:" in sent and "OUTSIDE TEXT" not in sent
    assert "@someone" in sent and "[@someone" not in sent  # not a file: left as written


async def test_a_command_runs_on_its_own_model_for_that_turn_only_or_says_why_not(
    agent: AgentProcess, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    commands = workspace / ".claude" / "commands"
    (commands / "quick.md").write_text("---\nmodel: haiku\n---\nAnswer briefly.\n")
    (commands / "odd.md").write_text("---\nmodel: best\n---\nAnswer oddly.\n")  # no family of that name
    (commands / "exact.md").write_text("---\nmodel: claude-opus-4-1-20250805\n---\nAs written.\n")
    fake_api.set_fallback(replies.text("ok"))
    session = await agent.new_session(workspace)
    await agent.prompt(session, "/quick")
    await agent.prompt(session, "plain")
    before = len(chunks(agent, session))
    await agent.prompt(session, "/odd")
    said = "".join(c["content"]["text"] for c in chunks(agent, session)[before:])
    await agent.prompt(session, "/exact")  # an id is used as written (the API says if it exists)
    models = [r.body["model"] for r in fake_api.requests]
    assert models == ["claude-haiku-5-5", "claude-test-1", "claude-test-1", "claude-opus-4-1-20250805"]
    assert "/odd asks for the model 'best', which is not offered here" in said
    # One the API does not know: its 404 is the answer, naming the model.
    (commands / "gone.md").write_text("---\nmodel: claude-nonesuch-9\n---\nNever answered.\n")
    fake_api.route(
        lambda body: body.get("model") == "claude-nonesuch-9",
        otherwise=replies.error(404, "not_found_error", "model: claude-nonesuch-9"),
    )
    session = await agent.new_session(workspace)  # the files are read again
    gone = await agent.prompt(session, "/gone")
    assert "HTTP 404 not_found_error: model: claude-nonesuch-9" in gone["error"]["message"], gone


async def test_a_user_level_skill_outside_the_workspace_has_its_files_read_confined(
    agent: AgentProcess, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    skill = tmp_path / "home" / ".claude" / "skills" / "deploy"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Deploy the app.\n---\nRun scripts/go.sh.\n"
    )
    (skill / "scripts" / "go.sh").write_text("echo DEPLOY SCRIPT\n")
    (skill / "scripts" / "key").symlink_to(tmp_path / "home" / ".claude" / "commands" / "greet.md")
    fake_api.script(
        replies.tool_use("skill", {"name": "deploy", "file": "scripts/go.sh"}),
        replies.tool_use("skill", {"name": "deploy", "file": "scripts/key"}),
        replies.text("deployed"),
    )
    session = await agent.new_session(workspace)
    await agent.prompt(session, "deploy it")
    assert "- deploy: Deploy the app." in str(fake_api.requests[0].body["system"])
    assert "DEPLOY SCRIPT" in tool_result_text(fake_api, 1)
    assert "scripts/key of the skill deploy was not read: it resolves to" in tool_result_text(fake_api, 2)


async def test_a_client_that_leaves_out_the_skill_tool_gets_no_skill_list_and_skill_maps_to_it(
    agent: AgentProcess, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    fake_api.set_fallback(replies.text("ok"))
    for allowed, offered in ((["Read"], False), (["Read", "Skill"], True)):
        meta = {"claudeCode": {"options": {"allowedTools": allowed}}}  # as acpx sends it
        session = await agent.new_session(workspace, meta=meta)
        await agent.prompt(session, "hello")
        body = fake_api.requests[-1].body
        assert ("skill" in {t["name"] for t in body["tools"]}) is offered
        assert ("- changelog: Write CHANGELOG" in str(body["system"])) is offered
