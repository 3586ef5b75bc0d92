# Two set-up commands for a fresh machine (Python 3.11 + Java 17): `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip

.PHONY: run test lint typecheck pytest fast install dev clean sample-data system-deps

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(PIP) install -q -e .
	touch $@

# Programs some tests drive (a terminal, a browser), from Debian's packages. Installed here when
# missing and we are root (CI, fresh machines); otherwise the command to run is printed.
SYSTEM_PROGRAMS := tmux chromium chromedriver
system-deps:
	@missing=""; for p in $(SYSTEM_PROGRAMS); do command -v $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing:$$missing"; \
	    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux chromium chromium-driver >/dev/null; \
	  else echo "tests need:$$missing — install with: sudo apt-get install tmux chromium chromium-driver" >&2; exit 1; fi; \
	fi

# Tests also cover Spark Connect (tests/spark/test_connect.py), so dev includes its client.
$(VENV)/.installed-dev: $(VENV)/.installed
	$(PIP) install -q -e '.[dev,connect]'
	touch $@

# flightsql-dbapi, the Flight SQL SQLAlchemy dialect and DB-API Superset uses, is tested against
# auger's Flight SQL endpoint. Every release of it declares SQLAlchemy < 2 while auger's own
# dialects need SQLAlchemy 2, so pip cannot resolve it beside them; its code runs on SQLAlchemy 2,
# so it is installed without its declared dependencies (the others, pyarrow and protobuf, auger
# has already).
FLIGHTSQL_DBAPI := flightsql-dbapi==0.2.2
$(VENV)/.installed-flightsql: $(VENV)/.installed-dev
	$(PIP) install -q --no-deps '$(FLIGHTSQL_DBAPI)'
	touch $@

install: $(VENV)/.installed
dev: $(VENV)/.installed-dev $(VENV)/.installed-flightsql

run: install
	$(BIN)/auger demo

LINT_PATHS := $(wildcard src tests benchmarks examples scripts)

# The import layers of docs/architecture.md: an import of a higher layer, or a cycle between
# top-level packages or between modules (imports inside functions included), fails the build.
LAYERS_CHECK := $(BIN)/python scripts/check_layers.py

lint: dev
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/ruff format --check $(LINT_PATHS)
	$(LAYERS_CHECK)

typecheck: dev
	$(BIN)/mypy

# Two workers, a test file each at a time (a file's module fixtures, such as its server, start
# once), each worker with its own session-scoped SparkSession: about half of a serial run's
# time was the cores waiting while the tests' own processes (servers, shells, JVMs) started,
# which a second worker fills (1,050-1,200 s serial, 765 s on two workers, same machine).
pytest: dev system-deps
	$(BIN)/pytest -q -n 2 --dist loadfile

# Fast suite: everything that needs no Java.
fast: dev
	$(BIN)/pytest -q -m "not spark"

test: lint typecheck pytest

sample-data: install
	$(BIN)/python scripts/make_sample_data.py src/auger/data

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
