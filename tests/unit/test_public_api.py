"""The public API (`acp_agent/api.py`): its names are pinned, the docs use nothing else, and
`import acp_agent` stays cheap (the editor's cold start begins there)."""

from __future__ import annotations

import ast
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import acp_agent.api
from acp_agent.testing import FakeMessagesAPI, replies
from tests.support import base_env

REPO = Path(__file__).resolve().parents[2]

PUBLIC = [
    "AnthropicModel",
    "CommandEvaluator",
    "Evaluation",
    "Evaluator",
    "EventSink",
    "History",
    "JudgeEvaluator",
    "Limits",
    "MessageDone",
    "ModelClient",
    "ModelEvent",
    "ModelRequest",
    "Notice",
    "PermissionAsker",
    "PermissionDecision",
    "PermissionQuestion",
    "PhasedResult",
    "PhasedStrategy",
    "PlanChanged",
    "RetryScheduled",
    "SandboxPolicy",
    "Status",
    "Strategy",
    "TextChunk",
    "TextDelta",
    "ThinkingDelta",
    "ThoughtChunk",
    "Tool",
    "ToolCallFinished",
    "ToolCallProgress",
    "ToolCallShown",
    "ToolCallStarted",
    "ToolCallUpdated",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "ToolUseStarted",
    "ToolsStrategy",
    "Transition",
    "Trial",
    "TurnEvent",
    "TurnOutcome",
    "TurnRecord",
    "Usage",
    "UsageReported",
    "VerifyResult",
    "VerifyStrategy",
    "__version__",
    "coding_tools",
    "configure_logging",
    "default_registry",
    "run_turn",
]
"""Adding a name is a promise; removing or renaming one breaks embedders (say so in the CHANGELOG)."""


def test_the_public_names_are_pinned() -> None:
    assert sorted(acp_agent.api.__all__) == PUBLIC


def test_every_public_name_is_there_and_comes_from_the_package() -> None:
    for name in PUBLIC:
        value = getattr(acp_agent.api, name)  # a type alias (`Status`, `TurnEvent`) counts too
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__.startswith("acp_agent."), (name, value.__module__)


def python_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", markdown, flags=re.MULTILINE | re.DOTALL)


def package_imports(source: str) -> list[tuple[str, list[str]]]:
    """(module, names) of every import of `acp_agent` in `source` (`import x` gives no names)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "acp_agent":
            found.append((node.module or "", [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names if a.name.split(".")[0] == "acp_agent"]
    return found


def test_the_documented_examples_import_only_the_public_api() -> None:
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    blocks = [block for page in pages for block in python_blocks(page.read_text(encoding="utf-8"))]
    assert blocks, "no Python example in the README or docs/ (docs/api.md has one): the check is broken"
    blocks.append((REPO / "examples" / "embed.py").read_text(encoding="utf-8"))
    imports = [i for block in blocks for i in package_imports(block)]
    assert imports, "no Python example imports acp_agent in the docs: the check is broken"
    for module, names in imports:
        assert module == "acp_agent.api", f"the docs import {module}: use acp_agent.api"
        assert set(names) <= set(PUBLIC), set(names) - set(PUBLIC)


def test_the_check_finds_deep_imports() -> None:
    source = "from acp_agent.limits import Limits\nimport acp_agent.turn.inprocess\nimport json\n"
    assert package_imports(source) == [("acp_agent.limits", ["Limits"]), ("acp_agent.turn.inprocess", [])]


def test_importing_the_package_loads_nothing_else() -> None:
    code = "import acp_agent, json, sys; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    loaded = set(json.loads(out.stdout))
    assert sorted(m for m in loaded if m.startswith("acp_agent")) == ["acp_agent"]
    assert not {"pydantic", "anyio", "structlog", "anthropic"} & loaded


async def test_a_turn_runs_through_the_public_api_alone(tmp_path: Path) -> None:
    from acp_agent.api import AnthropicModel, Limits, default_registry, run_turn

    with FakeMessagesAPI() as fake:
        fake.script(replies.tool_use("list_files", {"pattern": "*"}), replies.text("nothing here"))
        model = AnthropicModel(streaming=True, api_key="test-key", base_url=fake.base_url)
        outcome = await run_turn(
            "what is here?",
            model=model,
            tools=default_registry(),
            cwd=tmp_path,
            model_id="claude-test-1",
            limits=Limits(max_turn_requests=3),
        )
        await model.aclose()
    assert (outcome.status, outcome.output) == ("completed", "nothing here")
    assert outcome.record.model_requests == 2


EMBED = REPO / "examples" / "embed.py"
CHECK_AND_MODEL = ("--check", "test -f fixed.txt", "--model", "claude-test-1")


def test_the_embedding_example_runs_a_governed_turn_and_writes_nothing_on_stdout(tmp_path: Path) -> None:
    """`examples/embed.py` as a user runs it, on the loopback API: the model writes the fix (an
    edit, allowed by the example's asker), the sandboxed check passes, and stdout stays empty."""
    project = tmp_path / "project"
    project.mkdir()
    with FakeMessagesAPI() as fake:
        fake.script(
            replies.tool_use("write_file", {"path": "fixed.txt", "content": "yes\n"}),
            replies.text("I wrote fixed.txt."),
        )
        done = subprocess.run(
            [sys.executable, str(EMBED), str(project), "fix it", *CHECK_AND_MODEL],
            env=base_env(tmp_path, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake.base_url),
            capture_output=True,
            timeout=120,
            check=False,
        )
    assert done.stdout == b""
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert done.stderr.decode().startswith("completed (end_turn); checks: passed\nI wrote fixed.txt.\n")
    assert (project / "fixed.txt").read_text() == "yes\n"


RUN_A_TURN = """
import anyio, sys
from acp_agent.api import AnthropicModel, default_registry, run_turn
{setup}
async def main():
    model = AnthropicModel(streaming=False, api_key="test-key", base_url=sys.argv[1])
    outcome = await run_turn("hi", model=model, tools=default_registry(), cwd=sys.argv[2],
                             model_id="claude-test-1")
    await model.aclose()
    assert outcome.status == "completed", outcome
anyio.run(main)
"""


def run_a_turn(tmp_path: Path, setup: str) -> subprocess.CompletedProcess[str]:
    with FakeMessagesAPI() as fake:
        fake.script(replies.tool_use("list_files", {"pattern": "*"}), replies.text("nothing here"))
        return subprocess.run(
            [sys.executable, "-c", RUN_A_TURN.format(setup=setup), fake.base_url, str(tmp_path)],
            env=base_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


def test_a_turn_logs_through_the_embedders_stdlib_logging_never_stdout(tmp_path: Path) -> None:
    quiet = run_a_turn(tmp_path, "")
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")  # nobody set logging up
    chosen = run_a_turn(tmp_path, "import logging; logging.basicConfig(level=logging.DEBUG)")
    assert chosen.returncode == 0 and chosen.stdout == ""
    assert "INFO:acp_agent.turn.driver:turn.started turn_id=t_" in chosen.stderr
    assert "DEBUG:acp_agent.turn.tool_batch:tool.started " in chosen.stderr


def test_configure_logging_gives_json_lines_on_stderr_and_refuses_stdout(tmp_path: Path) -> None:
    done = run_a_turn(tmp_path, "from acp_agent.api import configure_logging; configure_logging('debug')")
    assert done.returncode == 0 and done.stdout == ""
    events = [json.loads(line)["event"] for line in done.stderr.splitlines()]
    assert events[0] == "turn.started" and events[-1] == "turn.ended"
    with pytest.raises(ValueError, match="never go to stdout"):  # refused before anything changes
        acp_agent.api.configure_logging(stream=sys.stdout)
    with pytest.raises(ValueError, match="never go to stdout"):
        acp_agent.api.configure_logging(stream=open(1, "w", closefd=False))  # noqa: SIM115
