# The two commands a newcomer needs: `make run` and `make test`.
# Everything installs itself into .venv on first use.

SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
APP_PORT ?= 8000
SANDBOX_PORT ?= 8100
export APP_PORT SANDBOX_PORT
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: run test sandbox install install-dev migrate seed lint format bench soak screenshots clean

$(BIN)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements.txt
	touch $@

$(BIN)/.installed-dev: requirements-dev.txt $(BIN)/.installed
	$(PY) -m pip install --disable-pip-version-check -q -r requirements-dev.txt
	touch $@

install: $(BIN)/.installed
install-dev: $(BIN)/.installed-dev

migrate: install
	@mkdir -p var
	$(PY) manage.py migrate --noinput -v 0

seed: migrate
	$(PY) manage.py seed_demo
	@# The demo seller's own order system (the simulated seller in the Procfile) signs in as this.
	$(PY) -m sandbox create-api-user --seller demo-seller --username demo-seller-api --password demo-seller-api-pass --client-id 100001

## make run: the whole stack (sandbox, simulated seller, web, worker, beat), supervised (marketplace/run_stack.py); Ctrl-C stops everything.
run: seed
	@echo ""
	@echo "  Marketplace app:   http://127.0.0.1:$(APP_PORT)/   (staff dashboard: /dashboard/, seller portal: /sellers/)"
	@echo "  Platform sandbox:  http://127.0.0.1:$(SANDBOX_PORT)/sandbox/   (API: http://127.0.0.1:$(SANDBOX_PORT)/api/v1)"
	@echo "  Seller's orders:   http://127.0.0.1:$(SANDBOX_PORT)/sandbox/v2/  (order API v2; the simulated seller works through it)"
	@echo "  Intake API docs:   http://127.0.0.1:$(APP_PORT)/api/intake/docs"
	@echo "  Demo accounts are listed in README.md and were printed above. Ctrl-C stops everything"
	@echo "  (make then prints its own \"Interrupt\" line: that is make, not a failure)."
	@echo ""
	$(PY) -m marketplace.run_stack start -f Procfile

## make sandbox: the platform sandbox alone.
sandbox: install
	$(PY) -m sandbox serve --port $(SANDBOX_PORT)

## make test: ruff (lint and format) + mypy (the app, then the sandbox with its own settings) + migration checks (app and sandbox) + the whole pytest suite (Postgres/Redis when DATABASE_URL/REDIS_URL are set).
test: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/mypy --config-file sandbox/mypy.ini
	$(PY) manage.py makemigrations --check --dry-run -v 1
	DJANGO_SETTINGS_MODULE=sandbox.settings $(PY) -m django makemigrations --check --dry-run -v 1
	$(PY) -m pytest $(PYTEST_ARGS)

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/mypy --config-file sandbox/mypy.ini

format: install-dev
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: install-dev
	$(PY) -m bench $(BENCH_ARGS)

soak: install-dev
	$(PY) -m bench.soak $(SOAK_ARGS)

screenshots: install-dev
	$(PY) -m docs.screenshots

clean:
	rm -rf var staticfiles
