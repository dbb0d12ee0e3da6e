"""A `Read(…)` deny covers every read the agent makes for the model (issue 41 item 4), not only the
file tools': a memory file's `@` import, a rule file, the memory below the cwd read when a file
under it is, a command file's `@file`, a skill's SKILL.md and its bundled files, an output style.
A denied file is left out, named in /status, and the session goes on."""

from __future__ import annotations

import json
from pathlib import Path

from acp_agent.testing import FakeMessagesAPI, replies
from tests.support.agent import AgentProcess
from tests.support.conventions import write_file
from tests.wire.conftest import chunks
from tests.wire.test_conventions import announced

DENY = [
    "Read(./.env)",
    "Read(./secret/**)",
    "Read(./pub/CLAUDE.local.md)",
    "Read(./.claude/skills/private/**)",
    "Read(./.claude/skills/open/key.txt)",
    "Read(./.claude/commands/private.md)",
    "Read(./.claude/output-styles/terse.md)",
]
SECRETS = ("ENV_ALPHA", "SECRET_NOTES", "LOCAL_NESTED", "PRIVATE_SKILL", "SKILL_KEY", "PRIVATE_COMMAND")
SECRETS += ("TERSE_STYLE",)
"""Words only denied files hold: none may reach a request."""


def denied_repo(repo: Path) -> Path:
    """A repository whose settings deny reading some files its memory, commands and skills name."""
    (repo / ".git").mkdir(parents=True)
    settings = {"permissions": {"deny": DENY}, "outputStyle": "terse"}
    write_file(repo / ".claude" / "settings.json", json.dumps(settings))
    write_file(repo / ".claude" / "output-styles" / "terse.md", "---\nname: terse\n---\nTERSE_STYLE\n")
    write_file(repo / ".env", "ENV_ALPHA=1\n")
    write_file(repo / "secret" / "notes.md", "SECRET_NOTES\n")
    write_file(repo / "CLAUDE.md", "ROOT_MEMORY\n@.env\n@secret/notes.md\n")
    write_file(repo / ".claude" / "rules" / "always.md", "ALWAYS_RULE\n@.env\n")
    scoped = '---\npaths:\n  - "pub/**"\n---\nSCOPED_RULE\n@../../.env\n'
    write_file(repo / ".claude" / "rules" / "pub.md", scoped)
    write_file(repo / "pub" / "CLAUDE.md", "NESTED_PUB\n@../secret/notes.md\n")
    write_file(repo / "pub" / "CLAUDE.local.md", "LOCAL_NESTED\n")
    write_file(repo / "pub" / "x.py", "X = 1\n")
    write_file(repo / ".claude" / "commands" / "show.md", "SHOW_COMMAND: look at @.env\n")
    write_file(repo / ".claude" / "commands" / "private.md", "PRIVATE_COMMAND\n")
    write_file(
        repo / ".claude" / "skills" / "private" / "SKILL.md",
        "---\nname: private\ndescription: PRIVATE_SKILL description\n---\nPRIVATE_SKILL body\n",
    )
    write_file(
        repo / ".claude" / "skills" / "open" / "SKILL.md",
        "---\nname: open\ndescription: An open skill\n---\nOPEN_SKILL body\n",
    )
    write_file(repo / ".claude" / "skills" / "open" / "key.txt", "SKILL_KEY\n")
    return repo


def everything_sent(fake_api: FakeMessagesAPI) -> str:
    return "\n".join(json.dumps(r.body) for r in fake_api.requests)


async def test_a_read_deny_covers_memory_imports_rules_nested_memory_commands_and_skills(
    agent: AgentProcess, fake_api: FakeMessagesAPI, tmp_path: Path
) -> None:
    repo = denied_repo(tmp_path / "repo")
    session = await agent.new_session(repo)
    fake_api.script(
        replies.tool_use("read_file", {"path": "pub/x.py"}),
        replies.tool_use("skill", {"name": "open"}),
        replies.tool_use("skill", {"name": "open", "file": "key.txt"}),
        replies.text("read them"),
        replies.text("shown"),
    )
    first = await agent.prompt(session, "read pub/x.py and load the open skill")
    assert first["result"]["stopReason"] == "end_turn"
    second = await agent.prompt(session, "/show")
    assert second["result"]["stopReason"] == "end_turn"
    sent = everything_sent(fake_api)
    for word in ("ROOT_MEMORY", "ALWAYS_RULE", "SCOPED_RULE", "NESTED_PUB", "OPEN_SKILL", "SHOW_COMMAND"):
        assert word in sent, word  # read: the files beside the denied ones
    assert [word for word in SECRETS if word in sent] == []
    names = set(await announced(agent, session))
    assert "show" in names and "open" in names
    assert "private" not in names  # neither the denied command nor the denied skill

    await agent.prompt(session, "/status")
    status = "".join(c["content"]["text"] for c in chunks(agent, session))
    assert f"{repo / '.env'}" in status and "denied by .claude/settings.json: Read(./.env)" in status
