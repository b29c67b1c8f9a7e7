# Every target sets itself up: the virtualenv is created and the pinned
# dependencies installed on first use (only Python 3.11+ and make are needed).
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := generated

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export PATH := $(abspath $(BIN)):$(PATH)

PACKAGE := generated/service_api_client
# What the generated client is made of: the spec, the generator (its driver, configuration,
# templates and the modules it copies in as they are) and the spec model it reads.
CODEGEN_INPUTS := openapi.yaml codegen/config.yaml $(wildcard codegen/*.py codegen/package/*.py \
  codegen/templates/* spec/service_api_spec/*.py)

.PHONY: generated generate check-generated lint typecheck docs dist test test-core test-fuzz lock clean demo mock fuzz bench chaos mutation redis-server prism

# ---- environment -----------------------------------------------------------

$(VENV)/.installed: pyproject.toml requirements.lock
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
	  || { echo "Python 3.11 or newer is needed (set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
	  -c requirements.lock -e '.[dev]'
	@$(MAKE) --no-print-directory redis-server
	@$(MAKE) --no-print-directory prism
	@touch $@

# The Redis tests run a real redis-server: install Debian's package where we may
# (root and apt-get); elsewhere say so and go on (those tests then skip, saying why).
redis-server:
	@if command -v redis-server >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing redis-server with apt-get"; \
	  { apt-get install -y -qq redis-server >/dev/null 2>&1 \
	    || { apt-get update -qq >/dev/null && apt-get install -y -qq redis-server >/dev/null; }; } \
	  || echo "redis-server could not be installed: the Redis tests will be skipped"; \
	else \
	  echo "redis-server is not installed and cannot be here (needs root and apt-get):" \
	    "the Redis tests will be skipped"; \
	fi

# The spec check's tests also run against Stoplight Prism, a server the project did not
# write: install its pinned version with npm where npm is (a few seconds with npm's
# cache filled); elsewhere say so and go on (those tests then skip, saying why).
PRISM_VERSION := 5.16.0
PRISM := .tools/prism/node_modules/.bin/prism
prism:
	@if [ -x $(PRISM) ]; then :; \
	elif command -v npm >/dev/null; then \
	  echo "installing Stoplight Prism $(PRISM_VERSION) with npm into .tools/prism"; \
	  npm install --prefix .tools/prism --no-audit --no-fund --loglevel=error \
	    @stoplight/prism-cli@$(PRISM_VERSION) >/dev/null \
	  || echo "Prism could not be installed: the spec check's Prism tests will be skipped"; \
	else \
	  echo "npm is not installed: the spec check's Prism tests will be skipped"; \
	fi

# Re-pin every dependency to the newest versions that satisfy pyproject.toml.
lock:
	rm -rf .lock-venv
	$(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --disable-pip-version-check '.[dev]'
	.lock-venv/bin/python -m pip freeze --exclude-editable --disable-pip-version-check \
	  | grep -v '^service-api' > requirements.lock
	rm -rf .lock-venv

# ---- generated client ------------------------------------------------------

# Regenerated only when one of its inputs changed. The package is written to a folder
# beside generated/ and swapped in only once the mock's check passed (it can serve every
# operation of the spec: one it cannot serve fails here, with the operationId and the
# reason, rather than answering 500 later; SPEC_CHECK is that check's command); a failed
# run leaves generated/ as it was, and the next make tries again.
SPEC_CHECK ?= $(BIN)/python -m service_api_mock --check-spec
define generate_and_swap
mkdir -p generated; next=$$(mktemp -d generated/.next-XXXXXX); trap 'rm -rf "$$next"' EXIT; \
$(BIN)/python codegen/generate.py "$$next"; \
$(SPEC_CHECK) openapi.yaml >/dev/null; \
if [ -d $(PACKAGE) ]; then mv $(PACKAGE) "$$next/previous"; fi; \
mv "$$next/service_api_client" $(PACKAGE); \
echo "generated/ from openapi.yaml"
endef

# The check runs on every make, regenerated or not: a mock that changed is checked too.
# Its warnings were said where the package was generated: here only a failure speaks.
generated: $(PACKAGE)/__init__.py
	@said=$$($(SPEC_CHECK) openapi.yaml 2>&1 >/dev/null) || { echo "$$said" >&2; exit 1; }

$(PACKAGE)/__init__.py: $(CODEGEN_INPUTS) | $(VENV)/.installed
	@$(generate_and_swap)

generate: | $(VENV)/.installed
	@$(generate_and_swap)

check-generated: | $(VENV)/.installed
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(BIN)/python codegen/generate.py "$$tmp"; \
	if ! diff -ru generated/service_api_client "$$tmp/service_api_client"; then \
	  echo "generated/ is stale: run 'make generate' and commit the result" >&2; exit 1; \
	fi; \
	echo "generated/ matches openapi.yaml"

# ---- checks ----------------------------------------------------------------

lint: | $(VENV)/.installed
	openapi-spec-validator openapi.yaml
	ruff check spec speccheck overlay mock cli tests bench codegen
	ruff format --check spec speccheck overlay mock cli tests bench codegen

typecheck: | $(VENV)/.installed
	mypy spec/service_api_spec speccheck/service_api_speccheck overlay/service_api mock/service_api_mock cli/service_api_cli tests bench
	mypy generated/service_api_client
	MYPYPATH=codegen mypy codegen/generate.py codegen/facts.py codegen/validate.py

# The docs site (guides, extras, API reference from the docstrings, development) into
# build/docs/; strict, so a broken cross-reference or link fails the build (and make test).
# The performance page shows the chart of the last `make bench`: mkdocs serves only docs/.
# The examples of the README and the docs run in pytest (tests/docs).
docs: | $(VENV)/.installed
	cp bench/results/concurrency.png docs/development/concurrency.png
	cp bench/results/load/load.png docs/development/load.png
	$(BIN)/mkdocs build --quiet --strict
	@echo "docs: build/docs/index.html"

# A wheel of the package (library, generated client, CLI, mock) into dist/, built with
# the pinned hatchling: `pip install 'dist/service_api-<version>-py3-none-any.whl[cli,dlt]'`
# into any virtualenv.
dist: generated
	$(BIN)/python -m pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation -w dist .
	@ls dist/*.whl

# The checks run two at a time (generated/ is compared as committed, before anything could
# regenerate it), then the suite on $(TEST_WORKERS) processes with pytest-xdist: a test
# file stays on one worker, so a module's fixtures start once. tests/core runs in the
# core-alone virtualenv of test-core; here only its check of the modules an import loads
# in the full virtualenv, where the extras could be loaded.
TEST_WORKERS ?= 2
CORE_ONLY_TESTS := $(filter-out tests/core/test_core_alone.py,$(wildcard tests/core/test_*.py))
# The fuzz module runs in a process of its own, beside the checks: in an xdist worker,
# schemathesis runs a parametrized test for the first operation of the spec only.
FUZZ_TESTS := tests/mock/test_mock_fuzz.py
test: | $(VENV)/.installed
	$(MAKE) --no-print-directory -j2 --output-sync=target check-generated lint typecheck docs test-core test-fuzz
	pytest -n $(TEST_WORKERS) --dist loadfile $(addprefix --ignore=,$(CORE_ONLY_TESTS) $(FUZZ_TESTS)) \
	  tests tests/core/test_core_alone.py

test-fuzz: | $(VENV)/.installed
	pytest -q -p no:cacheprovider $(FUZZ_TESTS)

# The core alone, as `pip install service-api` gives it: a fresh virtualenv with the wheel
# and its pinned core dependencies and no extra, plus what tests/core needs to run (the
# mock and its server, pytest, hypothesis). CORE_ALONE=1 tells test_core_alone to assert
# that pip lists none of the extras' distributions; importing service_api and a full
# iteration must load none of their modules.
CORE_VENV := .venv-core
CORE_WHEEL := build/core-wheel
test-core: | $(VENV)/.installed
	rm -rf $(CORE_VENV) $(CORE_WHEEL)
	$(BIN)/python -m pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation \
	  -w $(CORE_WHEEL) .
	$(PYTHON) -m venv $(CORE_VENV)
	$(CORE_VENV)/bin/python -m pip install --quiet --disable-pip-version-check \
	  -c requirements.lock "$$(ls $(CORE_WHEEL)/service_api-*.whl)[mock]" pytest hypothesis pytest-timeout
	CORE_ALONE=1 $(CORE_VENV)/bin/pytest -q -p no:cacheprovider tests/core

# ---- mock service -----------------------------------------------------------

# Serve the mock of the public API on 127.0.0.1:$(PORT) (Ctrl-C stops it):
# make mock PORT=9000; more options with MOCK_ARGS="--records 500 --fault-rate 0.1".
PORT ?= 8080
MOCK_ARGS ?=
mock: | $(VENV)/.installed
	$(BIN)/python -m service_api_mock --host 127.0.0.1 --port $(PORT) $(MOCK_ARGS)

# Schemathesis at full size: >= 1,000 cases per operation (positive and negative) plus
# stateful sequences through the spec's links; prints the counts; any failure fails.
# Then the generative spec test draws 20 grown specs (make test draws 1).
fuzz: | $(VENV)/.installed
	FUZZ_EXAMPLES=1000 FUZZ_STATEFUL_EXAMPLES=200 $(BIN)/pytest -p no:logging -s -q --timeout=1800 tests/mock/test_mock_fuzz.py
	GROWTH_EXAMPLES=20 $(BIN)/pytest -q --timeout=1800 tests/spec/test_spec_growth.py
	CORPUS=all $(BIN)/pytest -q --timeout=3600 tests/spec/test_spec_corpus.py

# Chaos export at full size: 3 accounts x 5,000 records through 20 % 503/429, 5 %
# dropped connections, 0-30 ms latency, 3 s tokens and periodic revocation, sync and
# async at concurrency 1 and 8; prints requests, faults, retries, refreshes, records.
chaos: | $(VENV)/.installed
	$(BIN)/python tests/reliability/test_chaos.py --records 5000

# Mutation testing of the core, not part of `make test` (a few seconds per mutant): each
# module's mutants against the tests that use it (the table in tests/mutation/run.py),
# one at a time, 60 s each at most; rewrites the table of docs/development/mutation.md.
# One module, or a seeded sample: make mutation MODULES="_retry _page_plan" SAMPLE=60;
# SEED draws another sample (default: the committed one): make mutation SEED=4242 SAMPLE=40
MODULES ?=
SAMPLE ?=
SEED ?=
mutation: | $(VENV)/.installed
	$(BIN)/python tests/mutation/run.py $(if $(SAMPLE),--sample $(SAMPLE)) $(if $(SEED),--seed $(SEED)) $(MODULES)

# ---- benchmarks ---------------------------------------------------------------

# Every benchmark case (bench/cases/, one module each) at full size against the mock in
# its own process (twenty minutes or more): cases 1 to 7 and 7b (the quota store stopped
# mid-run) write bench/results/results.{json,md} and concurrency.png, the load case (8)
# bench/results/load/results.{json,md} and load.png. One case alone keeps the others'
# results: .venv/bin/python -m bench.run --cases quota_outage
BENCH_CASES := sequential,latency,memory,tokens,overhead,mock_throughput,quota,quota_outage
bench: | $(VENV)/.installed
	$(BIN)/python -m bench.run --cases $(BENCH_CASES)
	$(BIN)/python -m bench.run --cases load --out bench/results/load

# ---- demo --------------------------------------------------------------------

# Start the mock on a free loopback port, export every shipment of two accounts with
# `service-api list`, print a summary, load shipments and devices into DuckDB with
# `service-api load` and count the rows per account in SQL, stop the mock (it runs
# inside the demo process).
demo: | $(VENV)/.installed
	$(BIN)/python -m service_api_cli._demo

clean:
	rm -rf $(VENV) $(CORE_VENV) .tools .mypy_cache .ruff_cache .pytest_cache .hypothesis dist build
