# pyhudi — one command surface. `make help` lists the targets.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
export PYSPARK_PYTHON   := $(abspath $(BIN)/python)
export SPARK_LOCAL_IP   := 127.0.0.1
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: help install demo demo-cluster test test-fast test-pyspark35 lint format bench clean check-java

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  make %-10s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "error: python3 (3.10+) is required"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $(STAMP)

#: pytest-xdist workers of `make test`: each a pytest process with its own Spark session; whole
#: test modules go to one worker (`--dist loadscope`), so module fixtures are built once.
#: TEST_WORKERS=0 runs the suite in the pytest process itself.
TEST_WORKERS ?= 2

install: $(STAMP) ## create .venv/ and install pyhudi with its test extras

check-java:
	@scripts/check-java

demo: check-java install ## write, update, time-travel and read a demo table under ./demo-data/
	$(BIN)/pyhudi demo --path demo-data

demo-cluster: check-java install ## the demo on a local standalone cluster (master + 1-core worker), stopped afterwards
	$(BIN)/python scripts/demo_cluster.py demo-data

test: check-java install ## run the whole test suite (unit, property, Spark, interop) in TEST_WORKERS workers
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadscope

#: What the pyspark 3.5 tier runs: the Spark tests, hudi-rs and Apache Hudi reading what pyhudi wrote.
PYSPARK35_TESTS ?= tests/spark tests/interop tests/judge/test_hudi_reads_pyhudi_tables.py tests/judge/test_hudi_1x_writes.py

test-pyspark35: check-java ## the Spark tests on pyspark 3.5 (its venv built once, outside the repository)
	@py35=$$(scripts/pyspark35-env) && \
	PYSPARK_PYTHON=$$py35 PYSPARK_DRIVER_PYTHON=$$py35 $$py35 -m pytest -q -n $(TEST_WORKERS) --dist loadscope $(PYSPARK35_TESTS)

test-fast: install ## run only the tests that need no Spark
	$(BIN)/python -m pytest -q -m "not spark"

lint: install ## ruff (lint + format check), the import rules, public docstrings, mypy (strict on the public surface)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/python scripts/check-imports
	$(BIN)/python scripts/check-docstrings
	$(BIN)/mypy
	$(BIN)/mypy --strict --follow-imports=silent src/pyhudi/__init__.py src/pyhudi/api.py src/pyhudi/model

format: install ## apply ruff formatting and safe fixes
	$(BIN)/ruff format src tests bench
	$(BIN)/ruff check --fix src tests bench

bench: check-java install ## run the benchmarks (+ the delta-rs peer: the bench extra), write bench/results.json
	$(BIN)/python -m pip install -q -e '.[test,bench]'
	$(BIN)/python -m bench.run

.PHONY: docs-options
docs-options: install ## regenerate docs/options.md from the option registry
	$(BIN)/python scripts/gen-options-doc

clean: ## remove the venv, caches and demo data
	rm -rf $(VENV) demo-data .pytest_cache .mypy_cache .ruff_cache
