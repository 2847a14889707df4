#################################################################################
# GLOBALS                                                                       #
#################################################################################

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
LAB_STAMP := $(VENV)/.installed-lab
# make lab: where JupyterLab listens and what else it gets, e.g. LAB_ARGS="--port 8890 --no-browser"
LAB_ARGS ?=
# make bench: where bench.csv and machine.json go (build/ is not versioned; the numbers committed
# under reports/bench/ are updated on purpose with make bench BENCH_OUT=reports/bench)
BENCH_OUT ?= build/bench

# Sessions root to report on: make report SESSIONS_ROOT=~/.claude/projects
SESSIONS_ROOT ?= fixtures/default
# Report folder; empty lets `measure report` choose reports/<last part of the root> (spaces and all).
REPORT_DIR ?=
# Extra options for `measure report`, e.g. REPORT_ARGS="--budgets 40000,80000,160000"
REPORT_ARGS ?=

# make fuzz: a fuzzing campaign of FUZZ_CASES inputs from FUZZ_SEED (tests/fuzz); summary in FUZZ_OUT/summary.md
FUZZ_SEED ?= 0
FUZZ_CASES ?= 10000
FUZZ_OUT ?= build/fuzz

# Deterministic, quiet kernels: papermill and nbval kernels inherit these.
export PYTHONHASHSEED := 0
export TQDM_DISABLE := 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1
export TZ := UTC
# MPLBACKEND=Agg in a kernel's environment silently drops every inline figure.
unexport MPLBACKEND

NBVAL := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg

# fixtures/s840 (the #840-shaped root, ~120 MB) is generated, not versioned; see fixtures/README.md.
S840 := fixtures/s840/.measure-output.json

#################################################################################
# COMMANDS                                                                      #
#################################################################################

# editable_mode=compat: the checkout goes on sys.path through a .pth file; setuptools' default
# import hook would look up each of measure's modules in Python code (20 ms of every command).
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -e '.[report,test,extract,dask]' --config-settings editable_mode=compat
	touch $@

.PHONY: install
install: $(STAMP) ## Create .venv from pyproject.toml with the report, test, extract and dask extras (once)

# The lab extra (JupyterLab, pandas, pyarrow): make lab, and make test for tests/test_lab.py.
$(LAB_STAMP): pyproject.toml notebooks/jupyterlab-overrides.json | $(STAMP)
	$(PY) -m pip install --quiet -e '.[report,test,extract,dask,lab]' --config-settings editable_mode=compat
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp notebooks/jupyterlab-overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	touch $@

$(S840): $(wildcard measure/synth/*.py) | $(STAMP)
	$(PY) -m measure synth --out fixtures/s840 --seed 840 --shape s840 --clean

.PHONY: fixtures
fixtures: $(STAMP) $(S840) ## Generate fixtures/s840, the #840-shaped root (not in git; about 2 s)

.PHONY: report
report: $(STAMP) $(if $(filter fixtures/s840%,$(SESSIONS_ROOT)),$(S840)) ## Measure SESSIONS_ROOT once, run every notebook, write reports/<root-name>/
	$(PY) -m measure report --root "$(SESSIONS_ROOT)" $(if $(REPORT_DIR),--out "$(REPORT_DIR)") $(REPORT_ARGS)

.PHONY: lab
lab: $(LAB_STAMP) ## JupyterLab on this repository: notebooks/*.py open as notebooks, the project's kernel
	$(VENV)/bin/jupyter lab --notebook-dir=. --KernelManager.transport=ipc $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

.PHONY: test
test: $(STAMP) $(LAB_STAMP) $(S840) ## Unit tests, then nbval re-executes the golden notebooks and compares outputs
	$(PY) -m pytest tests/ -q
	$(PY) -m pytest $(NBVAL) tests/golden -q

.PHONY: test-fast
test-fast: $(STAMP) $(S840) ## The edit-test loop: unit tests not marked slow (no full reports, clusters, nbval; make test runs everything)
	$(PY) -m pytest tests/ -q -m "not slow"

.PHONY: golden
golden: $(STAMP) $(S840) ## Regenerate tests/golden/ from the bundled fixtures (review the diff, then commit)
	$(PY) -m measure report --golden

.PHONY: fuzz
fuzz: $(STAMP) ## Fuzzing campaign (tests/fuzz): FUZZ_CASES inputs from FUZZ_SEED; summary in FUZZ_OUT; exit 1 on any failure
	$(PY) -m tests.fuzz --seed "$(FUZZ_SEED)" --cases "$(FUZZ_CASES)" --out "$(FUZZ_OUT)"

# The replay target runs on fixtures/s840 too; the corpora are generated once into bench-corpus/.
.PHONY: bench
bench: $(STAMP) $(S840) ## Benchmark the measurement (tests.bench) into BENCH_OUT (default build/bench/)
	$(PY) -m tests.bench --out "$(BENCH_OUT)"

.PHONY: clean
clean: ## Remove generated files: reports/*/ (but the versioned reports/bench/), build/, bench-corpus/, caches (never fixtures/)
	find reports -mindepth 1 -maxdepth 1 -type d ! -name bench -exec rm -rf {} +
	rm -rf build/ bench-corpus/ .pytest_cache
	find . -path ./$(VENV) -prune -o -type d -name __pycache__ -print0 | xargs -0 rm -rf

#################################################################################
# Self Documenting Commands                                                     #
#################################################################################

.PHONY: help
help: ## Show this help
	@echo "Usage: make TARGET [SESSIONS_ROOT=DIR] [REPORT_ARGS=...]"
	@echo
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | \
		awk 'BEGIN {FS = ":.*## "}; {printf "  %-9s %s\n", $$1, $$2}'
	@echo
	@echo "  SESSIONS_ROOT  sessions root of make report (default: fixtures/default)"
	@echo "  REPORT_DIR     report folder of make report (default: reports/<last part of SESSIONS_ROOT>)"
	@echo "  LAB_ARGS       extra jupyter lab options, e.g. LAB_ARGS=\"--port 8890 --no-browser\""
	@echo "  BENCH_OUT      where make bench writes (default: build/bench; reports/bench is the committed copy)"
	@echo "  REPORT_ARGS    extra measure report options, e.g. REPORT_ARGS=\"--budgets 40000,80000,160000\""
	@echo "  FUZZ_SEED      make fuzz: the campaign's seed (default 0)"
	@echo "  FUZZ_CASES     make fuzz: inputs to check (default 10000)"
	@echo "  FUZZ_OUT       make fuzz: where summary.md, summary.json and failures/ go (default build/fuzz)"
