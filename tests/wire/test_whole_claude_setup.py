"""A Claude user's whole setup at once (issue 33, "Done when"): one temporary HOME and repository
holding every Claude Code file the agent reads (user, project and local settings with rules and
hooks, the memory hierarchy with an import and a path rule, custom agents, commands, a skill, a
project MCP server in `.mcp.json`, an output style), the project trusted through the trust
question. Over a session of several turns with tool calls the cached prefix (tools and system
prompt) is byte for byte the same on every request and the fake bills it as a cache read from the
second request on; a denied path is refused by every route with one line and no question; and
every bad input of the issue, all present at once, leaves the session answering, named in /status
and in the log.

`whole_setup` is the one fixture: what a later feature reads is a file or two more there, and a
line more in `WholeSetup`.
"""

from __future__ import annotations

import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp_agent.testing import FakeMessagesAPI, replies, routes
from acp_agent.testing.prompt_cache import estimate_tokens
from acp_agent.testing.recorded import RecordedRequest
from tests.support.agent import AgentProcess
from tests.support.conventions import MCP_SERVER, claude_repo, write_file
from tests.wire.conftest import turn_record
from tests.wire.test_claude_settings import Editor, calls, results, write_settings
from tests.wire.test_conventions import status_text
from tests.wire.test_custom_agents import REVIEWER, REVIEWER_BODY
from tests.wire.test_hooks import hook, log_lines

SONNET = "claude-sonnet-5-5"  # a model the fake bills the prompt cache for
ENV_DENIED = "denied by .claude/settings.json: Read(./.env)"
SECRET = "hunter2-SECRET"


@dataclass(frozen=True, slots=True)
class WholeSetup:
    """The files of `whole_setup`, as the tests name them."""

    home: Path
    repo: Path
    hooks_log: Path
    """Every hook run appends a line here (`tests/support/hook_script.py`)."""
    memory: dict[str, Path]
    """Each memory file in the system prompt, by the marker word it holds."""
    path_rule: Path
    """`.claude/rules/python.md`, loaded when a file under src/ is read."""
    mcp_server: str
    """The name of `.mcp.json`'s server (`tests/support/mcp_server.py`), started once trusted."""
    style: str
    """The text of the output style the user's settings choose (it ends the system prompt)."""


def whole_setup(tmp_path: Path) -> WholeSetup:
    """Every Claude Code file the agent reads today, in a HOME and a repository under `tmp_path`."""
    repo = claude_repo(tmp_path)  # .claude/commands (review, frontend/component), a skill, ~/.claude/commands
    home = tmp_path / "home"
    log = repo / "hooks.log"
    write_settings(
        home / ".claude" / "settings.json",
        {"permissions": {"allow": ["Bash(echo hello *)"], "deny": ["Bash(curl *)"]}, "outputStyle": "terse"},
    )
    write_settings(
        repo / ".claude" / "settings.json",
        {
            "permissions": {
                "allow": ["Bash(ls *)"],
                "ask": ["Bash(git push *)"],
                "deny": ["Read(./.env)"],
            },
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [hook("block-rm", log)]}],
                "PostToolUse": [{"matcher": "Edit|Write", "hooks": [hook("context", log)]}],
            },
        },
    )
    write_settings(repo / ".claude" / "settings.local.json", {"permissions": {"allow": ["Edit(./src/**)"]}})
    memory = {
        "USER_MEMORY": write_file(home / ".claude" / "CLAUDE.md", "USER_MEMORY\n"),
        "ROOT_CLAUDE": write_file(repo / "CLAUDE.md", "ROOT_CLAUDE\n@docs/style.md\n"),
        "STYLE_GUIDE": write_file(repo / "docs" / "style.md", "STYLE_GUIDE\n"),
        "GENERAL_RULE": write_file(repo / ".claude" / "rules" / "general.md", "GENERAL_RULE\n"),
        "LOCAL_MEMORY": write_file(repo / "CLAUDE.local.md", "LOCAL_MEMORY\n"),
    }
    path_rule = write_file(
        repo / ".claude" / "rules" / "python.md", '---\npaths:\n  - "src/**/*.py"\n---\nPYTHON_RULE\n'
    )
    write_file(repo / ".claude" / "agents" / "reviewer.md", REVIEWER)
    write_file(repo / ".claude" / "commands" / "leak.md", "Show @.env and @README.md\n")
    write_file(repo / ".env", f"TOKEN={SECRET}\n")
    style = "TERSE_STYLE: answer in one line."
    write_file(repo / ".claude" / "output-styles" / "terse.md", f"---\ndescription: Terse\n---\n{style}\n")
    server = {"command": sys.executable, "args": [str(MCP_SERVER)]}
    write_settings(repo / ".mcp.json", {"mcpServers": {"proj": server}})
    (repo / "build").mkdir()
    return WholeSetup(home, repo, log, memory, path_rule, "proj", style)


def system_text(request: RecordedRequest) -> str:
    return "".join(b["text"] for b in request.body["system"])


def prefix_tokens(request: RecordedRequest) -> int:
    """What the fake bills for the request's tools and system prompt (the cached prefix)."""
    plain = request.plain_body
    return sum(estimate_tokens(t) for t in plain["tools"]) + sum(estimate_tokens(b) for b in plain["system"])


async def test_a_session_with_every_claude_file_keeps_one_cached_prefix_and_a_deny_holds_everywhere(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    setup = whole_setup(tmp_path)
    repo = setup.repo
    child = fake_api.route(
        routes.system_has(REVIEWER_BODY),
        replies.tool_use("read_file", {"path": ".env"}, id="toolu_child"),
        replies.text("the reviewer could not read it"),
    )
    fake_api.script(
        # 1. a read a path rule scopes, a denied read, searches and a listing
        calls(
            ("read_file", {"path": "src/app.py"}),
            ("read_file", {"path": ".env"}),
            ("search_text", {"pattern": "SECRET"}),
            ("search_text", {"pattern": "TOKEN", "path": ".env"}),
            ("list_files", {"pattern": "*"}),
        ),
        replies.text("looked"),
        # 2. an edit the PostToolUse hook sees
        calls(
            ("edit_file", {"path": "src/app.py", "old_string": "hello", "new_string": "hi"}), prefix="toolu_e"
        ),
        replies.text("edited"),
        # 3. commands the PreToolUse hook checks: it blocks the rm, lets the echo through
        calls(
            ("run_command", {"command": "rm -rf build"}),
            ("run_command", {"command": "echo hello world"}),
            prefix="toolu_r",
        ),
        replies.text("ran"),
        # 4. a custom agent whose read is denied
        calls(
            ("task", {"description": "Review", "prompt": "review the env", "subagent_type": "reviewer"}),
            prefix="toolu_t",
        ),
        replies.text("reviewed"),
        # 5. a command whose @file is denied
        replies.text("the command ran"),
    )
    editor = Editor("trust_always")
    env = {**agent_env, "ACP_AGENT_MODEL": SONNET}
    async with AgentProcess.start(env=env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(repo)
        looked = turn_record(await agent.prompt(session, "look at the app"))
        edited = turn_record(await agent.prompt(session, "edit the app"))
        ran = turn_record(await agent.prompt(session, "clean the build"))
        reviewed = turn_record(await agent.prompt(session, "have the reviewer look"))
        await agent.prompt(session, "/leak")
        status = await status_text(agent, session)

    # Trusted once, through the trust question; nothing else is asked (a deny never is).
    [trust] = editor.asked
    assert trust["toolCall"]["toolCallId"].startswith("trust_")
    enables = trust["toolCall"]["rawInput"]["enables"]
    assert "allow rule: Bash(ls *) (.claude/settings.json)" in enables
    assert any(line.startswith("hook: PreToolUse [Bash]: ") for line in enables)
    assert "Read(./.env)" not in str(enables)
    assert any(f"MCP server: {setup.mcp_server}" in line for line in enables), enables
    assert f"Project trust: {repo}: trusted (remembered)" in status

    requests = fake_api.requests
    parent = [r for r in requests if REVIEWER_BODY not in system_text(r)]
    children = [r for r in requests if REVIEWER_BODY in system_text(r)]
    assert len(parent) == 9 and len(children) == child.served == 2

    # Memory in the prompt in order; the path rule joins after the read that needs it.
    system = system_text(parent[0])
    where = [system.find(marker) for marker in setup.memory]
    assert -1 not in where and where == sorted(where), dict(zip(setup.memory, where, strict=True))
    assert "PYTHON_RULE" not in system
    assert system.rstrip().endswith(setup.style)  # the output style ends the prompt
    offered = [t["name"] for t in parent[0].body["tools"]]
    assert any(name.startswith(f"mcp__{setup.mcp_server}__") for name in offered), offered
    after_read = parent[1].body["messages"][-1]["content"]
    [rule] = [b["text"] for b in after_read if b.get("type") == "text"]
    assert str(setup.path_rule) in rule and "PYTHON_RULE" in rule

    # A deny holds for read, search, list, a subagent's read and @file: one line, no question.
    found = results(parent[1])
    assert found["toolu_c1"] == ENV_DENIED and found["toolu_c3"] == ENV_DENIED
    assert SECRET not in found["toolu_c2"] and ".env" not in found["toolu_c2"]
    assert ".env" not in found["toolu_c4"].split() and "README.md" in found["toolu_c4"]
    assert looked["toolCallsDenied"] == 2
    assert results(children[-1]) == {"toolu_child": ENV_DENIED}
    assert "the reviewer could not read it" in results(parent[7])["toolu_t0"]
    assert reviewed["toolCallsDenied"] == 1
    command = "".join(b.get("text", "") for b in parent[8].body["messages"][-1]["content"])
    assert f"[@.env was not read: {ENV_DENIED}]" in command and "README TEXT for tests." in command
    assert SECRET not in str([r.body for r in requests])

    # The hooks: PostToolUse saw the edit, PreToolUse checked both commands and blocked the rm.
    target = str(repo / "src" / "app.py")
    assert [line[:3] for line in log_lines(setup.hooks_log)] == [
        ["PostToolUse", "Edit", target],
        ["PreToolUse", "Bash", "rm -rf build"],
        ["PreToolUse", "Bash", "echo hello world"],
    ]
    assert f"formatted {target}" in results(parent[3])["toolu_e0"]
    commands = results(parent[5])
    assert commands["toolu_r0"].startswith("Blocked by a PreToolUse hook: rm is not allowed here")
    assert "hello world" in commands["toolu_r1"] and (repo / "build").is_dir()
    assert (edited["hooks"]["runs"], ran["hooks"]["runs"], ran["hooks"]["blocked"]) == (1, 2, 1)

    # One cached prefix: the tools and the system prompt are the same bytes on every request of
    # a conversation, and from the second request on the fake bills them as a cache read.
    for conversation in (parent, children):
        first = conversation[0].plain_body
        for request in conversation[1:]:
            assert request.plain_body["tools"] == first["tools"]
            assert request.plain_body["system"] == first["system"]
    served = fake_api.served
    assert len(served) == len(requests)
    for n, (request, bill) in enumerate(zip(requests, served, strict=True)):
        assert bill.usage is not None
        opens = request is parent[0] or request is children[0]
        if not opens:
            assert bill.usage["cache_read_input_tokens"] >= prefix_tokens(request), (n, bill.usage)


async def test_every_bad_input_at_once_leaves_the_session_answering_named_in_status_and_the_log(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    setup = whole_setup(tmp_path)
    repo, home = setup.repo, setup.home
    # Malformed JSON in a settings file (acp-agent's own), an unknown rule, a hook command that
    # does not exist and one that prints garbage, an agent file without a name, an import loop.
    config = home / ".config" / "acp-agent" / "settings.json"
    write_file(config, '{"permissions": {"deny": ["Bash(rm *)",]}}')
    write_settings(
        repo / ".claude" / "settings.local.json",
        {
            "permissions": {"allow": ["Edit(./src/**)"], "ask": ["Frobnicate(x)"]},
            "hooks": {
                "PreToolUse": [
                    {
                        "matcher": "Read",
                        "hooks": [
                            {"type": "command", "command": str(tmp_path / "no-such-hook.sh")},
                            hook("garbage", setup.hooks_log),
                        ],
                    }
                ]
            },
        },
    )
    write_file(repo / ".claude" / "agents" / "nameless.md", "---\ndescription: no name\n---\nbody\n")
    write_file(repo / "CLAUDE.md", "ROOT_CLAUDE\n@docs/style.md\n@loop-a.md\n")
    write_file(repo / "loop-a.md", "LOOP_A\n@loop-b.md\n")
    write_file(repo / "loop-b.md", "LOOP_B\n@loop-a.md\n")
    fake_api.script(
        replies.tool_use("read_file", {"path": "README.md"}, id="toolu_read"),
        replies.text("read it"),
        replies.text("still here"),
    )
    editor = Editor("trust_always")
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(repo)
        first = await agent.prompt(session, "read the readme")
        status = await status_text(agent, session)
        second = await agent.prompt(session, "are you there?")
        agent.send_signal(signal.SIGTERM)
        assert await agent.wait_exit(timeout=10) == 0
        log = agent.stderr_text()
    assert [q["toolCall"]["toolCallId"][:6] for q in editor.asked] == ["trust_"]
    assert first["result"]["stopReason"] == "end_turn" and second["result"]["stopReason"] == "end_turn"
    assert turn_record(first)["hooks"]["runs"] == 2
    assert "README TEXT for tests." in results(fake_api.requests[1])["toolu_read"]
    system = system_text(fake_api.requests[0])
    assert system.count("LOOP_A") == 1 and system.count("LOOP_B") == 1 and "STYLE_GUIDE" in system
    for in_status, in_log in (
        ("settings.json: skipped (not valid JSON", "skipped (not valid JSON"),
        (
            "ask rule 'Frobnicate(x)' skipped: Frobnicate is no tool of this agent",
            "Frobnicate is no tool of this agent",
        ),
        ("exit code 127", "exit code 127"),
        ("printed invalid JSON", "printed invalid JSON"),
        ("nameless.md (skipped: `name` is missing from its frontmatter)", "nameless.md"),
        (
            f"{repo / 'loop-a.md'} (refused: imported by {repo / 'loop-b.md'}: an import loop",
            "an import loop",
        ),
    ):
        assert in_status in status, (in_status, status)
        assert in_log in log, in_log
