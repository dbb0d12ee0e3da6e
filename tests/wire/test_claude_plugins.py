"""Claude Code's plugins on the wire (issue 33 item 9): an installed plugin the user's settings
enable offers its command, skill and agent (namespaced `plugin:name`); one only the project's
settings enable waits for the trust question; a bad plugin costs that plugin only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp_agent.testing import FakeMessagesAPI, replies, routes
from tests.support.agent import AgentProcess
from tests.support.conventions import claude_repo
from tests.wire.conftest import turn_record
from tests.wire.test_claude_settings import Editor, results, write_settings
from tests.wire.test_conventions import status_text, user_text

AGENT_BODY = "SECURITY AUDITOR PROMPT: you audit code for injections."
SKILL_BODY = "LINT SKILL BODY: run the linter first."


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def install_plugin(home: Path) -> Path:
    """`fmt@team` installed in the cache layout of `~/.claude/plugins` (named `formatter` by its
    manifest), with a command, a skill, an agent and a hooks file (not honoured)."""
    root = home / ".claude" / "plugins" / "cache" / "team" / "fmt" / "1.2.0"
    write(root / ".claude-plugin" / "plugin.json", json.dumps({"name": "formatter", "version": "1.2.0"}))
    write(
        root / "commands" / "fmt.md", "---\ndescription: Format a file\n---\nPLUGIN FORMAT $ARGUMENTS now.\n"
    )
    write(
        root / "skills" / "lint" / "SKILL.md",
        f"---\nname: lint\ndescription: Lints the code.\n---\n{SKILL_BODY}\n",
    )
    write(
        root / "agents" / "security.md",
        f"---\nname: security\ndescription: Audits code.\n---\n{AGENT_BODY}\n",
    )
    write(root / "hooks" / "hooks.json", json.dumps({"hooks": {}}))
    return root


async def menu(agent: AgentProcess, session: str, name: str) -> list[str]:
    """The names of the first `available_commands_update` of the session that lists `name`."""
    update = await agent.wait_for(
        lambda m: (
            m["params"]["update"]["sessionUpdate"] == "available_commands_update"
            and m["params"]["sessionId"] == session
            and name in [c["name"] for c in m["params"]["update"]["availableCommands"]]
        ),
        timeout=30,
    )
    return [c["name"] for c in update["params"]["update"]["availableCommands"]]


def task_types(request: Any) -> list[str]:
    """The subagent types a request's task tool offers (none without custom agents)."""
    task = next(t for t in request.body["tools"] if t.get("name") == "task")
    kind = task["input_schema"]["properties"].get("subagent_type", {"enum": []})
    types: list[str] = kind["enum"]
    return types


async def test_a_plugin_the_user_enables_offers_its_command_skill_and_agent(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    home = Path(agent_env["HOME"])
    install_plugin(home)
    enabled = {"fmt@team": True, "missing@team": True}
    write_settings(home / ".claude" / "settings.json", {"enabledPlugins": enabled})
    fake_api.route(routes.system_has(AGENT_BODY), replies.text("AUDITED: no injections"))
    args = {"description": "Audit", "prompt": "audit src/app.py", "subagent_type": "formatter:security"}
    fake_api.script(
        replies.text("formatted"),
        replies.message([replies.tool_use_block("task", args, id="toolu_a")], stop_reason="tool_use"),
        replies.text("done"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        names = await menu(agent, session, "formatter:fmt")
        formatted = await agent.prompt(session, "/formatter:fmt src/app.py")
        command = user_text(fake_api)
        audited = await agent.prompt(session, "audit the app")
        status = await status_text(agent, session)
    assert "formatter:lint" in names and "review" in names  # beside the project's own
    assert turn_record(formatted)["modelRequests"] == 1
    assert "PLUGIN FORMAT src/app.py now." in command  # the plugin's command ran
    first = fake_api.requests[0]
    assert "formatter:security" in task_types(first)
    system = "".join(b["text"] for b in first.body["system"])
    assert "- formatter:lint: Lints the code." in system  # the skill, listed for the model
    assert audited["result"]["stopReason"] == "end_turn"
    assert results(fake_api.requests[-1]) == {"toolu_a": "AUDITED: no injections"}  # its agent ran
    child = next(r for r in fake_api.requests if AGENT_BODY in str(r.body["system"]))
    assert "".join(b["text"] for b in child.body["system"]).startswith(AGENT_BODY)
    assert "/formatter:fmt (plugin)" in status and "formatter:lint (plugin)" in status
    assert "Claude plugins: 1 of 1 in force" in status and "its hooks not honoured" in status
    assert "plugin missing@team (enabled by ~/.claude/settings.json) skipped: not installed" in status


async def test_a_plugin_only_the_project_enables_waits_for_trust(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    install_plugin(Path(agent_env["HOME"]))
    write_settings(workspace / ".claude" / "settings.json", {"enabledPlugins": {"fmt@team": True}})
    fake_api.set_fallback(replies.text("ok"))
    for answer, offered in (("distrust_once", False), ("trust_once", True)):
        editor = Editor(answer)
        async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
            await agent.initialize()
            session = await agent.new_session(workspace)
            before = await menu(agent, session, "review")  # the first menu: before the question
            sent = len(fake_api.requests)
            await agent.prompt(session, "hello")
            status = await status_text(agent, session)
            after = await menu(agent, session, "formatter:fmt") if offered else []
        [question] = editor.asked
        assert question["toolCall"]["rawInput"]["enables"] == ["plugin: fmt@team (.claude/settings.json)"]
        assert "formatter:fmt" not in before
        assert ("formatter:security" in task_types(fake_api.requests[sent])) is offered
        system = "".join(b["text"] for b in fake_api.requests[sent].body["system"])
        assert ("formatter:lint" in system) is offered
        assert ("Claude plugins: 1 of 1 in force" in status) is offered
        if offered:
            assert "formatter:lint" in after
        else:
            assert "(waits for the project's trust)" in status and "/formatter:fmt" not in status
