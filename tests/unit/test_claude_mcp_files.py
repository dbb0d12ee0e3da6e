"""Claude Code's MCP files read as Claude Code reads them (issue 33 item 5): the scopes and which
wins, `${VAR}` expansion, the approvals and their trust caveats, and bad entries."""

from __future__ import annotations

from pathlib import Path

from acp_agent.claude_code.setup.mcp_files import read_claude_servers
from acp_agent.claude_code.setup.trust import ProjectTrust
from acp_agent.session.mcp_servers import SessionServers
from tests.unit.test_claude_setup import load, places, write

__all__ = ["places"]  # the fixture, used by name


def stdio(command: str, *args: str, **env: str) -> dict[str, object]:
    return {"command": command, "args": list(args), "env": env}


def test_scopes_local_then_nearest_project_then_user(places: dict[str, Path]) -> None:
    root, cwd, home = places["root"], places["cwd"], places["home"]
    write(cwd / ".mcp.json", {"mcpServers": {"a": stdio("near"), "b": stdio("near")}})
    write(root / ".mcp.json", {"mcpServers": {"a": stdio("root"), "c": stdio("root")}})
    state = {
        "mcpServers": {"b": stdio("user"), "d": stdio("user"), "e": stdio("user")},
        "projects": {str(cwd): {"mcpServers": {"e": stdio("local")}}},
    }
    write(home / ".claude.json", state)
    found = read_claude_servers(load(places), home=home, environ={})
    servers = {s.name: (s.scope, s.spec["command"], s.source) for s in found.servers}
    assert servers == {
        "e": ("local", "local", f"~/.claude.json (projects[{str(cwd)!r}])"),
        "a": ("project", "near", "pkg/.mcp.json"),
        "b": ("project", "near", "pkg/.mcp.json"),
        "c": ("project", "root", ".mcp.json"),
        "d": ("user", "user", "~/.claude.json"),
    }
    assert found.warnings == ()


def test_variables_are_expanded_with_defaults_and_an_unset_one_is_kept_and_named(
    places: dict[str, Path],
) -> None:
    write(places["home"] / ".claude" / "settings.json", {"env": {"FROM_SETTINGS": "s"}})
    entry = {
        "command": "${BIN:-npx}",
        "args": ["--token", "${TOKEN}", "${FROM_SETTINGS}"],
        "env": {"KEY": "${MISSING}", "URL": "${HOST:-localhost}:1"},
    }
    remote = {
        "type": "http",
        "url": "${API:-https://api.example.com}/mcp",
        "headers": {"A": "Bearer ${TOKEN}"},
    }
    write(places["root"] / ".mcp.json", {"mcpServers": {"local": entry, "remote": remote}})
    found = read_claude_servers(load(places), home=places["home"], environ={"TOKEN": "t0k", "HOST": "h"})
    by_name = {s.name: s.spec for s in found.servers}
    assert by_name["local"]["command"] == "npx"
    assert by_name["local"]["args"] == ["--token", "t0k", "s"]
    assert by_name["local"]["env"] == [
        {"name": "KEY", "value": "${MISSING}"},
        {"name": "URL", "value": "h:1"},
        {"name": "CLAUDE_PROJECT_DIR", "value": str(places["root"])},
    ]
    assert by_name["remote"]["url"] == "https://api.example.com/mcp"
    assert by_name["remote"]["headers"] == [{"name": "A", "value": "Bearer t0k"}]
    assert found.warnings == (".mcp.json: server 'local': ${MISSING} is not set (kept as written)",)


def test_approvals_only_from_the_users_own_files_skip_trust_and_a_disable_holds_from_any(
    places: dict[str, Path],
) -> None:
    root, home = places["root"], places["home"]
    servers = {name: stdio(name) for name in ("mine", "theirs", "off", "plain")}
    write(root / ".mcp.json", {"mcpServers": servers})
    write(home / ".claude" / "settings.json", {"enabledMcpjsonServers": ["mine"]})
    project = {"enabledMcpjsonServers": ["theirs"], "disabledMcpjsonServers": ["off"]}
    write(places["cwd"] / ".claude" / "settings.json", project)
    setup = load(places)
    found = {s.name: s for s in read_claude_servers(setup, home=home, environ={}).servers}
    assert found["mine"].trust_item is None  # the user's own word
    assert found["theirs"].trust_item is not None  # a repository cannot approve its own server
    assert found["plain"].trust_item is not None
    assert found["off"].disabled_by == "pkg/.claude/settings.json"
    write(home / ".claude" / "settings.json", {"enableAllProjectMcpServers": True})
    found = {s.name: s for s in read_claude_servers(load(places), home=home, environ={}).servers}
    assert all(s.trust_item is None for s in found.values())


def test_a_changed_entry_is_a_new_trust_item_and_the_editors_name_wins(places: dict[str, Path]) -> None:
    root, home = places["root"], places["home"]
    write(root / ".mcp.json", {"mcpServers": {"a": stdio("one"), "b": stdio("b")}})
    first = {s.name: s for s in read_claude_servers(load(places), home=home, environ={}).servers}
    write(root / ".mcp.json", {"mcpServers": {"a": stdio("one", "--evil"), "b": stdio("b")}})
    setup = load(places)
    claude = read_claude_servers(setup, home=home, environ={})
    second = {s.name: s for s in claude.servers}
    assert first["a"].trust_item != second["a"].trust_item
    assert first["b"].trust_item == second["b"].trust_item
    trust = ProjectTrust(root)
    plan = SessionServers.plan([{"name": "b", "command": "editor's"}], claude, trust)
    assert [(r.name, r.origin, r.state) for r in plan.rows] == [
        ("b", "editor", "starting"),
        ("a", "project: .mcp.json", "waiting"),
        ("b", "project: .mcp.json", "replaced"),
    ]
    assert trust.items == [second["a"].trust_item]  # a replaced server is never asked about


def test_bad_files_and_entries_are_skipped_with_warnings(places: dict[str, Path]) -> None:
    root, home = places["root"], places["home"]
    write(root / ".mcp.json", {"mcpServers": ["not", "an", "object"]})
    write(home / ".claude.json", "{broken")
    write(places["cwd"] / ".mcp.json", {"mcpServers": {"x": "a string", "y": {"command": 3}}})
    found = read_claude_servers(load(places), home=home, environ={})
    assert {s.name: s.problem for s in found.servers} == {
        "x": "invalid server: its entry is not an object",
        "y": "invalid server: command must be a string",
    }
    assert all(s.trust_item is None for s in found.servers)
    assert len(found.warnings) == 2
    assert found.warnings[0].startswith("~/.claude.json: skipped (not valid JSON")
    assert found.warnings[1] == ".mcp.json: mcpServers skipped (must be an object)"


async def test_a_start_cancelled_midway_leaves_no_server_shown_as_starting(tmp_path: Path) -> None:
    """session/cancel while the servers start (the first prompt's set-up): `/mcp` says the start
    was cancelled, not "starting" for the rest of the session."""
    import anyio

    from acp_agent.claude_code.setup.mcp_files import ClaudeServers

    class SlowConnections:  # the connections' seam, as far as `start` uses it: it never finishes
        failures: list[object] = []

        async def start(self, specs: list[object], **options: object) -> list[object]:
            await anyio.sleep_forever()
            return []

    plan = SessionServers.plan([{"name": "slow", "command": "x"}], ClaudeServers(), None)
    rows = plan.starting()
    with anyio.move_on_after(0.05):  # deliberate: the cancel arrives while the server starts
        await plan.start(rows, SlowConnections(), cwd=tmp_path, timeout=30)  # type: ignore[arg-type]
    assert [(r.state, r.detail) for r in rows] == [
        ("failed", "its start was cancelled; a new session starts it")
    ]
    assert "starting" not in plan.listing()
