# Two set-up commands for a fresh machine (Python 3.11 + Java 17): `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip

.PHONY: run test lint typecheck pytest fast install dev clean sample-data

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(PIP) install -q -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PIP) install -q -e '.[dev]'
	touch $@

install: $(VENV)/.installed
dev: $(VENV)/.installed-dev

run: install
	$(BIN)/auger demo

LINT_PATHS := $(wildcard src tests benchmarks examples scripts)

lint: dev
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/ruff format --check $(LINT_PATHS)

typecheck: dev
	$(BIN)/mypy

pytest: dev
	$(BIN)/pytest -q

# Fast suite: everything that needs no Java.
fast: dev
	$(BIN)/pytest -q -m "not spark"

test: lint typecheck pytest

sample-data: install
	$(BIN)/python scripts/make_sample_data.py src/auger/data

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
