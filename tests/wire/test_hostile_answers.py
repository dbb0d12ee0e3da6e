"""Hostile answers from the client: a malformed permission answer never runs the tool and never
breaks the turn (issue 19, item 6)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess, RpcError

MALFORMED = [
    {"outcome": {"optionId": "allow_once"}},
    {"outcome": {"outcome": "bogus", "optionId": "allow_once"}},
    {"outcome": {"outcome": "selected", "optionId": ["allow_once"]}},
    {"outcome": {"outcome": "selected", "optionId": {"id": "allow_once"}}},
    {"outcome": {"outcome": "selected", "optionId": "allow_sometimes"}},
    {"outcome": "selected"},
    ["allow_once"],
    None,
]
VALID = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}


async def test_a_malformed_permission_answer_is_a_rejection(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    answers = [*MALFORMED, VALID]
    asked: list[Any] = []

    async def answer(method: str, params: Any) -> Any:
        if method != "session/request_permission":
            return RpcError(-32601, method)
        asked.append(params)
        return answers[len(asked) - 1]

    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=answer) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        for number in range(len(answers)):
            fake_api.script(
                replies.tool_use(
                    "run_command", {"command": f"echo ran > ran{number}.txt"}, id=f"toolu_{number}"
                ),
                replies.text("ok"),
            )
            response = await agent.prompt(session, f"case {number}")
            assert response["result"]["stopReason"] == "end_turn", (number, response)
            result = next(
                b
                for m in fake_api.requests[-1].body["messages"]
                for b in m["content"]
                if b.get("tool_use_id") == f"toolu_{number}"
            )
            allowed = number == len(MALFORMED)
            assert (workspace / f"ran{number}.txt").exists() is allowed, number
            assert bool(result.get("is_error")) is not allowed, (number, result)
            if not allowed:
                assert "not a valid choice" in result["content"], result
        log = agent.stderr_text()
    assert len(asked) == len(answers)
    assert log.count("permission.invalid_answer") == len(MALFORMED)


@pytest.mark.model_free
async def test_an_overlong_or_odd_session_id_is_invalid_params_and_logs_stay_small(
    agent: AgentProcess, workspace: Path
) -> None:
    huge = "a" * 5_000_000
    cases = {
        "session/prompt": {"sessionId": huge, "prompt": [{"type": "text", "text": "hi"}]},
        "session/load": {"sessionId": "b" * 256, "cwd": str(workspace), "mcpServers": []},
        "session/resume": {"sessionId": huge, "cwd": str(workspace)},
        "session/delete": {"sessionId": "sess_x/../!"},
        "session/close": {"sessionId": "sess_\u00e9"},
        "session/set_mode": {"sessionId": huge, "modeId": "default"},
    }
    before = len(agent.stderr_text())
    for method, params in cases.items():
        answer = await agent.request(method, params)
        assert answer["error"]["code"] == -32602, (method, str(answer)[:300])
        assert "sessionId" in answer["error"]["message"]
        assert len(str(answer)) < 2_000
    assert (await agent.request("session/delete", {"sessionId": "b" * 255}))["result"] == {}
    assert len(agent.stderr_text()) - before < 20_000


async def test_writes_that_make_tools_run_code_are_asked_in_accept_edits(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """The campaign's case: the user rejected a command, then the model wrote core.fsmonitor."""
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("[core]\n")
    (workspace / "cfg").symlink_to(workspace / ".git" / "config")
    asked: list[str] = []

    async def answer(method: str, params: Any) -> Any:
        if method != "session/request_permission":
            return RpcError(-32601, method)
        asked.append(params["toolCall"]["rawInput"]["path"])
        return {"outcome": {"outcome": "selected", "optionId": "reject_once"}}

    fsmonitor = "[core]\n\tfsmonitor = touch pwned\n"
    writes = [
        (".git/config", True),
        ("cfg", True),
        (".git/hooks/pre-commit", True),
        (".envrc", True),
        (".vscode/tasks.json", True),
        ("notes.md", False),
    ]
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=answer) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "acceptEdits"})
        for number, (path, _) in enumerate(writes):
            fake_api.script(
                replies.tool_use("write_file", {"path": path, "content": fsmonitor}), replies.text("ok")
            )
            response = await agent.prompt(session, f"write {number}")
            assert response["result"]["stopReason"] == "end_turn", response
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "bypassPermissions"})
        fake_api.script(
            replies.tool_use("write_file", {"path": ".envrc", "content": "x\n"}), replies.text("ok")
        )
        await agent.prompt(session, "in bypass mode")
    assert asked == [path for path, sensitive in writes if sensitive]
    assert (workspace / ".git" / "config").read_text() == "[core]\n"
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert (workspace / "notes.md").read_text() == fsmonitor  # acceptEdits: ordinary files unasked
    assert (workspace / ".envrc").read_text() == "x\n"  # bypassPermissions never asks


GIT_RUNS = [
    ".githooks/pre-commit",  # core.hooksPath, set in the real git dir's config
    "meta/realgit/config",  # .git is a file: gitdir: meta/realgit
    "meta/realgit/hooks/post-checkout",
    "meta/modules/lib/config",  # a submodule's git dir, named by vendor/lib/.git
    "innocent.txt",  # a hard link to the real config, written in place through the editor
    ".envrc.local",
    ".devcontainer.json",
    "team.code-workspace",
    ".claude/settings.json",
    ".helix/languages.toml",
    ".nvim.lua",
    "mise.toml",
    "lefthook.yml",
    ".npmrc",
]


def git_dir(path: Path, config: str) -> Path:
    """A git dir as `git init --separate-git-dir` leaves it."""
    for sub in ("hooks", "refs/heads", "objects"):
        (path / sub).mkdir(parents=True)
    (path / "HEAD").write_text("ref: refs/heads/main\n")
    (path / "config").write_text(config)
    return path


async def test_what_git_and_tools_really_run_is_asked_in_accept_edits(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """Issue 29 item 5: 18 of 84 such writes went unasked, matched by name only."""
    real = git_dir(workspace / "meta" / "realgit", "[core]\n\thooksPath = .githooks\n")
    (workspace / ".git").write_text("gitdir: meta/realgit\n")
    git_dir(workspace / "meta" / "modules" / "lib", "[core]\n")
    (workspace / "vendor" / "lib").mkdir(parents=True)
    (workspace / "vendor" / "lib" / ".git").write_text("gitdir: ../../meta/modules/lib\n")
    os.link(real / "config", workspace / "innocent.txt")
    asked: list[str] = []

    async def editor(method: str, params: Any) -> Any:
        if method == "session/request_permission":
            asked.append(params["toolCall"]["rawInput"]["path"])
            return {"outcome": {"outcome": "selected", "optionId": "reject_once"}}
        if method == "fs/read_text_file":
            return {"content": Path(params["path"]).read_text()}
        if method == "fs/write_text_file":  # in place, as editors save a buffer
            with open(params["path"], "r+" if os.path.exists(params["path"]) else "w") as f:
                f.truncate(0)
                f.write(params["content"])
            return {}
        return RpcError(-32601, method)

    writes = [*GIT_RUNS, "notes.md"]
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize(fs={"readTextFile": True, "writeTextFile": True})
        session = await agent.new_session(workspace)
        await agent.request("session/set_mode", {"sessionId": session, "modeId": "acceptEdits"})
        for number, path in enumerate(writes):
            fake_api.script(
                replies.tool_use("write_file", {"path": path, "content": "[core]\n\tfsmonitor = x\n"}),
                replies.text("ok"),
            )
            response = await agent.prompt(session, f"write {number}")
            assert response["result"]["stopReason"] == "end_turn", response
    assert asked == GIT_RUNS
    assert (real / "config").read_text() == "[core]\n\thooksPath = .githooks\n"
    assert (workspace / "notes.md").read_text() == "[core]\n\tfsmonitor = x\n"  # ordinary: unasked
