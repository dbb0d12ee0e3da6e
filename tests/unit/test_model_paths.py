"""The model-path classification of wire tests (`tests/support/model_paths.py`) catches a wrong
`model_free` mark either way, in an inner pytest run whose fake counts the requests it is told of."""

from __future__ import annotations

import pytest

CONFTEST = """
import pytest
from tests.support.model_paths import check_classification, parametrize_model_paths, validate_markers

def pytest_configure(config):
    config.addinivalue_line("markers", "model_free: never reaches the model")

def pytest_generate_tests(metafunc):
    parametrize_model_paths(metafunc)

def pytest_collection_modifyitems(items):
    validate_markers(items)

@pytest.fixture
def streaming():
    return True

@pytest.fixture
def fake_api(request):
    received = []  # a test "reaches the model" by appending to it
    yield received
    check_classification(request.node, len(received))

@pytest.fixture
def agent_env(fake_api, streaming):
    return {"streaming": streaming}
"""


def run(pytester: pytest.Pytester, tests: str) -> pytest.RunResult:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_inner=tests)
    return pytester.runpytest_inprocess("-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest")


def test_a_model_test_runs_on_both_paths_and_a_model_free_one_once(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
import pytest

def test_reaches(agent_env, fake_api):
    fake_api.append(agent_env["streaming"])

@pytest.mark.model_free
def test_free(agent_env):
    assert agent_env["streaming"] is True

@pytest.mark.parametrize("streaming", [False], ids=["no-stream"])
def test_pinned(agent_env):
    assert agent_env["streaming"] is False
""",
    )
    result.assert_outcomes(passed=4)
    result.stdout.no_fnmatch_line("*test_free?*stream*")


def test_a_model_free_test_that_reaches_the_model_fails(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
import pytest

@pytest.mark.model_free
def test_free(agent_env, fake_api):
    fake_api.append("a request")
""",
    )
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*marked `model_free`, but the fake Messages API received 1 request*"])


def test_a_test_on_both_paths_that_never_reaches_the_model_fails(pytester: pytest.Pytester) -> None:
    result = run(pytester, "def test_idle(agent_env):\n    pass\n")
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines(["*test_idle?stream?*received no request: mark it*model_free*"])


def test_a_model_free_mark_that_changes_nothing_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
import pytest

@pytest.mark.model_free
def test_without_the_fake():
    pass
""",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*`model_free` needs a test that uses `fake_api`*test_without_the_fake*"])
