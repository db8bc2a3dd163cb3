# adnet: the two commands of the README, and the developer's others.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two install sets, each stamped: what `make run` needs to serve in development (`.[devchain]`: adnet and the
# development chain), and the developer's tools besides (`.[dev]`, which includes `.[devchain]`). Installing one after
# the other adds only what is missing, and a stamp older than pyproject.toml installs its set again.
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run
PYTEST_ARGS ?=
# The suite runs in this many processes (pytest-xdist); 0 runs it in this one.
PYTEST_WORKERS ?= 3
PYTEST := $(BIN)/pytest -n $(PYTEST_WORKERS)
PG_URL ?= postgres://postgres:adnet@127.0.0.1:5432/adnet_test

.PHONY: run test coverage chromium test-postgres lint wheel-check contracts contracts-check bench screenshots clean reliability soak

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP) $(RUN_STAMP)

# An environment installed for the tests serves too.
$(RUN_STAMP): pyproject.toml | $(BIN)/python
	@if [ $(STAMP) -nt pyproject.toml ]; then touch $@; else \
		echo "$(BIN)/pip install --quiet -e '.[devchain]'"; $(BIN)/pip install --quiet -e '.[devchain]' && touch $@; fi

## run: install what serving needs, migrate SQLite, prepare the development chain, load demo data, serve on
## 127.0.0.1:8000
run: $(RUN_STAMP)
	$(BIN)/adnet migrate
	$(BIN)/adnet demo
	$(BIN)/adnet serve

## test: install and run the whole suite (SQLite, embedded chain)
test: $(STAMP) chromium
	$(PYTEST) $(PYTEST_ARGS)

## coverage: the whole suite, measuring the lines and branches of adnet/, api/, portal/ and web/ it runs (CI
## fails below the floor of pyproject.toml's [tool.coverage.report])
coverage: $(STAMP) chromium
	$(PYTEST) --cov --cov-report=term $(PYTEST_ARGS)

# The browser tests drive Debian's Chromium (Playwright's own browser download does not work here).
chromium:
	@test -x /usr/bin/chromium || { SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium; }

## test-postgres: the same suite against PostgreSQL at $(PG_URL)
test-postgres: $(STAMP) chromium
	ADNET_TEST_DATABASE_URL=$(PG_URL) $(PYTEST) $(PYTEST_ARGS)

# Modules held to radon's cyclomatic complexity rank A or B: no function over 10.
COMPLEXITY_CHECKED := adnet/config.py adnet/interactions/answers.py adnet/delivery/billing.py adnet/campaigns/eligibility.py \
	adnet/conversions/attribution.py adnet/core/drain.py

## lint: ruff (with the bandit rules), mypy, the import contracts of pyproject.toml (lint-imports), and the
## complexity of $(COMPLEXITY_CHECKED) (radon)
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	@complex="$$($(BIN)/radon cc --min C --show-complexity $(COMPLEXITY_CHECKED))"; \
		test -z "$$complex" || { echo "functions over complexity 10:"; echo "$$complex"; exit 1; }

## wheel-check: build the wheel, install it in a fresh venv outside the checkout, migrate, load the demo and serve
wheel-check:
	PYTHON=$(PYTHON) .ci/wheel-check

## bench: serve, track and task completion against a server on 127.0.0.1 (a fresh SQLite file with demo data, or
## the PostgreSQL database BENCH_DATABASE_URL names, dropped and created again), then serve and billed tracking
## with 1, 2, 4 and 8 workers
BENCH_DATABASE_URL ?=
bench: $(STAMP)
	$(BIN)/python -m bench.run --database-url "$(BENCH_DATABASE_URL)"
	$(BIN)/python -m bench.tasks --database-url "$(BENCH_DATABASE_URL)"
	$(BIN)/python -m bench.workers --database-url "$(BENCH_DATABASE_URL)"

## reliability: the reliability suites (concurrency, crash, fuzzing, soak) at full size; `make test` runs them reduced
reliability: $(STAMP)
	ADNET_RELIABILITY=full $(BIN)/pytest tests/reliability $(PYTEST_ARGS)

## soak: ten minutes of the benchmark's traffic at 100 requests/s with the server's memory sampled
soak: $(STAMP)
	$(BIN)/python -m bench.soak

## screenshots: retake the pictures of the README, docs/advertisers.md and docs/sdk.md from the browser tests (a real
## server with the demo data; the embed on a publisher's page of another origin, light and dark)
screenshots: $(STAMP) chromium
	ADNET_UPDATE_SCREENSHOTS=1 $(BIN)/pytest tests/browser/portal -k "dashboard or pages_fit_and_pass_axe or targeting_rules or video_creative"
	ADNET_UPDATE_SCREENSHOTS=1 $(BIN)/pytest tests/browser/test_embed_look.py -k screenshots

## contracts: rebuild the committed contract artifacts with the pinned compiler
contracts:
	cd contracts && npm ci --no-audit --no-fund && node build.mjs

contracts-check:
	cd contracts && npm ci --no-audit --no-fund && node build.mjs --check

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache .mypy_cache
