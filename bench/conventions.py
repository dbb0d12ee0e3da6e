"""`python bench/conventions.py [--skills N] [--commands N] [--agents N] [--imports N] [--rules N]
[--hooks N] [--reps N]`: a Claude user's setup: commands, skills, custom agents, memory, settings and hooks.

A repository with `--skills` skills (200 by default, the read cap), `--commands` command files
(100) and `--agents` agent files (20) in `.claude/`, and Claude Code's memory: 5 memory files
(`~/.claude/CLAUDE.md`, AGENTS.md, CLAUDE.md, `.claude/CLAUDE.md`, CLAUDE.local.md, 2 KB each),
`--imports` files CLAUDE.md imports (20), 5 path-scoped rules and a CLAUDE.md below the cwd; and
`--rules` permission rules (50) in its settings files (the project's, the local one and the
user's). Figures (medians over `--reps`):
- the discovery itself (`read_conventions`, in this process: the walk, every file read under the
  file tools' rules, the frontmatter parsed), in the repository and in an empty one, and in one
  holding only the agents;
- the task tool made with those agents (their types, its description and schema: once per session,
  when its first prompt builds the turn machinery), against the plain task tool;
- the memory read at a session's start (`read_instructions`, in this process: every file and
  import read under the same rules, ordered and capped), in the repository and in an empty one;
- what one read_file costs for the memory that waits for it (`for_reads` of a file under the
  nested CLAUDE.md that a path rule matches: the first read, which reads those files, and a later
  one, from what the session kept);
- the settings read (`load_claude_setup`, in this process: the files found, parsed and checked,
  every rule read, whether git tracks the local file read from its index, the trust items listed;
  a process's first read and a later one), and one "may this run?" decision over those rules;
- the hooks: reading `--hooks` hooks (10) from the settings (`read_hooks`, in this process), and
  what one hook run costs the agent per tool call (`SessionHooks.before_tool` with one matching
  `true` hook: the agent's own CPU, its threads included, never the hook's process; and the wall
  time), without the sandbox and in it (bwrap);
- over real pipes, the agent's `session/new` answer and its `available_commands_update`, each timed
  from the `session/new` request, in the repository and in an empty one (a fresh agent each time,
  warmed up by one session first).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `acp_agent` and `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio

from acp_agent.claude_code.conventions.convention_files import read_conventions
from acp_agent.claude_code.conventions.conventions import Conventions
from acp_agent.claude_code.hooks.hook_config import read_hooks
from acp_agent.claude_code.hooks.hooks import SessionHooks
from acp_agent.claude_code.memory.instructions import read_instructions
from acp_agent.claude_code.setup.setup import load_claude_setup
from acp_agent.limits import Limits
from acp_agent.permissions.engine import RuleEngine
from acp_agent.permissions.question import PermissionQuestion
from acp_agent.session.subagents.tool import agent_tools
from acp_agent.testing import FakeMessagesAPI
from acp_agent.tools.registry import ToolRegistry, default_registry
from acp_agent.tools.sandbox.command_sandbox import CommandSandbox, SandboxPolicy
from acp_agent.turn.events import TurnEvent
from acp_agent.turn.hooks import HookCall
from acp_agent.turn.meter import TurnMeter
from acp_agent.turn.subagents.task import TaskTool
from acp_agent.turn.subagents.types import SubagentType
from bench.common import AGENT, BenchError, Peer, Scratch, median

AGENT_TOOLS = ("Read, Grep, Glob", "Read, Bash", None)


def make_repo(root: Path, skills: int, commands: int, agents: int = 0) -> Path:
    (root / ".git").mkdir(parents=True)
    for n in range(agents):
        folder = root / ".claude" / "agents" / (f"team{n % 3}" if n % 2 else "")
        folder.mkdir(parents=True, exist_ok=True)
        tools = AGENT_TOOLS[n % len(AGENT_TOOLS)]
        (folder / f"agent-{n:03d}.md").write_text(
            f"---\nname: agent-{n:03d}\ndescription: Handles kind {n} of task; use it when asked to.\n"
            + (f"tools: {tools}\n" if tools else "")
            + ("model: haiku\n" if n % 4 == 0 else "")
            + f"---\nYou are agent {n}.\n"
            + "Work carefully and report what you found.\n" * 40
        )
    for n in range(skills):
        skill = root / ".claude" / "skills" / f"skill-{n:03d}"
        (skill / "references").mkdir(parents=True)
        (skill / "SKILL.md").write_text(
            f"---\nname: skill-{n:03d}\ndescription: Does task number {n} the way this team likes it.\n"
            f"---\n# Skill {n}\n\n" + "Step by step instructions.\n" * 40
        )
        (skill / "references" / "guide.md").write_text("A reference.\n")
    for n in range(commands):
        folder = root / ".claude" / "commands" / (f"group{n % 5}" if n % 2 else "")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"command-{n:03d}.md").write_text(
            f"---\ndescription: Command {n}\nargument-hint: <file>\n---\nDo {n} to $ARGUMENTS.\n"
        )
    return root


def make_memory(root: Path, home: Path, imports: int) -> Path:
    """Claude Code's memory in the repository at `root` (and `home`); returns the nested file a
    path rule matches."""
    text = "A line of the team's conventions, with enough words to be a real one.\n" * 28  # 2 KB
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    (home / ".claude" / "CLAUDE.md").write_text(text)
    (root / "docs").mkdir()
    for name in ("AGENTS.md", "CLAUDE.local.md"):
        (root / name).write_text(text)
    (root / "CLAUDE.md").write_text(text + "".join(f"@docs/import-{n:02d}.md\n" for n in range(imports)))
    (root / ".claude" / "rules").mkdir(parents=True, exist_ok=True)
    (root / ".claude" / "CLAUDE.md").write_text(text)
    for n in range(imports):
        (root / "docs" / f"import-{n:02d}.md").write_text(text[:1024])
    for n in range(5):
        rule = f'---\npaths:\n  - "src/part{n}/**/*.{{py,pyi}}"\n---\n' + text[:1024]
        (root / ".claude" / "rules" / f"part{n}.md").write_text(rule)
    (root / "src" / "part3").mkdir(parents=True)
    (root / "src" / "part3" / "CLAUDE.md").write_text(text[:1024])
    (root / "src" / "part3" / "module.py").write_text("VALUE = 1\n")
    return root / "src" / "part3" / "module.py"


def memory_ms(cwd: Path, home: Path, reps: int) -> tuple[float, int]:
    times, found = [], None
    for _ in range(reps):
        start = time.perf_counter()
        found = read_instructions(cwd, home=home, config_dir=None)
        times.append(time.perf_counter() - start)
    assert found is not None
    return median(times) * 1000, len(found.files)


def read_ms(cwd: Path, home: Path, read: Path, reps: int) -> tuple[float, float, int]:
    """(the first read's lookup, a later one's, attachments): medians, ms, in this process."""
    firsts, laters, count = [], [], 0

    async def lookups() -> None:
        nonlocal count
        for _ in range(reps):
            scoped = read_instructions(cwd, home=home, config_dir=None).on_read
            assert scoped is not None
            start = time.perf_counter()
            count = len(await scoped.for_reads([read]))
            firsts.append(time.perf_counter() - start)
            start = time.perf_counter()
            await scoped.for_reads([read])
            laters.append(time.perf_counter() - start)

    anyio.run(lookups)
    return median(firsts) * 1000, median(laters) * 1000, count


def discovery_ms(cwd: Path, home: Path, reps: int) -> tuple[float, Conventions]:
    times, found = [], None
    for _ in range(reps):
        start = time.perf_counter()
        found = read_conventions(cwd, home=home, config_dir=home / ".config" / "acp-agent")
        times.append(time.perf_counter() - start)
    assert found is not None
    return median(times) * 1000, found


def task_tool_ms(found: Conventions, reps: int) -> tuple[float, float]:
    """(the task tool with `found`'s agents, the plain one): medians, ms. As `task_tool` makes it:
    each agent's tools among the subagents', then the tool's description and schema."""
    registry = default_registry()
    children = ToolRegistry(t for n in ("read_file", "list_files", "search_text") if (t := registry.get(n)))

    def build(agents: bool) -> float:
        start = time.perf_counter()
        types = [
            SubagentType(a.name, a.description, agent_tools(a, children).registry, lambda: "")
            for a in (found.agents if agents else ())
        ]
        ToolRegistry([TaskTool(children, "S", types=types)]).api_tools()  # its entry, as a request sends it
        return time.perf_counter() - start

    with_agents = [build(True) for _ in range(reps)]
    plain = [build(False) for _ in range(reps)]
    return median(with_agents) * 1000, median(plain) * 1000


def session_new_ms(scratch: Scratch, api: FakeMessagesAPI, cwd: Path, reps: int) -> tuple[float, float, int]:
    """(session/new answered, available_commands_update received, commands listed): medians, ms."""
    answers, updates, listed = [], [], 0
    for rep in range(reps):
        got = threading.Event()
        seen: dict[str, Any] = {}

        def watch(
            message: dict[str, Any], now: float, seen: dict[str, Any] = seen, got: threading.Event = got
        ) -> None:
            update = (message.get("params") or {}).get("update") or {}
            if update.get("sessionUpdate") == "available_commands_update" and seen.get("warm"):
                seen["at"], seen["count"] = now, len(update["availableCommands"])
                got.set()

        peer = Peer(AGENT, scratch.env(api.base_url), cwd, scratch.stderr_path(f"conventions-{rep}"))
        peer.on_message = watch
        try:
            peer.initialize()
            peer.new_session(scratch.workspace)  # the first session pays for the thread pool
            time.sleep(0.5)
            seen["warm"] = True
            sent = time.perf_counter()
            answered, _ = peer.new_session(cwd)
            if not got.wait(30):
                raise BenchError("no available_commands_update within 30 s")
            answers.append(answered - sent)
            updates.append(seen["at"] - sent)
            listed = seen["count"]
        finally:
            peer.close()
    return median(answers) * 1000, median(updates) * 1000, listed


def write_rules(root: Path, home: Path, count: int) -> None:
    """`count` rules of every kind, spread over the project's, the local and the user's file."""
    kinds = [
        "Bash(npm run task{n} *)",
        "Read(./secrets/{n}/**)",
        "Edit(./src/gen{n}/**)",
        "mcp__srv{n}__tool",
    ]
    rules = [kinds[n % len(kinds)].format(n=n) for n in range(count)]
    files = [
        root / ".claude" / "settings.json",
        root / ".claude" / "settings.local.json",
        home / ".claude" / "settings.json",
    ]
    for i, path in enumerate(files):
        mine = rules[i::3]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps({"permissions": {"deny": mine[0::3], "ask": mine[1::3], "allow": mine[2::3]}})
        )


def settings_ms(cwd: Path, home: Path, reps: int) -> tuple[float, float, float, int]:
    """(reading the settings the first time in this process, and again, ms; one decision, µs;
    rules read): medians (the first read also compiles what the rules' reading needs)."""
    loads, decisions, setup = [], [], None
    for _ in range(reps + 1):
        start = time.perf_counter()
        setup = load_claude_setup(cwd, home=home, config_dir=home / ".config" / "acp-agent", trust_store=None)
        loads.append(time.perf_counter() - start)
    assert setup is not None
    engine = RuleEngine(setup, roots=lambda: (cwd,))
    question = PermissionQuestion(
        "c", "run_command", "Run", "execute", "execute", {"command": "npm run x && ls"}
    )
    for _ in range(reps * 100):
        start = time.perf_counter()
        engine.decide(question, "default")
        decisions.append(time.perf_counter() - start)
    return loads[0] * 1000, median(loads[1:]) * 1000, median(decisions) * 1e6, len(setup.rules)


def write_hooks(home: Path, count: int) -> None:
    """`count` command hooks in the user's settings: PreToolUse and PostToolUse, by name, list,
    expression and `if`; the first is the one `hook_run_ms` runs (`true`, exec form)."""
    shapes = [
        ("PreToolUse", "Bash", {"if": "Bash(rm *)"}),
        ("PostToolUse", "Edit|Write", {}),
        ("PreToolUse", "mcp__.*__write.*", {}),
        ("PostToolUse", "Read", {}),
        ("Stop", "", {}),
    ]
    hooks: dict[str, list[dict[str, Any]]] = {"PreToolUse": [{"matcher": "Grep", "hooks": []}]}
    hooks["PreToolUse"][0]["hooks"].append({"type": "command", "command": "true", "args": []})
    for n in range(count - 1):
        event, matcher, extra = shapes[n % len(shapes)]
        handler = {"type": "command", "command": f"$HOME/.claude/hooks/h{n}.sh", **extra}
        hooks.setdefault(event, []).append({"matcher": matcher, "hooks": [handler]})
    path = home / ".claude" / "settings.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps({**data, "hooks": hooks}))


class _Nowhere:
    async def emit(self, event: TurnEvent) -> None:
        return None


def hooks_read_ms(cwd: Path, home: Path, reps: int) -> tuple[float, int]:
    """(reading the hooks of the settings, ms; hooks in force): the median."""
    setup = load_claude_setup(cwd, home=home, config_dir=None, trust_store=None)
    times, found = [], 0
    for _ in range(reps):
        start = time.perf_counter()
        found = len(read_hooks(setup, home).handlers)
        times.append(time.perf_counter() - start)
    return median(times) * 1000, found


def hook_run_ms(cwd: Path, home: Path, reps: int, *, sandboxed: bool) -> tuple[float, float]:
    """(the agent's CPU per hook run, its wall time; ms): one matching `true` hook per call."""
    setup = load_claude_setup(cwd, home=home, config_dir=None, trust_store=None)
    engine = RuleEngine(setup, roots=lambda: (cwd,))
    hooks = SessionHooks(
        read_hooks(setup, home),
        "bench",
        cwd,
        mode=lambda: "default",
        sink=_Nowhere(),
        engine=engine,
        roots=lambda: (cwd,),
        sandbox=CommandSandbox(SandboxPolicy()) if sandboxed else None,
    )
    meter = TurnMeter(Limits())
    call = HookCall("toolu_bench", "search_text", {"pattern": "x"})

    async def runs() -> tuple[float, float]:
        await hooks.before_tool(call, meter)  # warm: the first spawn, the sandbox's probe
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(reps):
            await hooks.before_tool(call, meter)
        return (time.process_time() - cpu) / reps * 1000, (time.perf_counter() - wall) / reps * 1000

    return anyio.run(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skills", type=int, default=200)
    parser.add_argument("--commands", type=int, default=100)
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--imports", type=int, default=20)
    parser.add_argument("--rules", type=int, default=50)
    parser.add_argument("--hooks", type=int, default=10)
    parser.add_argument("--reps", type=int, default=10)
    opts = parser.parse_args()
    with Scratch() as scratch, FakeMessagesAPI() as api:
        repo = make_repo(scratch.root / "repo", opts.skills, opts.commands, opts.agents)
        only_agents = make_repo(scratch.root / "agents", 0, 0, opts.agents)
        empty = scratch.root / "empty"
        (empty / ".git").mkdir(parents=True)
        full_ms, found = discovery_ms(repo, scratch.home, opts.reps)
        empty_ms, _ = discovery_ms(empty, scratch.home, opts.reps)
        agents_ms, _ = discovery_ms(only_agents, scratch.home, opts.reps)
        task_ms, plain_task_ms = task_tool_ms(found, opts.reps)
        nothing_ms, _ = memory_ms(empty, scratch.home, opts.reps)  # before the user's CLAUDE.md exists
        read = make_memory(repo, scratch.home, opts.imports)
        memory, files = memory_ms(repo, scratch.home, opts.reps)
        first_read, later_read, attached = read_ms(repo, scratch.home, read, opts.reps)
        _, empty_settings, empty_decision, _ = settings_ms(empty, scratch.home, opts.reps)
        write_rules(repo, scratch.home, opts.rules)
        first_settings, settings, decision, rules = settings_ms(repo, scratch.home, opts.reps)
        write_hooks(scratch.home, opts.hooks)
        hooks_ms, hooks = hooks_read_ms(repo, scratch.home, opts.reps * 10)
        hooked_settings = settings_ms(repo, scratch.home, opts.reps)[1]
        plain_cpu, plain_wall = hook_run_ms(repo, scratch.home, opts.reps * 5, sandboxed=False)
        boxed_cpu, boxed_wall = hook_run_ms(repo, scratch.home, opts.reps * 5, sandboxed=True)
        runs: dict[Path, list[tuple[float, float, int]]] = {repo: [], empty: []}
        for _ in range(max(3, opts.reps // 2)):  # alternated: the machine's load drifts
            for cwd, results in runs.items():
                results.append(session_new_ms(scratch, api, cwd, 1))
        answer, update = (median([r[i] for r in runs[repo]]) for i in (0, 1))
        empty_answer, empty_update = (median([r[i] for r in runs[empty]]) for i in (0, 1))
        listed = runs[repo][-1][2]
    print(
        f"{len(found.skills)} skills, {len(found.commands)} command files, {len(found.agents)} agents, "
        f"{files} memory files (5 and {opts.imports} imports) and {rules} rules found; medians of "
        f"{opts.reps} (agent: fewer)"
    )
    print(f"| {'figure':<58} | {'repository':>10} | {'empty repo':>10} |")
    print(f"|{'-' * 60}|{'-' * 12}|{'-' * 12}|")
    rows = [
        ("discovery (read_conventions, in process)", full_ms, empty_ms),
        (f"discovery of the {len(found.agents)} agents alone (in process)", agents_ms, empty_ms),
        (f"task tool with the {len(found.agents)} agents (in process; plain: right)", task_ms, plain_task_ms),
        ("memory at start (read_instructions, in process)", memory, nothing_ms),
        ("settings read, a process's first (load_claude_setup)", first_settings, empty_settings),
        ("settings read, again (load_claude_setup)", settings, empty_settings),
        ("session/new → its answer (over pipes)", answer, empty_answer),
        ("session/new → available_commands_update (over pipes)", update, empty_update),
    ]
    for label, full, none in rows:
        print(f"| {label:<58} | {full:>7.1f} ms | {none:>7.1f} ms |")
    label = "one decision of the rule engine (a line of two commands)"
    print(f"| {label:<58} | {decision:>7.1f} µs | {empty_decision:>7.1f} µs |")
    print(f"commands listed in the update: {listed}")
    print(
        f"a read_file's memory lookup (for_reads, in process, {attached} attached): "
        f"first read {first_read:.2f} ms, a later one {later_read:.2f} ms"
    )
    print(
        f"{hooks} hooks: read in {hooks_ms:.2f} ms (read_hooks); the settings read with them "
        f"{hooked_settings:.1f} ms (was {settings:.1f} ms)"
    )
    print(
        f"one hook run per tool call (a `true` hook): the agent's CPU {plain_cpu:.2f} ms "
        f"(wall {plain_wall:.1f} ms) unsandboxed, {boxed_cpu:.2f} ms (wall {boxed_wall:.1f} ms) in bwrap"
    )


if __name__ == "__main__":
    main()
