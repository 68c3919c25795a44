# Two entry points on a fresh machine with Python 3.11: `make study` and `make test`.
# Both create .venv and install the project into it (once; again when pyproject.toml changes).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORES ?= all
.DEFAULT_GOAL := test

.PHONY: study census test test-fast lint clean-results browser

# The report tests open the HTML in Debian's Chromium (installed with apt when missing).
browser:
	@command -v chromium >/dev/null || { \
	  echo "installing Debian's chromium for the browser checks of the report"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,all]"
	touch $(STAMP)

study: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/snakemake --cores $(CORES)

# The kernel census: every operator's kernel in every framework (reports/census.html).
census: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/snakemake census --cores $(CORES)

# The tests on every core (at most four workers: one holds TensorFlow, JAX and PyTorch,
# about 4 GB), each test file in one worker (its module fixtures computed once).
PYTEST := $(BIN)/python -m pytest -n auto --maxprocesses 4 --dist loadfile

test: $(STAMP) browser
	$(PYTEST)

# The tests that take no more than a few seconds each (not marked slow).
test-fast: $(STAMP) browser
	$(PYTEST) -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff check harness tests
	$(BIN)/ruff format --check harness tests

clean-results:
	rm -rf results reports census
