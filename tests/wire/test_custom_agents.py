"""Custom subagents (`.claude/agents/*.md`, issue 33 item 6): the `task` tool offers them by name,
each child runs with its agent's prompt, tools and model under the turn's one meter, `/agents`
lists them, and a bad agent file costs that file only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_agent.testing import FakeMessagesAPI, replies, routes
from tests.support.agent import AgentProcess
from tests.support.conventions import claude_repo, write_file
from tests.wire.conftest import chunks, turn_record
from tests.wire.test_claude_settings import Editor, calls, results, write_settings
from tests.wire.test_conventions import status_text
from tests.wire.test_subagent_limits import endless_child

HAIKU_4_5 = "claude-haiku-4-5"  # thinks with a budget (`enabled`), takes no effort
SONNET = "claude-sonnet-5-5"  # refuses `thinking.type.enabled`: a child that copied its parent's would 400
REVIEWER_BODY = "REVIEWER PROMPT: you review code for bugs and cite lines."
REVIEWER = f"""---
name: reviewer
description: Reviews a file for bugs; use it after edits.
tools: Read, Glob, Bash, NoSuchTool
model: sonnet
---
{REVIEWER_BODY}
"""


def agents_repo(tmp_path: Path) -> Path:
    """A repository with one good project agent, a user agent it shadows, and bad agent files."""
    workspace = claude_repo(tmp_path)
    agents, home = workspace / ".claude" / "agents", tmp_path / "home" / ".claude" / "agents"
    write_file(agents / "reviewer.md", REVIEWER)
    write_file(home / "reviewer.md", "---\nname: reviewer\ndescription: USER REVIEWER\n---\nnever used\n")
    write_file(
        home / "explainer.md",
        "---\nname: explainer\ndescription: Explains code.\nmodel: best\n---\nExplain.\n",
    )
    write_file(agents / "nameless.md", "---\ndescription: no name\n---\nbody\n")
    write_file(
        agents / "broken.md",
        "---\nname: broken\ndescription: [unclosed\n  - : :\nnot yaml at all\n---\nbody\n",
    )
    write_file(agents / "huge.md", "---\nname: huge\ndescription: big\n---\n" + "x" * 1_000_000)
    return workspace


async def announced_list(agent: AgentProcess, session: str) -> list[dict[str, Any]]:
    """The commands of the session's first `available_commands_update`, as sent (duplicates kept)."""
    update = await agent.wait_for(
        lambda m: (
            m["params"]["update"]["sessionUpdate"] == "available_commands_update"
            and m["params"]["sessionId"] == session
        ),
        timeout=30,
    )
    commands: list[dict[str, Any]] = update["params"]["update"]["availableCommands"]
    return commands


def reviewing(body: dict[str, Any], attempt: int) -> replies.Reply:
    """A parent that hands the reviewer a task every time (a fresh call id each reply)."""
    args = {"description": "Review app", "prompt": "review src/app.py", "subagent_type": "reviewer"}
    return replies.message([replies.tool_use_block("task", args)], stop_reason="tool_use")


async def test_a_custom_agents_child_uses_its_model_and_tools_and_the_tree_meets_max_turn_requests(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = agents_repo(tmp_path)
    children = fake_api.route(routes.system_has(REVIEWER_BODY), otherwise=endless_child())
    fake_api.set_fallback(reviewing)
    env = {**agent_env, "ACP_AGENT_MODEL": HAIKU_4_5, "ACP_AGENT_THINKING_BUDGET": "2048"}
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace, {"acp-agent": {"maxTurnRequests": 6}})
        response = await agent.prompt(session, "have the reviewer look at the app")
    assert response["result"]["stopReason"] == "max_turn_requests", response
    assert fake_api.attempts == len(fake_api.served) == 6  # across the tree, and no 400 anywhere
    record = turn_record(response)
    assert (record["modelRequests"], record["limit"]) == (6, "maxTurnRequests")
    parent = [r for r in fake_api.requests if REVIEWER_BODY not in str(r.body["system"])]
    child = [r for r in fake_api.requests if REVIEWER_BODY in str(r.body["system"])]
    assert len(child) == children.served == 4 and len(parent) == 2
    for request in parent:
        assert request.body["model"] == HAIKU_4_5
        assert request.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        task = next(t for t in request.body["tools"] if t.get("name") == "task")
        assert "- reviewer: Reviews a file for bugs; use it after edits." in task["description"]
        assert task["input_schema"]["properties"]["subagent_type"]["enum"] == [
            "explainer",
            "general-purpose",
            "reviewer",
        ]
    assert parent[0].body["tools"] == parent[1].body["tools"]  # one tool list: one cached prefix
    for request in child:
        assert request.body["model"] == SONNET  # `model: sonnet`, with what Sonnet takes
        assert request.body.get("thinking", {}).get("type") != "enabled"
        assert [t["name"] for t in request.body["tools"]] == ["read_file", "list_files"]
        system = "".join(b["text"] for b in request.body["system"])
        assert system.startswith(REVIEWER_BODY) and "USER REVIEWER" not in system
    first, second = record["subagents"]
    assert (first["agent"], first["model"], first["requests"], first["stop"]) == (
        "reviewer",
        SONNET,
        4,
        "max_turn_requests",
    )
    assert (second["requests"], second["stop"]) == (0, "max_turn_requests")  # nothing left to spare
    assert record["modelRequests"] - children.served == 2  # the parent's own two


async def test_agents_lists_them_and_every_bad_agent_file_is_named_while_the_session_goes_on(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = agents_repo(tmp_path)
    agents, home = workspace / ".claude" / "agents", tmp_path / "home" / ".claude" / "agents"
    for i in range(500):  # past the cap of 100 agent files read (after the project's and the user's own)
        write_file(
            home / "many" / f"a{i:03}.md", f"---\nname: many-{i:03}\ndescription: one of many\n---\nBody.\n"
        )
    fake_api.route(routes.system_has(REVIEWER_BODY), replies.text("REVIEWED: no bugs"))
    args = {"description": "Review", "prompt": "review it", "subagent_type": "reviewer"}
    fake_api.script(
        replies.message([replies.tool_use_block("task", args, id="toolu_r")], stop_reason="tool_use"),
        replies.text("done"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        before = len(chunks(agent, session))
        listed = await agent.prompt(session, "/agents")
        text = "".join(c["content"]["text"] for c in chunks(agent, session)[before:])
        status = await status_text(agent, session)
        response = await agent.prompt(session, "review the app")
    assert turn_record(listed)["modelRequests"] == 0
    reviewer = text[text.index("- reviewer (project)") :].split("\n- ", 1)[0]
    assert "Reviews a file for bugs" in reviewer and "model: claude-sonnet-5-5 (sonnet)" in reviewer
    assert "tools: read_file, list_files" in reviewer
    assert "left out: run_command (not a subagent's tool here)" in reviewer  # Bash: never more than theirs
    assert "ignored: NoSuchTool (no such tool here)" in reviewer
    assert f"file: {agents / 'reviewer.md'}" in reviewer
    assert "- explainer (user): Explains code." in text
    assert "model: the session's: 'best' is not offered here" in text  # a word naming no family
    not_loaded = text[text.index("Not loaded:") :]
    assert f"{home / 'reviewer.md'} (shadowed by {agents / 'reviewer.md'})" in not_loaded
    assert "nameless.md (skipped: `name` is missing from its frontmatter)" in not_loaded
    assert "broken.md (skipped: line" in not_loaded
    assert "huge.md (skipped: larger than the 64 KiB cap)" in not_loaded
    assert "not read: the cap of 100 agent files was reached" in not_loaded
    assert "nameless.md (skipped" in status and "Custom agents: " in status
    assert response["result"]["stopReason"] == "end_turn"
    results = fake_api.requests[-1].body["messages"][-1]["content"]
    assert results[0]["content"] == "REVIEWED: no bugs"


async def test_a_project_agents_command_replaces_the_built_in_in_the_menu_and_when_run(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = agents_repo(tmp_path)
    write_file(
        workspace / ".claude" / "commands" / "agents.md",
        "---\ndescription: OUR AGENTS\n---\nOUR AGENTS BODY\n",
    )
    fake_api.script(replies.text("ran the project's command"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        commands = await announced_list(agent, session)
        response = await agent.prompt(session, "/agents")
    assert [c["description"] for c in commands if c["name"] == "agents"] == ["OUR AGENTS (project)"]
    assert turn_record(response)["modelRequests"] == 1
    assert "OUR AGENTS BODY" in str(fake_api.requests[0].body["messages"][-1]["content"])


async def test_in_plan_mode_a_custom_agent_still_starts_unasked(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = agents_repo(tmp_path)
    fake_api.route(routes.system_has(REVIEWER_BODY), replies.text("REVIEWED in plan mode"))
    args = {"description": "Review", "prompt": "review it", "subagent_type": "reviewer"}
    fake_api.script(
        replies.message([replies.tool_use_block("task", args)], stop_reason="tool_use"),
        replies.text("done"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "plan"})
        response = await agent.prompt(session, "review the app")
        asked = [m for m in agent.messages if m.get("method") == "session/request_permission"]
    assert response["result"]["stopReason"] == "end_turn" and asked == []
    assert fake_api.requests[-1].body["messages"][-1]["content"][0]["content"] == "REVIEWED in plan mode"
    assert turn_record(response)["subagents"][0]["agent"] == "reviewer"


OLD_OPUS = "claude-opus-4-1-20250805"  # not among the built-in models: no listing names it yet


async def test_an_agents_model_id_is_used_as_written_and_the_apis_404_reaches_the_user(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    """The process's first turn (no Models API listing yet): an agent's full model id went to the
    parent's model. Now it is used as written; one the API does not know is its 404 (issue 42 item 6)."""
    workspace = claude_repo(tmp_path)
    agents = workspace / ".claude" / "agents"
    write_file(
        agents / "old.md", f"---\nname: old\ndescription: Old Opus.\nmodel: {OLD_OPUS}\n---\nOLD PROMPT\n"
    )
    write_file(
        agents / "gone.md", "---\nname: gone\ndescription: Gone.\nmodel: claude-nonesuch-9\n---\nGONE\n"
    )
    fake_api.route(routes.system_has("OLD PROMPT"), replies.text("old opus answered"))
    fake_api.route(
        lambda body: body.get("model") == "claude-nonesuch-9",
        otherwise=replies.error(404, "not_found_error", "model: claude-nonesuch-9"),
    )
    calls = [
        {"description": "Ask old", "prompt": "go", "subagent_type": "old"},
        {"description": "Ask gone", "prompt": "go", "subagent_type": "gone"},
    ]
    fake_api.script(
        replies.message([replies.tool_use_block("task", calls[0])], stop_reason="tool_use"),
        replies.message([replies.tool_use_block("task", calls[1], id="toolu_gone")], stop_reason="tool_use"),
        replies.text("done"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "ask both")
        before = len(chunks(agent, session))
        await agent.prompt(session, "/agents")
        listed = "".join(c["content"]["text"] for c in chunks(agent, session)[before:])
        updates = [m["params"]["update"] for m in agent.messages if m.get("method") == "session/update"]
    assert response["result"]["stopReason"] == "end_turn", response
    old = [r for r in fake_api.requests if "OLD PROMPT" in str(r.body["system"])]
    assert [r.body["model"] for r in old] == [OLD_OPUS]
    assert "model: claude-opus-4-1-20250805" in listed and "model: claude-nonesuch-9" in listed
    subagents = turn_record(response)["subagents"]
    assert [(s["agent"], s.get("model")) for s in subagents] == [
        ("old", OLD_OPUS),
        ("gone", "claude-nonesuch-9"),
    ]
    # The 404, with the agent and the model its file named, in the call the user sees, and to the model.
    failed = [u for u in updates if u.get("toolCallId") == "toolu_gone" and u.get("status") == "failed"]
    shown = str(failed[-1]["content"]) if failed else ""
    for said in (shown, str(fake_api.requests[-1].body["messages"][-1]["content"])):
        assert "HTTP 404 not_found_error: model: claude-nonesuch-9" in said, said
        assert "the agent 'gone' runs on 'claude-nonesuch-9', as its file's `model` says" in said, said


async def test_an_agent_whose_name_has_a_dot_is_offered_listed_and_runs(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    """Claude Code refuses only `:` in an agent's name (issue 42 item 5)."""
    workspace = claude_repo(tmp_path)
    write_file(
        workspace / ".claude" / "agents" / "powershell.md",
        "---\nname: powershell-5.1-expert\ndescription: Writes PowerShell 5.1.\n---\nPS51 PROMPT\n",
    )
    fake_api.route(routes.system_has("PS51 PROMPT"), replies.text("Get-ChildItem, as 5.1 has it"))
    args = {"description": "Script", "prompt": "list files", "subagent_type": "powershell-5.1-expert"}
    fake_api.script(
        replies.message([replies.tool_use_block("task", args)], stop_reason="tool_use"),
        replies.text("done"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        before = len(chunks(agent, session))
        await agent.prompt(session, "/agents")
        listed = "".join(c["content"]["text"] for c in chunks(agent, session)[before:])
        response = await agent.prompt(session, "write a script")
    assert "- powershell-5.1-expert (project): Writes PowerShell 5.1." in listed, listed
    assert "Not loaded" not in listed
    task = next(t for t in fake_api.requests[0].body["tools"] if t.get("name") == "task")
    assert "powershell-5.1-expert" in task["input_schema"]["properties"]["subagent_type"]["enum"]
    assert response["result"]["stopReason"] == "end_turn", response
    assert turn_record(response)["subagents"][0]["agent"] == "powershell-5.1-expert"
    assert (
        fake_api.requests[-1].body["messages"][-1]["content"][0]["content"] == "Get-ChildItem, as 5.1 has it"
    )


async def test_agent_rules_in_the_settings_decide_whether_a_custom_agent_starts(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = agents_repo(tmp_path)
    rules = {"deny": ["Agent(reviewer)"], "ask": ["Task(explainer)"]}  # `Task` is `Agent`'s old name
    write_settings(workspace / ".claude" / "settings.json", {"permissions": rules})
    reviewer = fake_api.route(routes.system_has(REVIEWER_BODY), replies.text("REVIEWED"))
    explainer = fake_api.route(routes.system_has("Explain."), replies.text("EXPLAINED"))
    fake_api.script(
        calls(
            ("task", {"description": "Review", "prompt": "review it", "subagent_type": "reviewer"}),
            ("task", {"description": "Explain", "prompt": "explain it", "subagent_type": "explainer"}),
            ("task", {"description": "Look", "prompt": "look around"}),
        ),
        replies.text("done"),
    )
    fake_api.route(routes.first_prompt_has("look around"), replies.text("LOOKED"))
    editor = Editor("allow_once")
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "have them look")
    assert response["result"]["stopReason"] == "end_turn", response
    found = results(fake_api.requests[-1])
    # A deny rule: refused with its one line, never started, nobody asked.
    assert found["toolu_c0"] == "denied by .claude/settings.json: Agent(reviewer)"
    assert reviewer.served == 0
    # An ask rule: asked (once), then it runs; no rule: it runs unasked.
    assert [q["toolCall"]["rawInput"]["subagent_type"] for q in editor.asked] == ["explainer"]
    assert "EXPLAINED" in found["toolu_c1"] and explainer.served == 1
    assert "LOOKED" in found["toolu_c2"]
    record = turn_record(response)
    assert sorted(s.get("agent") or "general-purpose" for s in record["subagents"]) == [
        "explainer",
        "general-purpose",
    ]
    assert record["toolCallsDenied"] == 1
