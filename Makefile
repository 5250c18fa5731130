# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo lint test test-pulp4 bench validate clean system-deps

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# LibreOffice (headless, no GUI) recomputes exported workbooks in the report tests.
system-deps:
	@if ! command -v soffice >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      libreoffice-calc-nogui poppler-utils >/dev/null; \
	  else echo "note: LibreOffice not installed; workbook recompute tests will be skipped"; fi; \
	fi
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      chromium >/dev/null; \
	  else echo "note: chromium not installed; the HTML report screenshot test will be skipped"; fi; \
	fi

demo: $(STAMP)
	$(BIN)/planner plan examples/chat_70b_cloud/scenario.yaml -o plan.xlsx

lint: $(STAMP)
	$(BIN)/ruff check planner constraints tests
	$(BIN)/mypy
	$(BIN)/lint-imports

# the suite's files spread over up to 4 processes (pytest-xdist; a file's tests stay in one process, so its
# module fixtures are solved once): 699 s in one process on CI's 2 cores
PYTEST_PARALLEL := -n auto --maxprocesses 4 --dist loadfile

test: $(STAMP) system-deps lint
	$(BIN)/pytest $(PYTEST_PARALLEL)

# PuLP 4.x (what `pip install pulp` gives on Python >= 3.12) changed its API; the plan tests run there too.
# the first Python >= 3.12 that runs: python3.12/3.13 on PATH, else a pyenv-installed one
PYTHON_PULP4 ?= $(shell for p in python3.12 python3.13 $(wildcard $(HOME)/.pyenv/versions/3.1[2-9]*/bin/python3); do \
  $$p -c 'import sys; assert sys.version_info >= (3, 12)' >/dev/null 2>&1 && { echo $$p; break; }; done)
VENV_PULP4 := .venv-pulp4
# compare's flip-point searches call the same solve path as every plan test; they run once, under `make test`
PULP4_DESELECT := --deselect tests/plan/test_economics_plan.py::test_compare_reports_options_and_flip_points \
  --deselect tests/plan/test_speed_reuse.py::test_quick_probe_says_buy_only_where_the_exact_solve_does

$(VENV_PULP4)/.installed: pyproject.toml
	$(PYTHON_PULP4) -m venv $(VENV_PULP4)
	$(VENV_PULP4)/bin/pip install --quiet --upgrade pip
	$(VENV_PULP4)/bin/pip install --quiet -e '.[dev]'
	touch $@

test-pulp4:
	@if [ -n "$(PYTHON_PULP4)" ]; then \
	  $(MAKE) --no-print-directory $(VENV_PULP4)/.installed && \
	  $(VENV_PULP4)/bin/python -c 'import pulp; print("PuLP", pulp.__version__)' && \
	  $(VENV_PULP4)/bin/pytest -q $(PYTEST_PARALLEL) tests/plan tests/ledgers $(PULP4_DESELECT); \
	else echo "note: no Python >= 3.12 found; the PuLP 4 run is skipped"; fi

bench: $(STAMP)
	$(BIN)/python -m planner.cli.bench

validate: $(STAMP)
	$(BIN)/planner validate-model

clean:
	rm -rf $(VENV) $(VENV_PULP4) .mypy_cache .pytest_cache .ruff_cache
