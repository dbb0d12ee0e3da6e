"""The workspace an editor opens is never on the agent's import path (`process/import_path.py`).

`python -m acp_agent` puts its working directory first on `sys.path`, and an editor starts the agent
in the repository it opened. Here that repository holds modules named like what the agent imports at
start (`structlog`), in the warm-up (`httpcore2`) and after the first answer (`regex`, `pathspec`);
each writes a mark if it is ever imported. A session with one prompt runs through, and none is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess

PLANTED = ("structlog", "httpcore2", "regex", "pathspec", "argparse")
"""Imported by the agent before `initialize` is answered, by the warm-up, and once the API answered."""


def plant(workspace: Path) -> None:
    for name in PLANTED:
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
