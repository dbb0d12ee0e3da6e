"""Custom slash commands, Agent Skills and MCP prompts, in a repository a Claude user brings (issue 25)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.conventions import EXPECTED_COMMANDS, SKILL_BODY, claude_repo, mcp_server, write_file
from tests.wire.conftest import chunks, turn_record

SONNET = "claude-sonnet-5-5"


def system_of(fake_api: FakeMessagesAPI, index: int = -1) -> str:
    system = fake_api.requests[index].body["system"]
    return system if isinstance(system, str) else "".join(b["text"] for b in system)


def user_text(fake_api: FakeMessagesAPI, index: int = -1) -> str:
    """The text of the last user message of a request."""
    content = fake_api.requests[index].body["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(str(b.get("text", "")) for b in content)


def tool_result_text(fake_api: FakeMessagesAPI, index: int) -> str:
    """The text of the tool results a request carries in its last message."""
    found = []
    for block in fake_api.requests[index].body["messages"][-1]["content"]:
        content = block.get("content", "")
        found.append(content if isinstance(content, str) else "".join(c.get("text", "") for c in content))
    return "\n".join(found)


async def announced(agent: AgentProcess, session: str, since: int = 0) -> dict[str, dict[str, Any]]:
    update = await agent.wait_for(
        lambda m: (
            m["params"]["update"]["sessionUpdate"] == "available_commands_update"
            and m["params"]["sessionId"] == session
        ),
        timeout=30,
        since=since,
    )
    return {c["name"]: c for c in update["params"]["update"]["availableCommands"]}


async def status_text(agent: AgentProcess, session: str) -> str:
    before = len(chunks(agent, session))
    response = await agent.prompt(session, "/status")
    assert turn_record(response)["modelRequests"] == 0
    return "".join(c["content"]["text"] for c in chunks(agent, session)[before:])


async def test_commands_skills_and_mcp_prompts_are_announced_reported_and_announced_again(
    agent: AgentProcess, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    fake_api.set_fallback(replies.text("ok"))
    session = await agent.new_session(workspace, mcp_servers=[mcp_server()])
    commands = await announced(agent, session)
    assert set(commands) == EXPECTED_COMMANDS
    assert commands["review"]["description"] == "Review a file for bugs (project)"
    assert commands["review"]["input"] == {"hint": "<file>"}
    assert commands["component"]["description"] == "Create a UI component (project:frontend)"
    assert commands["greet"]["description"] == "Say hello to $ARGUMENTS. (user)"
    assert commands["greet"]["input"] == {"hint": "arguments"}  # it uses $ARGUMENTS, with no hint
    assert commands["changelog"]["description"].endswith("Keep a Changelog style. (project skill)")
    prompt = commands["mcp__tests__review_code"]
    assert prompt["input"] == {"hint": "<path> [focus]"} and "(MCP: tests)" in prompt["description"]
    # The invalid skill and the shadowed user command are reported; the session works.
    status = await status_text(agent, session)
    broken = workspace / ".claude" / "skills" / "broken" / "SKILL.md"
    assert f"{broken} (skipped: line 3 of the frontmatter is not `key: value`" in status, status
    user_review = tmp_path / "home" / ".claude" / "commands" / "review.md"
    assert f"{user_review} (shadowed by {workspace / '.claude' / 'commands' / 'review.md'})" in status
    assert "- changelog (project): " in status and "- /mcp__tests__review_code (tests)" in status
    assert '"conventions.skipped"' in agent.stderr_text() and str(broken) in agent.stderr_text()
    assert (await agent.prompt(session, "hello"))["result"]["stopReason"] == "end_turn"
    # A load reads them again (a command added since is offered) and announces them again.
    (workspace / ".claude" / "commands" / "later.md").write_text("Added later.\n")
    since = len(agent.messages)
    params = {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
    assert "result" in await agent.request("session/load", params, timeout=30)
    again = await announced(agent, session, since)
    assert set(again) == (EXPECTED_COMMANDS - {"mcp__tests__review_code"}) | {"later"}
    # So does a resume, with its MCP servers' prompts.
    (workspace / ".claude" / "commands" / "later.md").unlink()
    since = len(agent.messages)
    params = {"sessionId": session, "cwd": str(workspace), "mcpServers": [mcp_server()]}
    assert "result" in await agent.request("session/resume", params, timeout=60)
    assert set(await announced(agent, session, since)) == EXPECTED_COMMANDS


async def test_a_command_sends_its_body_with_the_arguments_substituted(
    agent: AgentProcess, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    fake_api.set_fallback(replies.text("reviewed"))
    session = await agent.new_session(workspace)
    response = await agent.prompt(session, "/review src/app.py")
    assert response["result"]["stopReason"] == "end_turn"
    assert turn_record(response)["modelRequests"] == 1 and fake_api.attempts == 1
    sent = user_text(fake_api)
    assert sent.startswith("Review src/app.py carefully, starting with src/app.py. Context: @README.md")
    assert '<file path="README.md">' in sent and "README TEXT for tests." in sent  # @path inlined
    assert "USER REVIEW BODY" not in sent and "/review" not in sent
    # The namespaced one and the user's own run the same way.
    await agent.prompt(session, "/component Button")
    assert user_text(fake_api).startswith("Create the component Button.")
    await agent.prompt(session, "/greet Ada")
    assert user_text(fake_api).startswith("Say hello to Ada.")
    # An unknown /word is an ordinary prompt.
    await agent.prompt(session, "/nonesuch please")
    assert user_text(fake_api) == "/nonesuch please"


async def test_the_model_sees_the_skill_listed_then_loads_its_body_then_its_reference(
    agent: AgentProcess, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    fake_api.script(
        replies.tool_use("skill", {"name": "changelog"}),
        replies.tool_use("skill", {"name": "changelog", "file": "references/format.md"}),
        replies.tool_use("skill", {"name": "changelog", "file": "../broken/SKILL.md"}),
        replies.text("entry written"),
    )
    session = await agent.new_session(workspace)
    response = await agent.prompt(session, "add a changelog entry")
    assert response["result"]["stopReason"] == "end_turn"
    system = system_of(fake_api, 0)
    assert "- changelog: Write CHANGELOG entries in the Keep a Changelog style." in system
    assert SKILL_BODY not in system and "broken" not in system
    assert "skill" in {t["name"] for t in fake_api.requests[0].body["tools"]}
    body = tool_result_text(fake_api, 1)
    assert SKILL_BODY in body and "- references/format.md" in body and "FORMAT REFERENCE" not in body
    assert "FORMAT REFERENCE: Added, Changed, Fixed." in tool_result_text(fake_api, 2)
    refused = tool_result_text(fake_api, 3)  # another skill's file: outside this skill's directory
    assert "was not read: it resolves to" in refused and "does not parse" not in refused
    assert all(system_of(fake_api, i) == system for i in range(4))  # the cached prefix stays put


async def test_a_skill_runs_as_a_slash_command_with_its_arguments(
    agent: AgentProcess, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    fake_api.set_fallback(replies.text("ok"))
    session = await agent.new_session(workspace)
    await agent.prompt(session, "/changelog for the 2.0 release")
    sent = user_text(fake_api)
    assert sent.startswith("The user ran the skill /changelog.") and SKILL_BODY in sent
    assert "ARGUMENTS: for the 2.0 release" in sent and "- references/format.md" in sent


async def test_a_skill_is_its_folders_command_and_needs_no_frontmatter_as_in_claude_code(
    agent: AgentProcess, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    """`code-review/SKILL.md` saying `name: reviewing-code` is `/code-review` in Claude Code, and a
    SKILL.md without frontmatter is a skill: here the one was `/reviewing-code` (so `/code-review`
    reached the model as plain text) and the other dropped (issue 42 item 1)."""
    workspace = claude_repo(tmp_path)
    skills = workspace / ".claude" / "skills"
    write_file(
        skills / "code-review" / "SKILL.md",
        "---\nname: reviewing-code\ndescription: Reviews a diff.\n---\nREVIEW SKILL BODY\n",
    )
    write_file(skills / "notes" / "SKILL.md", "# Notes\n\nWrites release notes from the log.\n\nNOTES BODY\n")
    fake_api.script(
        replies.text("reviewed"),
        replies.tool_use("skill", {"name": "notes"}),
        replies.text("notes written"),
    )
    session = await agent.new_session(workspace)
    commands = await announced(agent, session)
    await agent.prompt(session, "/code-review the last commit")
    sent = user_text(fake_api, 0)
    await agent.prompt(session, "write the notes")
    assert {"code-review", "notes"} <= set(commands) and "reviewing-code" not in commands
    assert commands["notes"]["description"] == "Writes release notes from the log. (project skill)"
    assert sent.startswith("The user ran the skill /code-review.") and "REVIEW SKILL BODY" in sent
    system = system_of(fake_api, 1)
    assert "- code-review: Reviews a diff." in system
    assert "- notes: Writes release notes from the log." in system
    assert "NOTES BODY" in tool_result_text(fake_api, 2)


async def test_an_mcp_prompt_runs_as_a_command(
    agent: AgentProcess, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    fake_api.set_fallback(replies.text("ok"))
    session = await agent.new_session(workspace, mcp_servers=[mcp_server()])
    response = await agent.prompt(session, "/mcp__tests__review_code src/app.py focus=style", timeout=60)
    assert turn_record(response)["modelRequests"] == 1
    assert user_text(fake_api) == "Please review src/app.py, looking for style (the MCP prompt's words)."
    await agent.prompt(session, "/mcp__tests__review_code src/app.py", timeout=60)  # positional only
    assert "looking for bugs" in user_text(fake_api)
    # A required argument missing: said to the user, no model request.
    before = len(chunks(agent, session))
    response = await agent.prompt(session, "/mcp__tests__review_code", timeout=60)
    assert turn_record(response)["modelRequests"] == 0 and fake_api.attempts == 2
    said = "".join(c["content"]["text"] for c in chunks(agent, session)[before:])
    assert "needs path: /mcp__tests__review_code <path> [focus]" in said


async def test_a_two_prompt_session_with_commands_and_skills_hits_the_prompt_cache(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    fake_api.script(replies.text("first"), replies.text("second"))
    async with AgentProcess.start(env={**agent_env, "ACP_AGENT_MODEL": SONNET}, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.prompt(session, "/review src/app.py")
        response = await agent.prompt(session, "and now the tests")
    first, second = (r.body for r in fake_api.requests)
    assert first["system"] == second["system"] and first["tools"] == second["tools"]
    assert "- changelog: " in system_of(fake_api, 0)
    usage = fake_api.served[1].usage
    assert usage is not None and usage["cache_read_input_tokens"] > 0  # billed as a cache read
    assert turn_record(response)["cacheReadInputTokens"] == usage["cache_read_input_tokens"]
