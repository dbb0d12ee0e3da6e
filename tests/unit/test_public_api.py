"""The public API (`acp_agent/api.py`): its names are pinned, the README uses nothing else, and
`import acp_agent` stays cheap (the editor's cold start begins there)."""

from __future__ import annotations

import ast
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import acp_agent.api
from acp_agent.testing import FakeMessagesAPI, replies

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


def test_the_readme_examples_import_only_the_public_api() -> None:
    blocks = python_blocks((REPO / "README.md").read_text(encoding="utf-8"))
    imports = [i for block in blocks for i in package_imports(block)]
    assert imports, "no Python example imports acp_agent in the README: the check is broken"
    for module, names in imports:
        assert module == "acp_agent.api", f"the README imports {module}: use acp_agent.api"
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
