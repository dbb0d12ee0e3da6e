"""What changes under a rewind (issue 41 item 2, issue 43 item 4): a directory a background command
swapped for a link after its turn ended is never written through, and a file changed while the
rewind's question is open is left as it is, both named as conflicts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.client import allow
from tests.support.sandbox import require_bwrap
from tests.support.waits import wait_until
from tests.wire.test_rewind import notices

KEY = "ssh-ed25519 AAAAC3Nza the repository's key\n"


def swapper(outside: Path) -> str:
    """A background command that waits for the test's `go`, then swaps `d` for a link to
    `outside` (no turn runs then: no snapshot sees it), and runs on."""
    return f"while [ ! -e go ]; do sleep 0.05; done; mv d d.old && ln -s {outside} d; exec sleep 60"


async def test_a_rewind_never_writes_through_a_link_planted_between_turns(
    agent: AgentProcess, session: str, workspace: Path, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    require_bwrap()  # the commands run sandboxed, as in the attack: the sandbox allows the link
    agent.on_request = allow
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "d").mkdir()
    (workspace / "d" / "authorized_keys").write_text(KEY)
    fake_api.script(
        replies.tool_use("run_command", {"command": "rm d/authorized_keys"}),
        replies.tool_use("run_command", {"command": swapper(outside), "background": True}),
        replies.text("Removed it, and started a watcher."),
    )
    response = await agent.prompt(session, "first prompt")
    assert response["result"]["stopReason"] == "end_turn"
    (workspace / "go").write_text("")  # the swap happens now, between turns
    await wait_until(lambda: (workspace / "d").is_symlink(), "the background command's link")

    answer = await agent.request("_session/rewind", {"sessionId": session, "promptIndex": 0})
    assert answer["result"]["conflicts"] == [str(workspace.resolve() / "d" / "authorized_keys")]
    assert answer["result"]["restored"] == []
    assert list(outside.iterdir()) == []  # not the key, not a temporary file
    assert not (workspace / "d.old" / "authorized_keys").exists()


async def test_a_file_changed_while_the_question_is_open_is_left_and_named(
    agent: AgentProcess, session: str, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    """The put-back looks at each file once more, just before it writes: the plan (and its
    question) saw what the turn left, the user has edited it since."""
    target = workspace / "a.txt"
    target.write_text("one\n")
    asked: list[str] = []

    async def editor(method: str, params: Any) -> Any:
        if method == "session/request_permission" and params["toolCall"]["toolCallId"].startswith("rewind_"):
            asked.append(params["toolCall"]["title"])
            target.write_text("the user's edit, made while asked\n")
        return await allow(method, params)

    agent.on_request = editor
    fake_api.script(
        replies.tool_use("edit_file", {"path": "a.txt", "old_string": "one", "new_string": "two"}),
        replies.text("Edited."),
    )
    await agent.prompt(session, "first prompt: edit a.txt")
    assert target.read_text() == "two\n"
    rewound = await agent.prompt(session, "/rewind 1")
    assert rewound["result"]["stopReason"] == "end_turn"
    assert asked == ["Rewind to before prompt 1: restore 1 file(s)"]
    assert target.read_text() == "the user's edit, made while asked\n"
    said = notices(agent, session)
    assert "Not restored (changed since by someone else, or no snapshot left): a.txt." in said
