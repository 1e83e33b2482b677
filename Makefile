# kqbench: every target installs what it needs (venv, Python packages, Go-built binaries).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SCENARIO ?= quick

.PHONY: bench nightly test test-nightly unit integration browser toolchain lint clean-clusters

$(BIN)/kqbench: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

toolchain: $(BIN)/kqbench
	$(BIN)/kqbench toolchain build

# The main job: the `quick` scenario (all five position strategies on a local KWOK cluster),
# results under results/runs/<run-id>/ and the path of its report.html printed at the end.
# It builds only what the scenario runs (no Kueue for `quick`); `toolchain` builds everything.
bench: $(BIN)/kqbench
	$(BIN)/kqbench toolchain build --for $(SCENARIO)
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

# Headless Chromium for the report's layout test (tests/browser): Debian's package when none is on PATH.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BROWSERS := chromium chromium-browser google-chrome google-chrome-stable
browser:
	@for b in $(BROWSERS); do command -v $$b >/dev/null 2>&1 && exit 0; done; \
		echo "installing chromium (apt-get)"; \
		$(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q --no-install-recommends chromium

# The test command: import contracts, unit tests, the report in a real browser, integration tests on a real local cluster.
# Tests marked `nightly` (long cluster runs at scale, every Kueue version) run in the nightly tier instead.
# The 30 slowest tests are printed: what to move to the nightly tier when the suite grows past its 25 minutes.
test: toolchain lint browser
	$(BIN)/python -m pytest tests -q -m "not nightly" --durations=30

# The nightly tier: what `make test` leaves out (`pytest -m nightly --collect-only -q` lists it).
test-nightly: toolchain
	$(BIN)/python -m pytest tests -q -m nightly

clean-clusters: $(BIN)/kqbench
	for name in $$($(BIN)/kqbench cluster status --json | $(BIN)/python -c 'import json,sys; print(" ".join(c["name"] for c in json.load(sys.stdin)))'); do \
		$(BIN)/kqbench cluster down --name $$name; done
