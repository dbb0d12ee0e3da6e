"""Output styles on the wire (issue 33 item 7): a style the settings choose ends the system prompt,
leaves the coding rules out unless it keeps them, and the cached prefix holds across requests;
the `output_style` option changes it for the next request, and session/load restores it; no
subagent gets it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_agent.claude_code.conventions.output_styles import BUILT_IN_STYLES
from acp_agent.session.system_prompt import SUBAGENT_MARKER
from acp_agent.testing import FakeMessagesAPI, replies, routes
from tests.support.agent import AgentProcess
from tests.support.conventions import claude_repo, write_file
from tests.wire.conftest import turn_record
from tests.wire.test_claude_settings import write_settings
from tests.wire.test_conventions import status_text
from tests.wire.test_prompt_caching import SONNET

TERSE = "STYLE BODY: answer in one line, no preamble."
CODING_RULE = "- Prefer small, checked steps"
SAFETY_RULE = "- Stay inside the workspace"
HELPER_BODY = "HELPER PROMPT: answer the parent's question from the code."


def style_repo(tmp_path: Path) -> Path:
    workspace = claude_repo(tmp_path)
    style = workspace / ".claude" / "output-styles" / "terse.md"
    style.parent.mkdir(parents=True)
    style.write_text(f"---\nname: Terse\ndescription: One line answers\n---\n{TERSE}\n", encoding="utf-8")
    write_settings(tmp_path / "home" / ".claude" / "settings.json", {"outputStyle": "Terse"})
    return workspace


def system_text(body: dict[str, Any]) -> str:
    system = body["system"]
    return system if isinstance(system, str) else "".join(block["text"] for block in system)


def option(options: list[dict[str, Any]], option_id: str) -> dict[str, Any]:
    return next(o for o in options if o["id"] == option_id)


async def test_a_style_from_the_settings_ends_the_system_prompt_and_the_cache_prefix_holds(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = style_repo(tmp_path)
    explanatory = next(s for s in BUILT_IN_STYLES if s.name == "Explanatory")
    fake_api.script(
        replies.tool_use("read_file", {"path": "README.md"}),
        replies.text("done"),
        replies.text("again"),
        replies.text("explained"),
        replies.text("loaded"),
    )
    env = {**agent_env, "ACP_AGENT_MODEL": SONNET}
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        answer = await agent.request("session/new", {"cwd": str(workspace), "mcpServers": []})
        session = answer["result"]["sessionId"]
        offered = option(answer["result"]["configOptions"], "output_style")
        await agent.prompt(session, "look")
        response = await agent.prompt(session, "once more")
        changed = await agent.request(
            "session/set_config_option",
            {"sessionId": session, "configId": "output_style", "value": "Explanatory"},
        )
        await agent.prompt(session, "explain")
        status = await status_text(agent, session)
    assert offered["currentValue"] == "Terse" and "category" not in offered
    assert [o["value"] for o in offered["options"]] == ["Default", "Explanatory", "Learning", "Terse"]
    first, second, third, fourth = (r.body for r in fake_api.requests)
    system = system_text(first)
    assert system.endswith(f"\n\nOutput style: Terse\n{TERSE}")
    assert SAFETY_RULE in system and CODING_RULE not in system  # no keep-coding-instructions
    assert second["system"] == first["system"] == third["system"]  # one cached prefix
    usage = fake_api.served[2].usage
    assert usage is not None and usage["cache_read_input_tokens"] > len(system) // 8
    assert turn_record(response)["cacheReadInputTokens"] == usage["cache_read_input_tokens"]
    # Another style: the next request's system prompt, and the cache is written once more.
    assert option(changed["result"]["configOptions"], "output_style")["currentValue"] == "Explanatory"
    system = system_text(fourth)
    rewritten = fake_api.served[3].usage
    assert rewritten is not None and rewritten["cache_creation_input_tokens"] > len(system) // 8
    assert system.endswith(explanatory.prompt_section()) and CODING_RULE in system  # it keeps them
    assert "Output style: Explanatory (built-in)" in status
    # session/load restores the journaled choice.
    async with AgentProcess.start(env=env, schema=acp_schema) as agent:
        await agent.initialize()
        loaded = await agent.request(
            "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
        )
        await agent.prompt(session, "after load")
    assert option(loaded["result"]["configOptions"], "output_style")["currentValue"] == "Explanatory"
    assert system_text(fake_api.requests[-1].body).endswith(explanatory.prompt_section())


@pytest.mark.model_free
async def test_an_unknown_style_or_a_bad_file_is_named_and_default_is_used(
    agent: AgentProcess, tmp_path: Path
) -> None:
    workspace = claude_repo(tmp_path)
    styles = workspace / ".claude" / "output-styles"
    styles.mkdir(parents=True)
    (styles / "broken.md").write_text("---\nname: Broken\nno colon here\n---\nbody\n", encoding="utf-8")
    (styles / "empty.md").write_text("---\nname: Empty\n---\n\n", encoding="utf-8")
    write_settings(workspace / ".claude" / "settings.json", {"outputStyle": "Nope"})
    answer = await agent.request("session/new", {"cwd": str(workspace), "mcpServers": []})
    session = answer["result"]["sessionId"]
    assert option(answer["result"]["configOptions"], "output_style")["currentValue"] == "Default"
    refused = await agent.request(
        "session/set_config_option", {"sessionId": session, "configId": "output_style", "value": "Empty"}
    )
    assert refused["error"]["code"] == -32602
    status = await status_text(agent, session)
    assert "Output style: Default (built-in)" in status
    assert "outputStyle 'Nope' in .claude/settings.json: no such style (Default is used)" in status
    assert "broken.md (skipped:" in status and "empty.md (skipped: the style holds no text)" in status


async def test_a_style_ends_the_parents_system_prompt_and_never_reaches_a_subagent(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    """A style is the session's voice to the user; a subagent answers the parent, not the user,
    so neither the general child nor a custom agent's gets it (whose prompt is built apart)."""
    workspace = style_repo(tmp_path)
    helper = f"---\nname: helper\ndescription: Helps.\n---\n{HELPER_BODY}\n"
    write_file(workspace / ".claude" / "agents" / "helper.md", helper)
    general = fake_api.route(routes.first_prompt_has("general question"), replies.text("general answer"))
    custom = fake_api.route(routes.system_has(HELPER_BODY), replies.text("helper answer"))
    calls = [
        replies.tool_use_block("task", {"description": "Ask", "prompt": "general question"}),
        replies.tool_use_block(
            "task", {"description": "Help", "prompt": "helper question", "subagent_type": "helper"}
        ),
    ]
    fake_api.script(replies.message(calls, stop_reason="tool_use"), replies.text("both answered"))
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "ask two helpers")
    assert response["result"]["stopReason"] == "end_turn", response
    assert general.served == custom.served == 1
    parents = [r for r in fake_api.requests if routes.first_prompt_has("ask two helpers")(r.body)]
    children = [system_text(r.body) for r in fake_api.requests if r not in parents]
    assert len(parents) == 2
    for request in parents:
        assert system_text(request.body).endswith(f"\n\nOutput style: Terse\n{TERSE}")
    general_child, custom_child = sorted(children, key=lambda system: HELPER_BODY in system)
    assert general_child.startswith(SUBAGENT_MARKER) and HELPER_BODY in custom_child
    for system in children:
        assert TERSE not in system and "Output style" not in system
