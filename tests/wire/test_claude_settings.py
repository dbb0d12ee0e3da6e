"""The user's Claude Code settings on the wire (issue 33 items 1, 3, 8): a deny holds for every
route to a file, "always" answers outlive the process, a project's allow rules wait for trust,
the mode and the tool list follow the settings, and a bad file never stops a session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies, routes
from acp_agent.testing.recorded import RecordedRequest
from tests.support.agent import AgentProcess, RpcError
from tests.support.conventions import claude_repo
from tests.wire.conftest import chunks, turn_record
from tests.wire.test_conventions import status_text, user_text
from tests.wire.test_web_tools import SONNET

ENV_DENIED = "denied by .claude/settings.json: Read(./.env)"
KEY_DENIED = "denied by .claude/settings.json: Read(./secrets/**)"


def write_settings(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def calls(*uses: tuple[str, dict[str, Any]], prefix: str = "toolu_c") -> replies.Reply:
    blocks = [replies.tool_use_block(name, args, id=f"{prefix}{i}") for i, (name, args) in enumerate(uses)]
    return replies.message(blocks, stop_reason="tool_use")


def results(request: RecordedRequest) -> dict[str, str]:
    """The tool results a request carries in its last message, by call id."""
    found = {}
    for block in request.body["messages"][-1]["content"]:
        if block.get("type") == "tool_result":
            content = block.get("content", "")
            found[block["tool_use_id"]] = (
                content if isinstance(content, str) else "".join(c.get("text", "") for c in content)
            )
    return found


class Editor:
    """The editor's side: answers each permission question with the next of `answers` (or
    refuses when none is left), and keeps every question."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[dict[str, Any]] = []

    async def __call__(self, method: str, params: Any) -> Any:
        if method != "session/request_permission":
            return RpcError(-32601, method)
        self.asked.append(params)
        option = self.answers.pop(0) if self.answers else "reject_once"
        return {"outcome": {"outcome": "selected", "optionId": option}}

    def titles(self) -> list[str]:
        return [p["toolCall"]["title"] for p in self.asked]


async def test_a_denied_path_is_refused_by_every_route_with_one_line_and_no_question(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    (workspace / ".env").write_text("SECRET=hunter2\n")
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "key.txt").write_text("SECRET key material\n")
    (workspace / "notes.txt").write_text("SECRET is a word in this public note\n")
    (workspace / ".claude" / "commands" / "leak.md").write_text(
        "Show @.env and @secrets/key.txt and @notes.txt\n"
    )
    write_settings(
        workspace / ".claude" / "settings.json",
        {"permissions": {"deny": ["Read(./.env)", "Read(./secrets/**)"]}},
    )
    fake_api.route(
        routes.first_prompt_has("read the env for me"),
        replies.tool_use("read_file", {"path": ".env"}, id="toolu_child"),
        replies.text("the child could not read it"),
    )
    fake_api.script(
        calls(
            ("read_file", {"path": ".env"}),
            ("read_file", {"path": "secrets/../secrets/key.txt"}),
            ("search_text", {"pattern": "SECRET"}),
            ("search_text", {"pattern": "SECRET", "path": ".env"}),
            ("list_files", {"pattern": "**/*"}),
            ("list_files", {"pattern": ".env*"}),
            ("task", {"description": "Read the env", "prompt": "read the env for me"}),
        ),
        replies.text("refused everywhere"),
        replies.text("the command ran"),
    )
    editor = Editor()
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "look around")
        assert turn_record(response)["toolCallsDenied"] == 4  # two reads, a search, the child's read
        await agent.prompt(session, "/leak")
    assert editor.asked == []  # a deny is never a question
    parent = [r for r in fake_api.requests if "read the env for me" not in user_text_first(r)]
    found = results(parent[1])
    assert found["toolu_c0"] == ENV_DENIED and found["toolu_c3"] == ENV_DENIED
    assert found["toolu_c1"] == KEY_DENIED
    assert "notes.txt" in found["toolu_c2"] and "key material" not in found["toolu_c2"]
    assert "secrets" not in found["toolu_c2"] and "hunter2" not in found["toolu_c2"]
    assert "src/app.py" in found["toolu_c4"] and "secrets/key.txt" not in found["toolu_c4"]
    assert found["toolu_c5"] == "No entries match '.env*' under '.'."
    assert "the child could not read it" in found["toolu_c6"]
    child = [r for r in fake_api.requests if "read the env for me" in user_text_first(r)]
    assert results(child[-1]) == {"toolu_child": ENV_DENIED}
    command = user_text(fake_api)
    assert f"[@.env was not read: {ENV_DENIED}]" in command
    assert f"[@secrets/key.txt was not read: {KEY_DENIED}]" in command
    assert "SECRET is a word" in command and "hunter2" not in command and "key material" not in command


def user_text_first(request: RecordedRequest) -> str:
    first = request.body["messages"][0]["content"]
    return first if isinstance(first, str) else "".join(str(b.get("text", "")) for b in first)


async def test_always_allow_is_saved_to_the_local_file_and_a_new_agent_does_not_ask(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    local = workspace / ".claude" / "settings.local.json"
    write_settings(local, {"model": "kept", "permissions": {"deny": ["Bash(rm *)"]}})
    fake_api.script(
        replies.tool_use("run_command", {"command": "echo saved-once"}, id="toolu_first"),
        replies.text("ran"),
        replies.tool_use("run_command", {"command": "echo saved-once"}, id="toolu_second"),
        replies.text("ran again"),
    )
    first = Editor("allow_always")
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=first) as agent:
        await agent.initialize()
        await agent.prompt(await agent.new_session(workspace), "run it")
    [question] = first.asked
    names = {o["optionId"]: o["name"] for o in question["options"]}
    assert (
        names["allow_always"] == "Always allow Bash(echo saved-once) (saved to .claude/settings.local.json)"
    )
    saved = json.loads(local.read_text())
    assert saved == {
        "model": "kept",
        "permissions": {"deny": ["Bash(rm *)"], "allow": ["Bash(echo saved-once)"]},
    }
    assert (
        "/.claude/settings.local.json" in (workspace / ".git" / "info" / "exclude").read_text().splitlines()
    )
    second = Editor()
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=second) as agent:
        await agent.initialize()
        response = await agent.prompt(await agent.new_session(workspace), "run it again")
    assert second.asked == [] and turn_record(response)["toolCallsDenied"] == 0
    assert "saved-once" in results(fake_api.requests[-1])["toolu_second"]


async def test_an_always_allow_in_force_never_lets_an_edit_through_in_plan_mode(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """The seeded defect of the issue: the remembered answers moved above the plan check."""
    fake_api.script(
        replies.tool_use("write_file", {"path": "a.txt", "content": "one\n"}, id="toolu_a"),
        replies.text("written"),
        replies.tool_use("write_file", {"path": "b.txt", "content": "two\n"}, id="toolu_b"),
        replies.text("refused"),
    )
    editor = Editor("allow_always")
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.prompt(session, "write a")
        names = {o["optionId"]: o["name"] for o in editor.asked[0]["options"]}
        assert names["allow_always"] == "Always allow (this session)"  # edits: per session
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "plan"})
        response = await agent.prompt(session, "write b")
    assert (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()
    assert len(editor.asked) == 1 and turn_record(response)["toolCallsDenied"] == 1
    assert "plan mode" in results(fake_api.requests[-1])["toolu_b"]


TRUSTED_LINE = "echo trusted-rule"


async def run_trusted_line(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, editor: Editor
) -> dict[str, Any]:
    """One agent, one session, one prompt whose reply runs `TRUSTED_LINE`; the turn's record."""
    fake_api.script(replies.tool_use("run_command", {"command": TRUSTED_LINE}), replies.text("done"))
    requests_before = len(fake_api.requests)
    asked_before = len(editor.asked)

    async def watch(method: str, params: Any) -> Any:
        if params["toolCall"]["toolCallId"].startswith("trust_"):  # before any request of the session
            assert len(fake_api.requests) == requests_before
        return await editor(method, params)

    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=watch) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        record = turn_record(await agent.prompt(session, "go"))
        status = await status_text(agent, session)
    return {"record": record, "status": status, "asked": editor.asked[asked_before:]}


async def test_a_projects_allow_rules_wait_for_trust_and_a_change_asks_again(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    settings = {"permissions": {"allow": ["Bash(echo trusted-rule)"], "deny": ["Read(./.env)"]}}
    project = write_settings(workspace / ".claude" / "settings.json", settings)
    editor = Editor("distrust_once", "reject_once", "trust_always", "trust_always")
    # 1. Not trusted (for now): the allow rule is not used, the command is asked.
    run = await run_trusted_line(agent_env, acp_schema, workspace, fake_api, editor)
    trust, command = run["asked"]
    assert trust["toolCall"]["toolCallId"].startswith("trust_")
    assert (
        "allow rule: Bash(echo trusted-rule) (.claude/settings.json)"
        in trust["toolCall"]["rawInput"]["enables"]
    )
    assert "Read(./.env)" not in str(trust["toolCall"]["rawInput"])  # a deny needs no trust
    assert command["toolCall"]["rawInput"] == {"command": TRUSTED_LINE}
    assert run["record"]["toolCallsDenied"] == 1
    assert "left off: allow rule: Bash(echo trusted-rule)" in run["status"]
    # 2. "Not now" was not remembered: asked again; trusted for good, the rule runs it unasked.
    run = await run_trusted_line(agent_env, acp_schema, workspace, fake_api, editor)
    assert [q["toolCall"]["toolCallId"][:6] for q in run["asked"]] == ["trust_"]
    assert run["record"]["toolCallsDenied"] == 0 and "trusted (remembered)" in run["status"]
    # 3. Remembered: no question at all.
    run = await run_trusted_line(agent_env, acp_schema, workspace, fake_api, editor)
    assert run["asked"] == [] and run["record"]["toolCallsDenied"] == 0
    # 4. The project's settings changed: asked again.
    settings["permissions"]["allow"].append("Bash(curl *)")
    project.write_text(json.dumps(settings))
    run = await run_trusted_line(agent_env, acp_schema, workspace, fake_api, editor)
    [again] = run["asked"]
    assert "allow rule: Bash(curl *) (.claude/settings.json)" in again["toolCall"]["rawInput"]["enables"]


@pytest.mark.model_free
async def test_default_mode_and_disabled_bypass_come_from_the_settings(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path
) -> None:
    workspace = claude_repo(tmp_path)
    home = Path(agent_env["HOME"])
    user = {"permissions": {"defaultMode": "acceptEdits", "disableBypassPermissionsMode": "disable"}}
    write_settings(home / ".claude" / "settings.json", user)
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        answer = await agent.request("session/new", {"cwd": str(workspace), "mcpServers": []})
        modes = answer["result"]["modes"]
        assert modes["currentModeId"] == "acceptEdits"
        assert [m["id"] for m in modes["availableModes"]] == ["default", "acceptEdits", "plan", "dontAsk"]
        session = answer["result"]["sessionId"]
        refused = await agent.request(
            "session/set_mode", {"sessionId": session, "modeId": "bypassPermissions"}
        )
        assert refused["error"]["code"] == -32602
        # A project's defaultMode that asks less waits for trust; a stricter one applies at once.
        write_settings(workspace / ".claude" / "settings.json", {"permissions": {"defaultMode": "plan"}})
        assert (await agent.request("session/new", {"cwd": str(workspace), "mcpServers": []}))["result"][
            "modes"
        ]["currentModeId"] == "plan"


async def test_bare_denies_take_tools_off_the_list_and_web_fetch_domains_are_blocked(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    home = Path(agent_env["HOME"])
    rules = {
        "deny": ["Bash", "WebSearch", "WebFetch(domain:evil.example)"],
        "ask": ["WebFetch(domain:*.ask.example)"],
    }
    write_settings(home / ".claude" / "settings.json", {"permissions": rules})
    fake_api.set_fallback(replies.text("ok"))
    async with AgentProcess.start(env={**agent_env, "ACP_AGENT_MODEL": SONNET}, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.prompt(session, "one")
        await agent.prompt(session, "two")
    first, second = fake_api.requests[-2:]
    assert first.body["tools"] == second.body["tools"]  # decided once: the cached prefix holds
    names = [t["name"] for t in first.body["tools"]]
    assert "run_command" not in names and "web_search" not in names and "read_file" in names
    assert "command_output" not in names and "stop_command" not in names  # nothing to read or stop
    [fetch] = [t for t in first.body["tools"] if t["name"] == "web_fetch"]
    assert fetch["blocked_domains"] == ["evil.example", "ask.example"]


@pytest.mark.model_free
async def test_bad_settings_files_are_skipped_with_warnings_and_the_session_goes_on(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path
) -> None:
    workspace = claude_repo(tmp_path)
    home = Path(agent_env["HOME"])
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "settings.json").write_text('{"permissions": {"deny": ["Read(./.env)",]}}')  # a comma
    bad = {
        "permissions": {
            "deny": "Bash(rm *)",
            "ask": ["Frobnicate(x)", 7, "Bash(git push *)"],
            "defaultMode": "yolo",
        }
    }
    write_settings(workspace / ".claude" / "settings.json", bad)
    write_settings(workspace / ".claude" / "settings.local.json", [1, 2])  # type: ignore[arg-type]
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        status = await status_text(agent, session)
        before = len(chunks(agent, session))
        response = await agent.prompt(session, "/permissions")
        listing = "".join(c["content"]["text"] for c in chunks(agent, session)[before:])
    assert turn_record(response)["modelRequests"] == 0
    for warning in (
        "~/.claude/settings.json: skipped (not valid JSON",
        ".claude/settings.json: permissions.deny skipped (must be a list)",
        "ask rule 'Frobnicate(x)' skipped: Frobnicate is no tool of this agent",
        "ask rule '7' is not a string",
        "permissions.defaultMode 'yolo' is not a mode here",
        ".claude/settings.local.json: skipped (not a JSON object)",
    ):
        assert warning in status and warning in listing, warning
    assert "ask:\n  - Bash(git push *)  (.claude/settings.json)" in listing
    assert "Mode: default" in listing


async def test_a_memory_import_outside_the_workspace_waits_for_trust(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    workspace = claude_repo(tmp_path)
    outside = tmp_path / "outside" / "notes.md"
    outside.parent.mkdir()
    outside.write_text("OUTSIDE NOTES TEXT\n")
    (workspace / "CLAUDE.md").write_text(f"Team memory.\n\n@{outside}\n")
    fake_api.set_fallback(replies.text("ok"))
    for answer, read in (("distrust_once", False), ("trust_once", True)):
        editor = Editor(answer)
        async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
            await agent.initialize()
            await agent.prompt(await agent.new_session(workspace), "hello")
        [question] = editor.asked
        enables = question["toolCall"]["rawInput"]["enables"]
        assert enables == [f"import outside the workspace: {outside} (memory files)"]
        system = "".join(b["text"] for b in fake_api.requests[-1].body["system"])
        assert "Team memory." in system and ("OUTSIDE NOTES TEXT" in system) is read
