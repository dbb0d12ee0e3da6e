"""Custom agents (issue 33 item 6): an agent file read, where agent files are found and which wins,
the tools an agent gets (never more than the subagents'), how the task tool lists them, the check
point for `Agent(name)` rules, and a child on another model priced at its own price."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest

from acp_agent.claude_code.conventions.agents import CustomAgent, read_agent
from acp_agent.claude_code.conventions.convention_files import MAX_AGENT_FILES, read_conventions
from acp_agent.config import Config
from acp_agent.limits import Limits
from acp_agent.model.base import MessageDone, ModelEvent, ModelRequest, TextDelta, Usage
from acp_agent.model.pricing import Price
from acp_agent.permissions.gate import PermissionGate, decision_of
from acp_agent.permissions.question import ALLOW, PermissionDecision, PermissionQuestion
from acp_agent.session.editor.permissions import SessionPermissions
from acp_agent.session.options.catalog import ModelCatalog
from acp_agent.session.requester import Requester
from acp_agent.session.subagents.tool import agent_tools
from acp_agent.tools.base import ToolContext
from acp_agent.tools.files.read import ReadFile
from acp_agent.tools.registry import ToolRegistry
from acp_agent.tools.search.listing import ListFiles
from acp_agent.tools.search.text import SearchText
from acp_agent.turn.context.history import History, result_text
from acp_agent.turn.meter import TurnMeter
from acp_agent.turn.runner import TurnRunner
from acp_agent.turn.settings import RunnerSettings
from acp_agent.turn.spec import TurnSpec
from acp_agent.turn.subagents.task import TaskTool
from acp_agent.turn.subagents.types import LISTED_CHARS, SubagentType
from tests.unit.test_rule_engine import engine_with
from tests.unit.test_task_tool import Events, Reply, call

AGENT = "---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"


def agent_file(
    name: str = "reviewer", description: str = "Reviews code.", extra: str = "", body: str = "B"
) -> str:
    return AGENT.format(name=name, description=description, extra=extra, body=body)


def test_an_agent_file_gives_its_name_description_tools_model_and_body() -> None:
    extra = "tools: Read, grep, Bash(git *), mcp__docs, Nope\ndisallowedTools:\n  - Write\nmodel: haiku\n"
    agent = read_agent(Path("a.md"), agent_file(extra=extra, body="You review.\n\nCarefully."), "project")
    assert isinstance(agent, CustomAgent)
    assert (agent.name, agent.description, agent.prompt, agent.model) == (
        "reviewer",
        "Reviews code.",
        "You review.\n\nCarefully.",
        "haiku",
    )
    assert agent.tools == ("read_file", "search_text", "mcp__docs")  # Claude Code's names, any case
    assert agent.disallowed == ("write_file",)  # a YAML list works too
    assert agent.ignored == (
        "Bash(git *) (a pattern is not honoured in an agent's tools: left out)",
        "Nope (no such tool here)",
    )
    plain = read_agent(Path("b.md"), agent_file(), "user")
    assert isinstance(plain, CustomAgent) and plain.tools is None and plain.model == "inherit"


def test_an_agent_file_without_a_name_description_body_or_valid_frontmatter_is_left_out_with_why() -> None:
    cases = {
        "no frontmatter at all\n": "`name` is missing",
        "---\ndescription: x\n---\nbody\n": "`name` is missing",
        agent_file(name="tools:reviewer"): "holds a `:`, which joins a plugin's name",
        agent_file(name="tab\there"): "is not one printable line",
        agent_file(name="x" * 129): "of at most 128 characters",
        "---\nname: x\n---\nbody\n": "`description` is missing",
        agent_file(body=""): "its body (the subagent's system prompt) is empty",
        "---\nname: x\ndescription: y\n: : broken\n---\nbody\n": "line 4 of the frontmatter",
        "---\nname: x\ndescription: y\nbody with no closing fence\n": "is not closed",
    }
    for text, why in cases.items():
        got = read_agent(Path("a.md"), text, "project")
        assert isinstance(got, str) and why in got, (text, got)


def test_an_agent_name_is_any_line_without_a_colon_as_claude_code_takes_it() -> None:
    """Claude Code refuses only `:` in a name; `powershell-5.1-expert` was left out here."""
    for name in ("powershell-5.1-expert", "Code-Reviewer", "code_reviewer", "review bot", "x" * 128):
        agent = read_agent(Path("a.md"), agent_file(name=name), "project")
        assert isinstance(agent, CustomAgent) and agent.name == name, (name, agent)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_nearest_project_agent_wins_then_the_users_and_big_or_many_files_are_capped(
    tmp_path: Path,
) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    (repo / ".git").mkdir(parents=True)
    cwd = repo / "pkg"
    near = write(cwd / ".claude" / "agents" / "review" / "deep.md", agent_file(description="NEAR"))
    top = write(repo / ".claude" / "agents" / "reviewer.md", agent_file(description="TOP"))
    user = write(home / ".claude" / "agents" / "reviewer.md", agent_file(description="USER"))
    write(home / ".claude" / "agents" / "helper.md", agent_file(name="helper", description="USER HELPER"))
    huge = write(repo / ".claude" / "agents" / "huge.md", agent_file(name="huge", body="x" * 1_000_000))
    found = read_conventions(cwd, home=home, config_dir=None)
    assert [(a.name, a.description, a.source) for a in found.agents] == [
        ("helper", "USER HELPER", "user"),
        ("reviewer", "NEAR", "project"),  # found in a subdirectory, nearest the cwd
    ]
    assert f"{top} (shadowed by {near})" in found.agents_skipped
    assert f"{user} (shadowed by {near})" in found.agents_skipped
    assert f"{huge} (skipped: larger than the 64 KiB cap)" in found.agents_skipped
    assert "Custom agents: 2" in found.status() and str(huge) in found.status()
    assert found.skipped == ()  # the commands' and skills' notes stay their own

    for i in range(MAX_AGENT_FILES + 50):
        write(home / ".claude" / "agents" / "many" / f"{i:03}.md", agent_file(name=f"many-{i:03}"))
    capped = read_conventions(cwd, home=home, config_dir=None)
    assert len(capped.agents) < MAX_AGENT_FILES
    assert sum("cap of 100 agent files" in line for line in capped.agents_skipped) == 1


def children() -> ToolRegistry:
    return ToolRegistry([ReadFile(), ListFiles(), SearchText()])


def test_an_agents_tools_are_a_subset_of_the_subagents_never_more() -> None:
    agent = CustomAgent("a", "d", Path("a.md"), "p", tools=("read_file", "write_file", "task", "web_search"))
    got = agent_tools(agent, children())
    assert got.registry.names == ("read_file",)
    assert got.web == frozenset({"web_search"})
    assert got.unavailable == ("write_file (not a subagent's tool here)", "task (never a subagent's tool)")
    everything = agent_tools(replace(agent, tools=None, disallowed=("list_files", "web_fetch")), children())
    assert everything.registry.names == ("read_file", "search_text")
    assert everything.web == frozenset({"web_search"})
    assert agent_tools(replace(agent, tools=None), children()).web is None  # the session's, as they are


class McpTool:
    kind, permission = "read", None
    description = "an MCP tool"
    input_schema: dict[str, Any] = {"type": "object"}

    def __init__(self, name: str) -> None:
        self.name = name

    def title(self, args: dict[str, Any]) -> str:
        return self.name

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        raise AssertionError


def test_an_mcp_server_name_in_an_agents_tools_means_all_of_that_servers_tools() -> None:
    tools = ToolRegistry(
        [ReadFile(), McpTool("mcp__docs__find"), McpTool("mcp__docs__get"), McpTool("mcp__x__y")]
    )
    agent = CustomAgent("a", "d", Path("a.md"), "p", tools=("mcp__docs",), disallowed=("mcp__docs__get",))
    assert agent_tools(agent, tools).registry.names == ("mcp__docs__find",)


def kind(name: str, description: str = "Does things.") -> SubagentType:
    return SubagentType(name, description, children(), lambda: f"PROMPT OF {name}")


def test_without_agents_the_task_tools_schema_is_as_before_and_with_them_it_lists_them_once() -> None:
    plain = TaskTool(children(), "S")
    assert plain.description == TaskTool.description and plain.input_schema is TaskTool.input_schema
    long = "word " * 200
    task = TaskTool(children(), "S", types=[kind("zeta"), kind("alpha", long)])
    assert task.input_schema["properties"]["subagent_type"]["enum"] == ["alpha", "general-purpose", "zeta"]
    assert task.input_schema["required"] == ["description", "prompt"]  # optional: general-purpose
    listing = task.description.removeprefix(TaskTool.description)
    lines = [line for line in listing.splitlines() if line.startswith("- ")]
    assert [line.split(":")[0] for line in lines] == ["- general-purpose", "- alpha", "- zeta"]
    assert len(lines[1]) < 320 and lines[1].endswith("…")  # a long description is cut
    assert (
        TaskTool(children(), "S", types=[kind("alpha", long), kind("zeta")]).description == task.description
    )

    many = TaskTool(children(), "S", types=[kind(f"agent-{i:03}") for i in range(500)])
    assert 0 < len(many.types) < 500 and len(many.types) + len(many.left_out) == 500
    assert len(many.description) < len(TaskTool.description) + LISTED_CHARS + 400
    assert f"({len(many.left_out)} more are not offered: the list's cap)" in many.description
    assert "agent-499" not in many.input_schema["properties"]["subagent_type"]["enum"]


def ruled_asker(tmp_path: Path, mode: str, rules: dict[str, list[str]]) -> SessionPermissions:
    """The session's asker over the one rule engine, with `rules` in the user's settings file."""
    return SessionPermissions("s", cast(Requester, object()), mode, engine=engine_with(tmp_path, rules))


def task_question(subagent_type: str) -> PermissionQuestion:
    """The `task` call as the tool batch puts it to the asker (it needs no permission by default)."""
    return PermissionQuestion("c", "task", "Subagent", "think", "none", {"subagent_type": subagent_type})


async def unasked(asker: SessionPermissions, question: PermissionQuestion) -> PermissionDecision | None:
    """What the session's gate decides on `question` without asking anyone (None: it would ask)."""
    asked, verdict = await PermissionGate(asker.engine, asker.cell, asker).verdict(question)
    return decision_of(verdict, asked)


async def test_a_subagent_starts_unasked_in_every_mode_unless_an_agent_rule_says_otherwise(
    tmp_path: Path,
) -> None:
    modes = ("default", "plan", "acceptEdits", "dontAsk", "bypassPermissions")
    for mode in modes:  # no rule: never asked (no request could be sent), in every mode
        assert await unasked(ruled_asker(tmp_path / "none", mode, {}), task_question("reviewer")) is ALLOW
    for mode in modes:  # a deny holds in every mode, bypass included, with the rule's one line
        decision = await unasked(
            ruled_asker(tmp_path / "deny", mode, {"deny": ["Agent(reviewer)"]}), task_question("reviewer")
        )
        assert decision is not None and not decision.allowed
        assert decision.message == "denied by ~/.claude/settings.json: Agent(reviewer)"
    asks = ruled_asker(tmp_path / "ask", "default", {"ask": ["Task(reviewer)"]})  # the old name
    assert await unasked(asks, task_question("reviewer")) is None  # left to the user
    assert await unasked(asks, task_question("general-purpose")) is ALLOW
    allowed = ruled_asker(tmp_path / "allow", "default", {"allow": ["Agent(reviewer)"], "ask": ["Agent"]})
    assert await unasked(allowed, task_question("reviewer")) is None  # an ask rule outranks an allow rule


class Refusing:
    """An asker that refuses whatever it is asked (a `task` call asks it nothing)."""

    def __init__(self) -> None:
        self.asked: list[PermissionQuestion] = []

    async def ask(self, question: PermissionQuestion) -> PermissionDecision:
        self.asked.append(question)
        return PermissionDecision(False, message="refused")


def other_model(parent: RunnerSettings) -> RunnerSettings:
    return replace(parent, model="other-model", thinking={"type": "disabled"})


class BySystem:
    """A ModelClient: the parent's replies (system "PARENT") from a script, every other request's
    (a subagent's) from `child`, which sees it."""

    streaming = False

    def __init__(self, parent: list[Reply], child: Callable[[ModelRequest], Reply]) -> None:
        self.parent, self.child = parent, child
        self.children: list[ModelRequest] = []

    async def respond(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if request.system == "PARENT":
            content, stop = self.parent.pop(0)
        else:
            self.children.append(request)
            content, stop = self.child(request)
        for index, block in enumerate(content):
            if block["type"] == "text":
                yield TextDelta(index, block["text"])
        yield MessageDone([dict(b) for b in content], stop, USAGE)


USAGE = Usage(1000, 100)


async def run_with(
    tmp_path: Path,
    types: list[SubagentType],
    subagent_type: str,
    asker: Any,
    child: Callable[[ModelRequest], Reply],
) -> tuple[TurnMeter, History, list[ModelRequest]]:
    """One parent turn that hands `subagent_type` a task, priced at 1/1 (the other model at 100/1000)."""
    task = TaskTool(children(), "CHILD", types=types, prices={"other-model": Price(100, 1000)})
    parent = [
        ([call("task", description="look", prompt="look around", subagent_type=subagent_type)], "tool_use"),
        ([], "end_turn"),
    ]
    model = BySystem(parent, child)
    gate = (
        PermissionGate(asker.engine, asker.cell, asker)
        if isinstance(asker, SessionPermissions)
        else PermissionGate.without_rules((tmp_path,), asker)
    )
    runner = TurnRunner(
        TurnSpec(
            model,
            ToolRegistry([task]),
            Events(),
            ToolContext(cwd=tmp_path),
            RunnerSettings(model="parent-model", max_tokens=100, system="PARENT"),
            gate,
        )
    )
    history, meter = History(), TurnMeter(Limits(), price=Price(1, 1))
    history.add_prompt([{"type": "text", "text": "go"}])
    await runner.run(history, meter)
    return meter, history, model.children


def answer(text: str) -> Callable[[ModelRequest], Reply]:
    return lambda request: ([{"type": "text", "text": text}], "end_turn")


async def test_a_refused_agent_never_starts_and_the_model_hears_the_rule(tmp_path: Path) -> None:
    asker = ruled_asker(tmp_path / "rules", "bypassPermissions", {"deny": ["Agent(reviewer)"]})
    meter, history, sent = await run_with(tmp_path, [kind("reviewer")], "reviewer", asker, answer("x"))
    result = history.messages[2]["content"][0]
    assert result["is_error"]
    assert result_text(result["content"]) == "denied by ~/.claude/settings.json: Agent(reviewer)"
    assert sent == [] and meter.subagents == [] and meter.model_requests == 2


async def test_a_custom_agents_child_sends_its_prompt_tools_and_model_and_is_priced_at_its_price(
    tmp_path: Path,
) -> None:
    own = SubagentType(
        "fast", "Fast.", ToolRegistry([ReadFile()]), lambda: "FAST PROMPT", other_model, "other-model"
    )
    meter, history, sent = await run_with(tmp_path, [own], "fast", Refusing(), answer("fast answer"))
    assert result_text(history.messages[2]["content"][0]["content"]) == "fast answer"
    (request,) = sent
    assert (request.model, request.system, request.thinking) == (
        "other-model",
        "FAST PROMPT",
        {"type": "disabled"},
    )
    assert [t["name"] for t in request.tools] == ["read_file"]
    (subagent,) = meter.subagents
    assert (subagent.agent, subagent.model) == ("fast", "other-model")
    child_cost = Price(100, 1000).cost(USAGE)
    assert subagent.meter.cost_usd == child_cost  # its model's price, not the turn's
    assert meter.cost_usd == pytest.approx(child_cost + 2 * Price(1, 1).cost(USAGE))


def test_an_agents_model_word_names_the_first_offered_of_its_family_and_an_id_is_used_as_written() -> None:
    """Before the Models API answers (or where a gateway has none), an id the user wrote is theirs
    to pick: the API's 404 says when it does not exist (issue 42 item 6)."""
    catalog = ModelCatalog(Config(model="claude-sonnet-5-5"), model=cast(Any, None))
    assert catalog.named_model("haiku") == "claude-haiku-5-5"
    assert catalog.named_model("opus") == "claude-opus-5-5" == catalog.named_model("Opus")
    assert catalog.named_model("sonnet[1m]") == "claude-sonnet-5-5"  # Claude Code's 1M alias
    assert catalog.named_model("claude-sonnet-5-5") == "claude-sonnet-5-5"
    for written in ("claude-opus-4-1-20250805", "gpt-5", "anthropic.claude-x-v1:0", "claude-x@20250805"):
        assert catalog.named_model(written) == written
    assert catalog.named_model("fable") is None  # a family word: no offered model of that family
    assert catalog.named_model("the best one") is None and catalog.named_model("x\ny") is None


def test_agent_files_are_read_as_deep_as_the_sensitive_write_guard_looks_and_no_deeper(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    agents = repo / ".claude" / "agents"
    write(agents / "a" / "b" / "seen.md", agent_file(name="seen"))
    write(agents / "a" / "b" / "c" / "unseen.md", agent_file(name="unseen"))  # below what the guard watches
    found = read_conventions(repo, home=tmp_path / "home", config_dir=None)
    assert [a.name for a in found.agents] == ["seen"]
