"""One decision for every caller (issue 44): the same call, put by each caller in each mode under
each set of rules, comes to the one outcome the rule engine gives it.

The callers: a prompt's tool call, a subagent's (`--subagent-tools all`), a command file's turn
(and one whose `allowed-tools` grants the call), a phase of the phased loop (a write in its
read-only plan phase, and plan → act, a "switch_mode" question: no hook sees it), a command
file's `@notes.txt` (a read_file call of its turn) and `/rewind 1` (the files it restores, an
edit; no hook sees it: it is no tool call). Each row runs
in a session of its own, one per mode, in one agent per caller and rule set; the rules are the
user's own settings (no trust question): none, a deny rule, an ask rule, or a PreToolUse hook
that denies. The oracle is `RuleEngine.decide` on the question the caller should put
(`tests/support/decisions.py`), in the engine's order (`permissions/engine.py`): deny rules and
a hook's deny, confinement, plan mode (and a read-only phase, and a subagent's change outside
acceptEdits and bypassPermissions), ask rules, the guarded files, bypassPermissions, allow rules
and grants, acceptEdits, then "looks only" or asked; dontAsk refuses what would be asked.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from acp_agent.claude_code.conventions.allowed_tools import read_allowed_tools
from acp_agent.permissions.question import PermissionQuestion
from acp_agent.testing import FakeMessagesAPI, replies, routes
from acp_agent.turn.strategies.phased import PLAN_ONLY
from tests.support.agent import AgentProcess
from tests.support.decisions import MODES, RULE_SETS, Editor, Outcome, expected, write_rules

pytestmark = pytest.mark.parametrize("streaming", [True], ids=["stream"])  # one path: decisions

WRITE = {"path": "notes.txt", "content": "new\n"}


@dataclass(frozen=True, slots=True)
class Row:
    """One session's run of a caller's call in `mode`: where, and what the agent did."""

    mode: str
    workspace: Path
    session: str
    tag: str


def told(fake_api: FakeMessagesAPI, call_id: str) -> str:
    """What the model was told of call `call_id`: its tool_result's text, in a later request."""
    for request in fake_api.requests:
        for message in request.body["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "tool_result" and block.get("tool_use_id") == call_id:
                    content = block["content"]
                    return content if isinstance(content, str) else "".join(b["text"] for b in content)
    raise AssertionError(f"no tool_result for {call_id}")


def write_outcome(row: Row, editor: Editor, fake_api: FakeMessagesAPI, call_id: str) -> Outcome:
    """What the write came to: asked, ran (the file changed, unasked) or refused (with what the
    model was told)."""
    asked = [q for q in editor.questions(row.session) if (q.get("rawInput") or {}).get("path") == "notes.txt"]
    if asked:
        return Outcome("asked")
    if (row.workspace / "notes.txt").read_text() == WRITE["content"]:
        return Outcome("ran")
    return Outcome("refused", told(fake_api, call_id))


def write_question(*, subagent: bool = False) -> PermissionQuestion:
    return PermissionQuestion("c", "write_file", "Write", "edit", "edit", dict(WRITE), subagent=subagent)


async def prompt_write(
    agent: AgentProcess, row: Row, editor: Editor, fake_api: FakeMessagesAPI
) -> dict[str, Outcome]:
    call_id = f"toolu_w_{row.tag}"
    fake_api.route(
        routes.first_prompt_has(row.tag),
        replies.tool_use("write_file", WRITE, id=call_id),
        otherwise=replies.text("done"),
    )
    await agent.prompt(row.session, f"{row.tag}: write the notes")
    return {"write": write_outcome(row, editor, fake_api, call_id)}


async def child_write(
    agent: AgentProcess, row: Row, editor: Editor, fake_api: FakeMessagesAPI
) -> dict[str, Outcome]:
    call_id = f"toolu_cw_{row.tag}"
    fake_api.route(
        routes.first_prompt_has(f"child {row.tag}"),
        replies.tool_use("write_file", WRITE, id=call_id),
        otherwise=replies.text("child done"),
    )
    fake_api.route(
        routes.first_prompt_has(f"{row.tag}: have"),
        replies.tool_use("task", {"description": "write", "prompt": f"child {row.tag}: write the notes"}),
        otherwise=replies.text("done"),
    )
    await agent.prompt(row.session, f"{row.tag}: have a subagent write the notes")
    return {"write": write_outcome(row, editor, fake_api, call_id)}


def command_file(granted: bool) -> Callable[[Path], None]:
    """The command `/notes`, in the workspace before its session opens (its commands are read then)."""

    def write(workspace: Path) -> None:
        command = workspace / ".claude" / "commands" / "notes.md"
        command.parent.mkdir(parents=True, exist_ok=True)
        head = "---\nallowed-tools: Write\n---\n" if granted else ""
        command.write_text(f"{head}Write the notes ($ARGUMENTS).\n")

    return write


async def command_write(
    agent: AgentProcess, row: Row, editor: Editor, fake_api: FakeMessagesAPI
) -> dict[str, Outcome]:
    call_id = f"toolu_cmd_{row.tag}"
    fake_api.route(
        routes.first_prompt_has(row.tag),
        replies.tool_use("write_file", WRITE, id=call_id),
        otherwise=replies.text("done"),
    )
    await agent.prompt(row.session, f"/notes {row.tag}")
    return {"write": write_outcome(row, editor, fake_api, call_id)}


async def phase_calls(
    agent: AgentProcess, row: Row, editor: Editor, fake_api: FakeMessagesAPI
) -> dict[str, Outcome]:
    """The phased loop: a write in the plan phase, then plan → act."""
    call_id = f"toolu_pw_{row.tag}"
    fake_api.route(
        routes.first_prompt_has(row.tag),
        replies.tool_use("write_file", WRITE, id=call_id),
        replies.tool_use("finish_phase", {"summary": "write the notes"}),
        otherwise=replies.text("acted"),
    )
    answer = await agent.prompt(row.session, f"{row.tag}: write the notes, phased")
    [transition, *_] = answer["result"]["_meta"]["acp-agent"]["turn"]["transitions"]
    switch: Outcome
    if any(q["kind"] == "switch_mode" for q in editor.questions(row.session)):
        switch = Outcome("asked")
    elif transition["reason"] == "approved_once":
        switch = Outcome("ran")
    else:
        assert transition["reason"] == "refused", transition
        [shown] = [
            u["update"]["content"][0]["content"]["text"]
            for u in agent.updates(row.session)
            if u["update"]["sessionUpdate"] == "tool_call_update"
            and u["update"]["toolCallId"].startswith("approve_")
            and u["update"].get("content")
        ]
        switch = Outcome("refused", shown)
    return {"plan-phase write": write_outcome(row, editor, fake_api, call_id), "plan → act": switch}


async def rewind_restore(
    agent: AgentProcess, row: Row, editor: Editor, fake_api: FakeMessagesAPI
) -> dict[str, Outcome]:
    """`/rewind 1` after a first prompt wrote a draft (in bypassPermissions, and no rule names the
    draft, so it did): the restore is an edit, put to the gate in the row's mode."""
    draft = row.workspace / "draft.txt"
    draft.write_text("old\n")
    await agent.request("session/set_mode", {"sessionId": row.session, "modeId": "bypassPermissions"})
    fake_api.route(
        routes.first_prompt_has(row.tag),
        replies.tool_use("write_file", {"path": "draft.txt", "content": "new\n"}),
        otherwise=replies.text("written"),
    )
    await agent.prompt(row.session, f"{row.tag}: write the draft")
    assert draft.read_text() == "new\n"
    await agent.request("session/set_mode", {"sessionId": row.session, "modeId": row.mode})
    said = len(agent.updates(row.session))
    await agent.prompt(row.session, "/rewind 1")
    if any(q["title"].startswith("Rewind") for q in editor.questions(row.session)):
        return {"restore": Outcome("asked")}
    if draft.read_text() == "old\n":
        return {"restore": Outcome("ran")}
    text = "".join(
        u["update"]["content"]["text"]
        for u in agent.updates(row.session)[said:]
        if u["update"]["sessionUpdate"] == "agent_message_chunk"
    )
    assert text.startswith("Not rewound: "), text
    return {"restore": Outcome("refused", text.removeprefix("Not rewound: "))}


def file_command(workspace: Path) -> None:
    """The command `/read`, whose text reads the notes with `@notes.txt`."""
    command = workspace / ".claude" / "commands" / "read.md"
    command.parent.mkdir(parents=True, exist_ok=True)
    command.write_text("Read the notes ($ARGUMENTS): @notes.txt\n")


async def file_read(
    agent: AgentProcess, row: Row, editor: Editor, fake_api: FakeMessagesAPI
) -> dict[str, Outcome]:
    """`@notes.txt` in a command file: a read_file call of the command's turn."""
    fake_api.route(routes.first_prompt_has(row.tag), otherwise=replies.text("read"))
    await agent.prompt(row.session, f"/read {row.tag}")
    if any((q.get("rawInput") or {}).get("path") == "notes.txt" for q in editor.questions(row.session)):
        return {"read": Outcome("asked")}
    [sent] = [r.body for r in fake_api.requests if row.tag in str(r.body["messages"][0]["content"])]
    prompt = sent["messages"][0]["content"][0]["text"]
    if '<file path="notes.txt">\nold\n</file>' in prompt:
        return {"read": Outcome("ran")}
    note = prompt.split("[@notes.txt was not read: ", 1)[1].rsplit("]", 1)[0]
    return {"read": Outcome("refused", note)}


def nothing(workspace: Path) -> None:
    return None


@dataclass(frozen=True, slots=True)
class Call:
    """One call a caller puts, as the engine should be asked it: the question, whether a
    PreToolUse hook sees it (a tool call; plan → act and a rewind are none), the grant it carries
    (`allowed-tools`) and the phase's read-only refusal."""

    question: PermissionQuestion
    hooked: bool = True
    grants: str = ""
    read_only: str | None = None


@dataclass(frozen=True, slots=True)
class Caller:
    """A caller: what its workspace holds before the session opens, the session's `_meta`, how it
    puts its calls, and each call as the engine should be asked it."""

    prepare: Callable[[Path], None]
    run: Callable[[AgentProcess, Row, Editor, FakeMessagesAPI], Awaitable[dict[str, Outcome]]]
    calls: dict[str, Call]
    meta: dict[str, Any] | None = None


SWITCH = PermissionQuestion("c", "finish_phase", "Approve", "switch_mode", "switch_mode", {})
REWIND = PermissionQuestion("c", "edit_file", "Rewind", "edit", "edit", {"path": "draft.txt"})
"""A rewind puts each file it restores as an edit of that file (`test_rewind.py` has the rules
on a restored path; here no rule names the draft)."""
READ = PermissionQuestion("c", "read_file", "Read", "read", "none", {"path": "notes.txt"})
CALLERS = {
    "a prompt's tool call": Caller(nothing, prompt_write, {"write": Call(write_question())}),
    "a subagent's tool call": Caller(nothing, child_write, {"write": Call(write_question(subagent=True))}),
    "a command turn's tool call": Caller(
        command_file(False), command_write, {"write": Call(write_question())}
    ),
    "a command turn's granted call": Caller(
        command_file(True), command_write, {"write": Call(write_question(), grants="Write")}
    ),
    "@file": Caller(file_command, file_read, {"read": Call(READ)}),
    "/rewind": Caller(nothing, rewind_restore, {"restore": Call(REWIND, hooked=False)}),
    "a phase": Caller(
        nothing,
        phase_calls,
        {
            "plan-phase write": Call(write_question(), read_only=PLAN_ONLY),
            "plan → act": Call(SWITCH, hooked=False),
        },
        {"acp-agent": {"loop": "phased"}},
    ),
}


@pytest.mark.parametrize("rules", list(RULE_SETS))
@pytest.mark.parametrize("caller", list(CALLERS))
async def test_every_caller_in_every_mode_meets_the_one_engine(
    caller: str,
    rules: str,
    agent_env: dict[str, str],
    acp_schema: Any,
    tmp_path: Path,
    fake_api: FakeMessagesAPI,
) -> None:
    called = CALLERS[caller]
    home = Path(agent_env["HOME"])
    write_rules(home, RULE_SETS[rules])
    editor = Editor()
    wrong: dict[str, str] = {}
    env = {**agent_env, "ACP_AGENT_SUBAGENT_TOOLS": "all"}
    async with AgentProcess.start(env=env, schema=acp_schema, on_request=editor) as agent:
        await agent.initialize()
        for mode in MODES:
            workspace = tmp_path / f"ws-{mode}"
            workspace.mkdir()
            (workspace / "notes.txt").write_text("old\n")
            called.prepare(workspace)
            session = await agent.new_session(workspace, called.meta)
            answer = await agent.request("session/set_mode", {"sessionId": session, "modeId": mode})
            assert "result" in answer, answer
            seen = await called.run(agent, Row(mode, workspace, session, f"row-{mode}-tag"), editor, fake_api)
            for label, call in called.calls.items():
                want = expected(
                    workspace,
                    home,
                    mode,
                    call.question,
                    hooked=call.hooked and rules == "a PreToolUse hook's deny",
                    granted=read_allowed_tools(call.grants) if call.grants else None,
                    read_only=call.read_only,
                )
                if seen[label] != want:
                    wrong[f"{mode}, {label}"] = f"got {seen[label]}, the engine says {want}"
    assert not wrong, f"{caller} under {rules}: {wrong}"
