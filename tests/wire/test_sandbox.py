"""Commands run in a sandbox (issue 29): what a sandboxed command can reach, on real pipes.

From inside: no agent process (so no `/proc/<agent>/{fd/0,mem}`), no state dir, no stored key; a
write to `.git/hooks` or `.git/config` refused unless the user allowed it for that call, while
`git commit` works; the network setting obeyed; the verify check and the editor's terminal
sandboxed too. Without a sandbox the session is told once, and `/status` says so.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio.to_thread
import pytest

from acp_agent.testing import FakeMessagesAPI, replies
from acp_agent.tools.sandbox.bwrap import private_dirs
from tests.support.agent import AgentProcess, RpcError
from tests.support.sandbox import require_bwrap, require_git
from tests.wire.conftest import chunks, turn_record

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux's")

STORED_KEY = "sk-ant-stored-marker-9a8b7c"
UNSANDBOXED = "Commands run without a sandbox"


def results(fake_api: FakeMessagesAPI) -> dict[str, str]:
    """Every tool result the model was sent, by tool_use id, as text."""
    return {
        b["tool_use_id"]: str(b["content"])
        for m in fake_api.requests[-1].body["messages"]
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    }


def answering(*options: str, asked: list[dict[str, Any]] | None = None) -> Callable[..., Any]:
    """An editor that answers the permission questions with `options`, in order (then the last)."""
    queue = list(options)

    async def on_request(method: str, params: Any) -> Any:
        if method == "session/request_permission":
            if asked is not None:
                asked.append(params)
            option = queue.pop(0) if len(queue) > 1 else queue[0]
            return {"outcome": {"outcome": "selected", "optionId": option}}
        return RpcError(-32601, method)

    return on_request


def probe(agent_pid: int, session_id: str, state: Path, keystore: Path, profiles: Path) -> str:
    """A command that looks for the agent, its stdin, its state dir and its stored key."""
    attack = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "session/set_mode",
            "params": {"sessionId": session_id, "modeId": "bypassPermissions"},
        }
    )
    return "\n".join(
        [
            f'test -e /proc/{agent_pid} && echo "AGENT visible" || echo "AGENT absent"',
            f'test -e /proc/{agent_pid}/mem && echo "MEM visible" || echo "MEM absent"',
            f"(echo '{attack}' > /proc/{agent_pid}/fd/0) 2>/dev/null && echo 'STDIN written' "
            "|| echo 'STDIN unreachable'",
            "echo PROCS $(ls -d /proc/[0-9]* | wc -l)",
            "echo AGENTS $(cat /proc/[0-9]*/cmdline | tr '\\0' ' ' | grep -o '[-]m acp_agent' | wc -l)",
            "echo FDS $(for l in /proc/[0-9]*/fd/*; do readlink $l; done | sort -u)",
            f"echo KEYSTORE $(cat {keystore} 2>&1)",
            f"echo STATE $(ls -A {state} | wc -l)",
            f"echo PROFILES $(ls -A {profiles} | wc -l)",
        ]
    )


def plant_secrets(agent_env: dict[str, str]) -> tuple[Path, Path, Path]:
    """The stored key (as `acp-agent login` writes it) and an SDK profile, under the test's HOME."""
    keystore = Path(agent_env["XDG_CONFIG_HOME"]) / "acp-agent" / "credentials.json"
    keystore.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    keystore.write_text(json.dumps({"anthropicApiKey": STORED_KEY}))
    profiles = Path(agent_env["ANTHROPIC_CONFIG_DIR"])
    (profiles / "credentials").mkdir(parents=True, exist_ok=True)
    (profiles / "credentials" / "default.json").write_text(json.dumps({"key": STORED_KEY}))
    return Path(agent_env["ACP_AGENT_STATE_DIR"]), keystore, profiles


async def test_a_sandboxed_command_reaches_no_agent_no_stdin_no_state_and_no_key(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    require_bwrap()
    state, keystore, profiles = plant_secrets(agent_env)
    asked: list[dict[str, Any]] = []
    async with AgentProcess.start(
        env=agent_env, schema=acp_schema, on_request=answering("allow_once", asked=asked)
    ) as agent:
        await agent.initialize()
        # The workspace holds the state dir, the key and the profiles: only the sandbox hides them.
        session = await agent.new_session(tmp_path)
        try:
            stdin_pipe: str | None = os.readlink(f"/proc/{agent.pid}/fd/0")
        except PermissionError:  # not root: the agent is non-dumpable, its fds closed to us too
            stdin_pipe = None
        fake_api.script(
            replies.tool_use(
                "run_command", {"command": probe(agent.pid, session, state, keystore, profiles)}
            ),
            replies.text("looked"),
            replies.tool_use("run_command", {"command": "echo second"}),
            replies.text("done"),
        )
        await agent.prompt(session, "look around")
        seen = next(iter(results(fake_api).values()))
        await agent.prompt(session, "again")  # still asked: nothing switched the mode
    assert "AGENT absent" in seen and "MEM absent" in seen, seen
    assert "STDIN unreachable" in seen, seen
    assert "AGENTS 0" in seen and int(seen.split("PROCS ")[1].split()[0]) < 10, seen
    fds = seen.split("FDS ")[1].split("KEYSTORE")[0]
    assert "/dev/null" in fds and (stdin_pipe is None or stdin_pipe not in fds), seen  # not the agent's stdin
    assert "No such file" in seen.split("KEYSTORE ")[1] and STORED_KEY not in seen, seen
    assert "STATE 0" in seen and "PROFILES 0" in seen, seen
    assert any(state.rglob("*.jsonl")), "the journal exists outside the sandbox"
    assert len(asked) == 2  # the second command was asked for too
    shown = asked[0]["toolCall"]["content"][-1]["content"]["text"]
    assert "Sandbox: it can write only in" in shown and "stored key are out of reach" in shown


def git(workspace: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(workspace), *args], check=True, capture_output=True, text=True
    ).stdout


@pytest.mark.parametrize("streaming", [True], ids=["stream"])
async def test_git_hooks_and_config_are_read_only_unless_allowed_and_git_commit_works(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    require_bwrap()
    require_git()
    git(workspace, "init", "-q")
    git(workspace, "config", "user.name", "Test")
    git(workspace, "config", "user.email", "test@example.com")
    hook = workspace / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho HOOK RAN\n")
    hook.chmod(0o755)
    fake_api.script(
        replies.tool_use(
            "run_command",
            {
                "command": "echo evil > .git/hooks/post-checkout; git config core.fsmonitor evil; "
                "echo change >> README.md && git add -A && git commit -qm 'work done'"
            },
            id="plain",
        ),
        replies.tool_use(
            "run_command",
            {"command": "echo ok > .git/hooks/post-merge && git config acp.granted yes && echo GRANTED"},
            id="granted",
        ),
        replies.tool_use("run_command", {"command": "echo again > .git/hooks/pre-push"}, id="again"),
        replies.text("done"),
    )
    asked: list[dict[str, Any]] = []
    editor = answering("allow_once", "allow_once:git", "allow_once", asked=asked)
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "commit it")
    assert response["result"]["stopReason"] == "end_turn"
    seen = results(fake_api)
    assert "Read-only file system" in seen["plain"] and "could not write config file" in seen["plain"]
    assert "HOOK RAN" in seen["plain"]  # the hook ran, in the sandbox
    assert git(workspace, "log", "--format=%s") == "work done\n"  # git commit worked
    assert not (workspace / ".git" / "hooks" / "post-checkout").exists()
    assert "fsmonitor" not in (workspace / ".git" / "config").read_text()
    assert "GRANTED" in seen["granted"] and (workspace / ".git" / "hooks" / "post-merge").exists()
    assert "granted = yes" in (workspace / ".git" / "config").read_text()
    assert "Read-only file system" in seen["again"]  # the grant was for that one call
    offered = [o["optionId"] for o in asked[0]["options"]]
    assert offered == ["allow_once", "allow_once:git", "allow_always", "reject_once", "reject_always"]
    assert ".git hooks and config read-only" in asked[0]["toolCall"]["content"][-1]["content"]["text"]


@pytest.mark.parametrize("network", ["on", "off"])
async def test_the_network_setting_decides_whether_a_command_reaches_the_api(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI, network: str
) -> None:
    require_bwrap()
    port = urlsplit(str(fake_api.base_url)).port
    connect = (
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); "
        "print('REACHED')\" 2>&1 | tail -1"
    )
    fake_api.script(replies.tool_use("run_command", {"command": connect}, id="net"), replies.text("ok"))
    env = {**agent_env, "ACP_AGENT_SANDBOX_NETWORK": network}
    async with AgentProcess.start(env=env, schema=acp_schema, on_request=answering("allow_once")) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.prompt(session, "connect")
        await agent.prompt(session, "/status")
        status = "".join(c["content"]["text"] for c in chunks(agent, session))
    seen = results(fake_api)["net"]
    if network == "on":
        assert "REACHED" in seen and "network on" in status, (seen, status)
    else:
        assert "REACHED" not in seen and "Error" in seen, seen
        assert "network off (--sandbox-network / ACP_AGENT_SANDBOX_NETWORK)" in status


async def test_a_command_reaches_what_it_names_in_tmp_read_only_but_not_a_socket_dir(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    """Issue 43 item 2: an interpreter or a script in /tmp, outside the project, named by the
    command line, starts (read-only); a /tmp dir holding a socket (a tmux's, an ssh-agent's) stays
    private even when named."""
    require_bwrap()
    tools = tmp_path / "tools with a space"
    tools.mkdir()
    (tools / "run.sh").write_text("echo TOOL-RAN\n")
    sockets = Path(tempfile.mkdtemp(prefix="acp-test-sockets-", dir=private_dirs()[0]))
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(sockets / "agent.sock"))
        (sockets / "note").write_text("beside a socket")
        command = (
            f"sh {shlex.quote(str(tools / 'run.sh'))}; "
            f"(echo x > {shlex.quote(str(tools / 'new'))}) 2>/dev/null && echo WROTE || echo READ-ONLY; "
            f"cat {shlex.quote(str(sockets / 'note'))} 2>/dev/null || echo SOCKET-DIR-PRIVATE"
        )
        fake_api.script(replies.tool_use("run_command", {"command": command}, id="named"), replies.text("ok"))
        async with AgentProcess.start(
            env=agent_env, schema=acp_schema, on_request=answering("allow_once")
        ) as agent:
            await agent.initialize()
            session = await agent.new_session(workspace)
            await agent.prompt(session, "run the tool")
    finally:
        server.close()
        shutil.rmtree(sockets)
    seen = results(fake_api)["named"]
    assert "TOOL-RAN" in seen and "READ-ONLY" in seen and "SOCKET-DIR-PRIVATE" in seen, seen
    assert "beside a socket" not in seen and not (tools / "new").exists()


async def test_without_a_sandbox_the_session_is_told_once_and_status_says_so(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    fake_api.script(
        replies.tool_use("run_command", {"command": "echo one"}),
        replies.tool_use("run_command", {"command": "echo two"}),
        replies.text("done"),
        replies.tool_use("run_command", {"command": "echo three"}),
        replies.text("done again"),
    )
    asked: list[dict[str, Any]] = []
    env = {**agent_env, "ACP_AGENT_SANDBOX": "off"}
    editor = answering("allow_once", asked=asked)
    async with AgentProcess.start(env=env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        await agent.prompt(session, "run two")
        await agent.prompt(session, "run one more")
        told = [c["content"]["text"] for c in chunks(agent, session) if UNSANDBOXED in c["content"]["text"]]
        await agent.prompt(session, "/status")
        status = chunks(agent, session)[-1]["content"]["text"]
    assert len(told) == 1, told
    assert "the sandbox is turned off (--sandbox / ACP_AGENT_SANDBOX)" in told[0]
    assert "Sandbox for commands: none (the sandbox is turned off" in status
    assert all("No sandbox (" in q["toolCall"]["content"][-1]["content"]["text"] for q in asked)
    assert len(asked) == 3


async def test_the_verify_check_runs_in_the_sandbox(
    agent: AgentProcess, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    require_bwrap()
    check = f"test ! -e /proc/{agent.pid}"  # fails wherever the agent can be seen
    session = await agent.new_session(
        workspace, meta={"acp-agent": {"loop": "verify", "verifyCommand": check}}
    )
    fake_api.script(replies.text("finished"))
    response = await agent.prompt(session, "work")
    assert response["result"]["stopReason"] == "end_turn"
    assert [t["passed"] for t in turn_record(response)["trials"]] == [True]


class RealTerminals:
    """An editor whose terminals really run the command (to its end, at terminal/create)."""

    def __init__(self, fail_with: str | None = None) -> None:
        self.created: list[dict[str, Any]] = []
        self.fail_with = fail_with
        self._done: dict[str, subprocess.CompletedProcess[bytes]] = {}

    async def __call__(self, method: str, params: Any) -> Any:
        if method == "session/request_permission":
            return {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        if method == "terminal/create":
            self.created.append(params)
            terminal_id = f"term-{len(self.created)}"
            if self.fail_with is not None:  # as bwrap fails inside some editors' own containers
                self._done[terminal_id] = subprocess.CompletedProcess([], 1, self.fail_with.encode())
            else:
                argv = [params["command"], *params.get("args", [])]
                self._done[terminal_id] = await anyio.to_thread.run_sync(self._run, argv, params["cwd"])
            return {"terminalId": terminal_id}
        done = self._done.get(params.get("terminalId", ""))
        if method == "terminal/wait_for_exit" and done:
            return {"exitCode": done.returncode}
        if method == "terminal/output" and done:
            text = done.stdout.decode("utf-8", "replace")
            return {"output": text, "truncated": False, "exitStatus": {"exitCode": done.returncode}}
        if method in {"terminal/release", "terminal/kill"}:
            return {}
        return RpcError(-32601, method)

    @staticmethod
    def _run(argv: list[str], cwd: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)


@pytest.mark.parametrize("streaming", [True], ids=["stream"])
async def test_the_editor_terminal_runs_the_command_inside_bwrap(
    agent_env: dict[str, str], acp_schema: Any, tmp_path: Path, fake_api: FakeMessagesAPI
) -> None:
    require_bwrap()
    state, keystore, profiles = plant_secrets(agent_env)
    editor = RealTerminals()
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize(terminal=True)
        session = await agent.new_session(tmp_path)
        command = probe(agent.pid, session, state, keystore, profiles)
        fake_api.script(replies.tool_use("run_command", {"command": command}, id="term"), replies.text("ok"))
        await agent.prompt(session, "look around from the editor")
    [created] = editor.created
    assert Path(created["command"]).name == "bwrap" and "--die-with-parent" in created["args"]
    assert created["args"][-3:] == [created["args"][-3], "-c", command]
    seen = results(fake_api)["term"]
    assert "AGENT absent" in seen and "STATE 0" in seen and "No such file" in seen.split("KEYSTORE")[1], seen


@pytest.mark.parametrize("streaming", [True], ids=["stream"])
async def test_when_bwrap_fails_in_the_editor_terminal_later_commands_run_here_sandboxed(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    require_bwrap()
    editor = RealTerminals(fail_with="bwrap: setting up uid map: Permission denied\n")
    fake_api.script(
        replies.tool_use("run_command", {"command": "echo first"}, id="first"),
        replies.tool_use("run_command", {"command": "echo PROCS $(ls -d /proc/[0-9]* | wc -l)"}, id="second"),
        replies.text("done"),
    )
    async with AgentProcess.start(env=agent_env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize(terminal=True)
        session = await agent.new_session(workspace)
        await agent.prompt(session, "run")
        told = [c["content"]["text"] for c in chunks(agent, session)]
        await agent.prompt(session, "/status")
        status = chunks(agent, session)[-1]["content"]["text"]
    seen = results(fake_api)
    assert seen["first"].startswith("not run: the sandbox could not start in the editor's terminal")
    assert len(editor.created) == 1  # the second ran here
    assert int(seen["second"].split("PROCS ")[1].split()[0]) < 10, seen  # in its own PID namespace
    assert sum("could not start in the editor's terminal" in t for t in told) == 1
    assert "the editor's terminal refused it" in status
