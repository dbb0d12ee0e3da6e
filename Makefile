# Every target creates .venv and installs the project on first use (a fresh machine has only
# python3, pip and venv). `uv run acp-agent` and `uv run pytest` work as well.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo serve test lint bench clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)  ## the offline demo: one recorded turn through the real agent, no API key needed
	$(BIN)/acp-agent smoke --demo --yes

serve: $(STAMP)  ## serve ACP on stdin/stdout (what an editor runs)
	$(BIN)/acp-agent

test: $(STAMP)  ## the whole test suite
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/pip install --quiet ruff
	$(BIN)/ruff check acp_agent tests

bench: $(STAMP)  ## the benchmarks (figures, not tests)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV)
