# kqbench: every target installs what it needs (venv, Python packages, Go-built binaries).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SCENARIO ?= quick

.PHONY: bench nightly test unit integration toolchain lint clean-clusters

$(BIN)/kqbench: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

toolchain: $(BIN)/kqbench
	$(BIN)/kqbench toolchain build

# The main job: the `quick` scenario (all five position strategies on a local KWOK cluster),
# results under results/runs/<run-id>/ and the path of its report.html printed at the end.
bench: toolchain
	$(BIN)/kqbench run $(SCENARIO)

# The nightly set, compared with results/baselines/ (see ci/nightly.sh).
nightly: toolchain
	KQBENCH=$(BIN)/kqbench ci/nightly.sh

lint: $(BIN)/kqbench
	cd $(CURDIR) && $(BIN)/lint-imports

unit: $(BIN)/kqbench
	$(BIN)/python -m pytest tests/unit -q

integration: toolchain
	$(BIN)/python -m pytest tests/integration -q -m integration

# The test command: import contracts, unit tests, integration tests on a real local cluster.
test: toolchain lint
	$(BIN)/python -m pytest tests -q

clean-clusters: $(BIN)/kqbench
	for name in $$($(BIN)/kqbench cluster status --json | $(BIN)/python -c 'import json,sys; print(" ".join(c["name"] for c in json.load(sys.stdin)))'); do \
		$(BIN)/kqbench cluster down --name $$name; done
