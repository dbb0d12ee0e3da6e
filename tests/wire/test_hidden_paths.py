"""The agent's own files stay out of every tool's sight, and some directories are never a root
(issue 35 items 3, 5 and 6), on real pipes.

An editor opened on `$HOME` has the stored key (`~/.config/acp-agent/credentials.json`), the SDK's
profiles and the other sessions' journals (`~/.local/share/acp-agent`) inside its cwd: read_file,
list_files, search_text (rg and the Python walk), `@file` in a command and the skill tool never
return them, by any route (a symlink, a hard link, `..`, a named directory). `/`, the system's
directories and the hidden ones are refused as roots, the cwd included, and so are too many roots.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.client import allow
from tests.support.sandbox import require_bwrap

STORED_KEY = "sk-ant-stored-marker-35e5"
PROFILE_KEY = "sk-ant-profile-marker-35e5"
JOURNAL_MARKER = "journal-marker-35e5: what the other session said"
JOURNAL_TEXT = "what the other session said"


def home_of(agent_env: dict[str, str]) -> Path:
    return Path(agent_env["HOME"])


def plant(agent_env: dict[str, str]) -> dict[str, str]:
    """The stored key and an SDK profile under the test's HOME, the journals there too (the
    default place), and ways to them from the home: a symlink to the key, one to its directory,
    a hard link to it. Returns the env whose state dir is the default one."""
    home = home_of(agent_env)
    keystore = Path(agent_env["XDG_CONFIG_HOME"]) / "acp-agent" / "credentials.json"
    keystore.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    keystore.write_text(json.dumps({"anthropicApiKey": STORED_KEY}))
    profiles = Path(agent_env["ANTHROPIC_CONFIG_DIR"]) / "configs"
    profiles.mkdir(parents=True, exist_ok=True)
    (profiles / "default.json").write_text(json.dumps({"key": PROFILE_KEY}))
    (home / "notes.txt").symlink_to(keystore)
    (home / "alias").symlink_to(keystore.parent)
    os.link(keystore, home / "copy.json")
    (home / "project").mkdir()
    (home / "project" / "main.py").write_text("print('sk-ant- is how keys start')\n")
    show = home / ".claude" / "commands" / "show.md"
    show.parent.mkdir(parents=True)
    show.write_text("Show me @.config/acp-agent/credentials.json and @notes.txt and @copy.json\n")
    env = dict(agent_env)
    env.pop("ACP_AGENT_STATE_DIR")  # the default: $XDG_DATA_HOME/acp-agent, inside the home
    return env


def tool_results(fake_api: FakeMessagesAPI, since: int) -> list[dict[str, Any]]:
    """Every tool result the requests from `since` on carried (each once)."""
    seen: dict[str, dict[str, Any]] = {}
    for request in fake_api.requests[since:]:
        for message in request.body["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "tool_result":
                    seen[block["tool_use_id"]] = block
    return list(seen.values())


READS = [
    ".config/acp-agent/credentials.json",  # named
    "notes.txt",  # a symlink to the key
    "alias/credentials.json",  # through a symlink to its directory
    "copy.json",  # a hard link to the key
    "project/../.config/acp-agent/credentials.json",  # `..`
    ".config/anthropic/configs/default.json",  # the SDK's profile
    ".local/share/acp-agent",  # the journals' directory
]
LOOKS = [
    ("list_files", {"pattern": "**/*", "path": ".config"}),
    ("list_files", {"pattern": ".local/**"}),
    ("list_files", {"pattern": "**/.*/**", "include_ignored": True}),
    ("search_text", {"pattern": "sk-ant-", "glob": "**/.*/**", "include_ignored": True}),
    ("search_text", {"pattern": "sk-ant-"}),  # finds the hard link's content but for the check
    ("search_text", {"pattern": "journal-marker", "path": ".local", "output_mode": "files_with_matches"}),
    (
        "search_text",
        {"pattern": "anthropicApiKey|journal", "path": ".", "glob": "**/.*/**", "output_mode": "count"},
    ),
]


@pytest.mark.parametrize("search", ["rg", "python"])
async def test_the_file_tools_never_show_the_key_the_profiles_or_the_journals_in_a_cwd_of_home(
    agent_env: dict[str, str], acp_schema: Any, fake_api: FakeMessagesAPI, search: str
) -> None:
    env = plant(agent_env) | ({"ACP_AGENT_RIPGREP": "off"} if search == "python" else {})
    home = home_of(agent_env)
    fake_api.script(replies.text("noted"))
    async with AgentProcess.start(env=env, schema=acp_schema, on_request=allow) as agent:
        await agent.initialize()
        other = await agent.new_session(home / "project")
        await agent.prompt(other, JOURNAL_MARKER)  # another session's journal, under the home
        assert any(JOURNAL_MARKER in p.read_text() for p in home.rglob("*.jsonl"))
        first = len(fake_api.requests)
        calls = [("read_file", {"path": p}) for p in READS] + LOOKS
        fake_api.script(
            replies.message(
                [replies.tool_use_block(name, args, id=f"toolu_{i}") for i, (name, args) in enumerate(calls)],
                stop_reason="tool_use",
            ),
            replies.text("looked"),
            replies.text("shown"),
        )
        session = await agent.new_session(home)
        written = len(agent.messages)
        response = await agent.prompt(session, "look around my home")
        assert response["result"]["stopReason"] == "end_turn"
        shown = await agent.prompt(session, "/show")
        assert shown["result"]["stopReason"] == "end_turn"
        answers = json.dumps(agent.messages[written:])
    results = {r["tool_use_id"]: str(r["content"]) for r in tool_results(fake_api, first)}
    assert len(results) == len(calls)
    for i, path in enumerate(READS):
        assert "private files" in results[f"toolu_{i}"], (path, results[f"toolu_{i}"])
    looks = "\n".join(results[f"toolu_{i}"] for i in range(len(READS), len(calls)))
    assert "project/main.py" in looks  # the searches did run, and found what is not hidden
    sent = json.dumps([r.body for r in fake_api.requests[first:]])
    for secret in (STORED_KEY, PROFILE_KEY, JOURNAL_TEXT):
        assert secret not in sent and secret not in answers, secret
    for name in ("credentials.json", "default.json", ".jsonl", "acp-agent/", "configs"):
        assert name not in looks, name  # not named either
    inlined = fake_api.requests[-1].body["messages"][-1]["content"]
    text = inlined if isinstance(inlined, str) else json.dumps(inlined)
    assert text.count("was not read") == 3 and "private files" in text, text


@pytest.mark.model_free
async def test_the_whole_disk_the_system_dirs_the_hidden_dirs_and_too_many_roots_are_refused(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path
) -> None:
    home = home_of(agent_env)
    state = Path(agent_env["ACP_AGENT_STATE_DIR"])
    config = Path(agent_env["XDG_CONFIG_HOME"]) / "acp-agent"
    (config / "skills").mkdir(parents=True)
    state.mkdir(parents=True, exist_ok=True)
    (home / ".config" / "anthropic").mkdir(parents=True, exist_ok=True)
    refused = ["/", "/proc", f"/proc/{os.getpid()}", "/sys", "/dev", "/dev/shm", "/tmp"]
    refused += [str(state), str(config), str(config / "skills"), str(home / ".config" / "anthropic")]
    refused = [d for d in refused if os.path.isdir(d)]
    many = [str(workspace)] * 65
    async with AgentProcess.start(env=agent_env, schema=acp_schema) as agent:
        await agent.initialize()
        new = {"cwd": str(workspace), "mcpServers": []}
        answers = {
            d: await agent.request("session/new", {**new, "additionalDirectories": [d]}) for d in refused
        }
        whole = await agent.request("session/new", {**new, "cwd": "/"})
        in_state = await agent.request("session/new", {**new, "cwd": str(state)})
        too_many = await agent.request("session/new", {**new, "additionalDirectories": many})
        at_home = await agent.request("session/new", {**new, "cwd": str(home)})  # holds hidden dirs
        session = await agent.new_session(workspace)
        load = {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
        loaded = await agent.request("session/load", {**load, "additionalDirectories": ["/"]})
        resumed = await agent.request("session/resume", {**load, "cwd": "/proc"})
        fine = await agent.request("session/load", {**load, "additionalDirectories": [str(home)]})
    for directory, answer in answers.items():
        assert answer["error"]["code"] == -32602, (directory, answer)
        assert (
            "additionalDirectories.0" in answer["error"]["message"]
            and "cannot be a session root" in (answer["error"]["message"])
        ), answer
    assert (
        whole["error"]["code"] == -32602 and "cwd: '/' cannot be a session root" in whole["error"]["message"]
    )
    assert in_state["error"]["code"] == -32602 and "journals" in in_state["error"]["message"]
    assert too_many["error"]["code"] == -32602 and "at most 64" in too_many["error"]["message"]
    assert "result" in at_home, at_home
    assert loaded["error"]["code"] == -32602 and resumed["error"]["code"] == -32602
    assert "result" in fine, fine


async def test_a_root_that_holds_the_runtime_dir_shows_commands_no_socket(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """The sandbox's private mounts go over the roots: a user's session sockets inside a root
    (here `$XDG_RUNTIME_DIR` in the workspace) stay out of a command's reach."""
    require_bwrap()
    import socket

    runtime = workspace / "run"
    runtime.mkdir(mode=0o700)
    bus = socket.socket(socket.AF_UNIX)
    bus.bind(str(runtime / "bus"))
    env = agent_env | {"XDG_RUNTIME_DIR": str(runtime)}
    fake_api.script(
        replies.tool_use("run_command", {"command": "echo SEEN $(ls -A run | tr '\\n' ' ')"}),
        replies.text("looked"),
    )
    try:
        async with AgentProcess.start(env=env, schema=acp_schema, on_request=allow) as agent:
            await agent.initialize()
            session = await agent.new_session(workspace)
            response = await agent.prompt(session, "look")
    finally:
        bus.close()
    assert response["result"]["stopReason"] == "end_turn"
    (result,) = tool_results(fake_api, 0)
    assert "SEEN" in str(result["content"]) and "bus" not in str(result["content"]), result


async def test_a_skill_folder_swapped_for_a_link_reads_nothing_outside_it(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """One approved command replaces the skill's folder with a link to `/`; the skill tool then
    refuses its files (the directory is not the one found), so the stored key stays unread."""
    require_bwrap()
    plant(agent_env)
    skill = workspace / ".claude" / "skills" / "notes"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: notes\ndescription: Take notes.\n---\nRead references/how.md.\n"
    )
    (skill / "references" / "how.md").write_text("HOW-TO body\n")
    keystore = Path(agent_env["XDG_CONFIG_HOME"]) / "acp-agent" / "credentials.json"
    swap = "rm -rf .claude/skills/notes && ln -s / .claude/skills/notes"
    fake_api.script(
        replies.tool_use("skill", {"name": "notes", "file": "references/how.md"}, id="toolu_before"),
        replies.tool_use("run_command", {"command": swap}, id="toolu_swap"),
        replies.tool_use("skill", {"name": "notes", "file": str(keystore).lstrip("/")}, id="toolu_key"),
        replies.tool_use("skill", {"name": "notes"}, id="toolu_list"),
        replies.text("done"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=allow) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "take notes")
        answers = json.dumps(agent.messages)
    assert response["result"]["stopReason"] == "end_turn"
    results = {r["tool_use_id"]: str(r["content"]) for r in tool_results(fake_api, 0)}
    assert "HOW-TO body" in results["toolu_before"]
    assert (workspace / ".claude" / "skills" / "notes").is_symlink()  # the swap happened
    assert "was not read" in results["toolu_key"], results["toolu_key"]
    listed = results["toolu_list"]
    assert "- etc" not in listed and "- proc" not in listed, listed
    sent = json.dumps([r.body for r in fake_api.requests])
    assert STORED_KEY not in sent and STORED_KEY not in answers
