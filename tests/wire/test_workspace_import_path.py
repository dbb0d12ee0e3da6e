"""The workspace an editor opens stays off the agent's import path (`process/import_path.py`).

`python -m acp_agent` puts its working directory first on `sys.path`, and an editor starts the agent
in the repository it opened. Here that repository holds modules named like what the agent imports at
start (`structlog`), in the warm-up (`httpcore2`) and after the first answer (`regex`, `pathspec`);
each writes a mark if it is ever imported. A session with one prompt runs through, and none is.
What `-m` imports before the agent runs (`reprlib`, for `runpy`) only `-P` keeps out: the command
lines the agent gives out carry it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_agent.harness.script import DEFAULT_AGENT
from acp_agent.session.auth.methods import login_command
from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess

PLANTED = ("structlog", "httpcore2", "regex", "pathspec", "argparse")
"""Imported by the agent before `initialize` is answered, by the warm-up, and once the API answered."""


def plant(workspace: Path, names: tuple[str, ...] = PLANTED) -> None:
    for name in names:
        (workspace / f"{name}.py").write_text(
            f"import pathlib\npathlib.Path(__file__).with_name('{name}.imported').write_text('x')\n",
            encoding="utf-8",
        )


async def test_modules_in_the_workspace_are_never_imported(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    plant(workspace)
    fake_api.script(replies.text("Hello there."))
    async with AgentProcess.start(env=agent_env, schema=acp_schema, cwd=workspace) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "hi")
        assert response["result"]["stopReason"] == "end_turn", response
    assert sorted(p.name for p in workspace.glob("*.imported")) == []


async def test_the_command_lines_the_agent_gives_out_import_nothing_from_the_workspace(
    agent_env: dict[str, str], acp_schema: Any, workspace: Path, fake_api: FakeMessagesAPI
) -> None:
    assert login_command()[:3] == [DEFAULT_AGENT[0], "-P", "-m"] and DEFAULT_AGENT[1] == "-P"
    plant(workspace, (*PLANTED, "reprlib"))  # `runpy` imports it before `__main__` runs
    fake_api.script(replies.text("Hello there."))
    async with AgentProcess.start(
        command=DEFAULT_AGENT, env=agent_env, schema=acp_schema, cwd=workspace
    ) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        response = await agent.prompt(session, "hi")
        assert response["result"]["stopReason"] == "end_turn", response
    assert sorted(p.name for p in workspace.glob("*.imported")) == []
