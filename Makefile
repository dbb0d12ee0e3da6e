# Every target creates .venv and installs the project on first use (a fresh machine has only
# python3, pip and venv). `uv run acp-agent` and `uv run pytest` work as well.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo serve test test-fast lint docs bench check-wheel clean
LINT_STAMP := $(VENV)/.lint-installed

# The distribution was called acp-agent before 0.2.0: an old .venv drops that name first (the
# unrelated PyPI project acp-agent installs the same import package, acp_agent).
$(STAMP): pyproject.toml constraints.txt acp_agent/__init__.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip uninstall --quiet --yes acp-agent
	$(BIN)/pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)  ## the offline demo: one recorded turn through the real agent, no API key needed
	$(BIN)/governed-acp-agent smoke --demo --yes

serve: $(STAMP)  ## serve ACP on stdin/stdout (what an editor runs)
	$(BIN)/governed-acp-agent

# The tests mostly wait on agent subprocesses and sockets: a few pytest-xdist workers keep both
# cores busy. `make test TEST_WORKERS=0` runs them in one process.
TEST_WORKERS ?= 3
# Bytecode is written even where the shell sets PYTHONDONTWRITEBYTECODE: otherwise every worker
# compiles and assert-rewrites each test module again on every run (~5 s of CPU per worker).
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest

# Extra pytest arguments: `make test TEST_ARGS=--max-skips=0` (CI) fails a run in which any test skips.
TEST_ARGS ?=

test: $(STAMP)  ## the whole test suite (both model paths, every Hypothesis example)
	$(PYTEST) -n $(TEST_WORKERS) $(TEST_ARGS)

test-fast: $(STAMP)  ## the edit-test loop: one model path (streaming), a tenth of the Hypothesis examples
	$(PYTEST) -n $(TEST_WORKERS) -k "not no-stream" --hypothesis-profile=fast

$(LINT_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(LINT_STAMP)

LINTED := acp_agent tests bench scripts examples

lint: $(LINT_STAMP)  ## ruff check, ruff format --check and mypy --strict (pinned in constraints.txt)
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy --strict acp_agent

DOCS_STAMP := $(VENV)/.docs-installed

$(DOCS_STAMP): $(STAMP)
	$(BIN)/pip install --quiet -c constraints.txt -e '.[docs]'
	touch $(DOCS_STAMP)

# The reference pages under docs/ as a site in build/site. --strict turns MkDocs' warnings into a
# failure: a link to a missing page or heading, or a page left out of mkdocs.yml's nav.
docs: $(DOCS_STAMP)  ## build the docs site (mkdocs build --strict) into build/site
	$(BIN)/mkdocs build --strict --quiet

bench: $(STAMP)  ## the benchmarks (figures, not tests)
	$(BIN)/python bench/run.py

WHEEL_DIR := build/wheel
WHEEL_VENV := build/wheel-venv

# As a user gets it: the wheel in a clean venv, run by its new command name (version, the demo),
# then by `uvx` as the ACP Registry's entry runs it (uv comes from PyPI into .venv; its tool env
# and cache live under build/, so nothing outside the checkout is touched).
check-wheel: $(STAMP)  ## build the wheel, install it into a clean venv, run it (version + demo), then via uvx
	rm -rf $(WHEEL_DIR) $(WHEEL_VENV) build/wheel-state build/uv
	$(BIN)/pip wheel --quiet --no-deps --wheel-dir $(WHEEL_DIR) .
	$(PYTHON) -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/pip install --quiet -c constraints.txt $(WHEEL_DIR)/governed_acp_agent-*.whl
	cd $(WHEEL_DIR) && ../wheel-venv/bin/governed-acp-agent --version
	cd $(WHEEL_DIR) && ACP_AGENT_STATE_DIR=$(CURDIR)/build/wheel-state \
		../wheel-venv/bin/governed-acp-agent smoke --demo --yes
	$(BIN)/pip install --quiet -c constraints.txt uv
	cd $(WHEEL_DIR) && UV_CACHE_DIR=$(CURDIR)/build/uv/cache UV_TOOL_DIR=$(CURDIR)/build/uv/tools \
		UV_PYTHON_DOWNLOADS=never $(CURDIR)/$(BIN)/uvx --quiet --no-config --python $(PYTHON) \
		-c $(CURDIR)/constraints.txt --from ./governed_acp_agent-*.whl governed-acp-agent --version

clean:
	rm -rf $(VENV) build
