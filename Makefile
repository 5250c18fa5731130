# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo lint test bench validate clean system-deps

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

demo: $(STAMP)
	$(BIN)/planner plan examples/chat_70b_cloud/scenario.yaml -o plan.xlsx

lint: $(STAMP)
	$(BIN)/ruff check planner constraints tests
	$(BIN)/mypy

test: $(STAMP) system-deps lint
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/python -m planner.bench

validate: $(STAMP)
	$(BIN)/planner validate-model

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
