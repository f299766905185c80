# Countersign. The two commands for a fresh Debian machine are `make run` and `make test`.
SHELL := /bin/bash
PG := scripts/pg.sh
PORT ?= 8080
HOST ?= 127.0.0.1
DATABASE ?= countersign

.PHONY: run test test-ports-taken browser-test reliability deps build release migrate serve db-start db-stop db-url clean-data clean bench

## run: install what is missing, start PostgreSQL under .data/, migrate, build release, serve (with a development
## checkpoint key and data keys generated in .data/ (checkpoint-ed25519.pem, data-keys: CHECKPOINT_KEY_GENERATE=true, DATA_KEY_GENERATE=true). `migrate` connects as the
## owner role (countersign), `serve` as the runtime role (countersign_app) that migrate grants.
run: deps db-start release
	@$(PG) createdb $(DATABASE)
	@MIGRATION_DATABASE_URL="$$($(PG) owner-url $(DATABASE))" .build/release/countersign migrate
	@echo "Countersign is serving on http://$(HOST):$(PORT)  (Ctrl-C stops it; 'make db-stop' stops PostgreSQL)"
	@DATABASE_URL="$$($(PG) url $(DATABASE))" HOST=$(HOST) PORT=$(PORT) CHECKPOINT_KEY_GENERATE=true DATA_KEY_GENERATE=true exec .build/release/countersign serve

## test: the whole suite against a fresh test database; stops the cluster if it started it
test: deps
	@scripts/test.sh

## test-ports-taken: `make test` while dummy listeners hold 127.0.0.1:8080, 18080 and 5544 (scripts/ports-taken.sh)
test-ports-taken: deps
	@scripts/ports-taken.sh

## reliability: the reliability and security proof, long form (about 2 h; fuzzers 10 min each, soak 30 min),
## with a summary table (docs/reliability.md)
reliability: deps
	@scripts/reliability.sh --long

## browser-test: only the web console test (headless chromium) against a debug build; leaves the cluster running
browser-test: deps db-start
	swift build --product countersign
	@scripts/browser-test.sh .build/debug/countersign

deps:
	@scripts/deps.sh

build:
	swift build

release:
	swift build -c release --product countersign

migrate: deps db-start release
	@$(PG) createdb $(DATABASE)
	MIGRATION_DATABASE_URL="$$($(PG) owner-url $(DATABASE))" .build/release/countersign migrate

db-start:
	@$(PG) start

db-stop:
	@$(PG) stop

db-url:
	@$(PG) url $(DATABASE)

clean-data: db-stop
	rm -rf .data

clean:
	rm -rf .build test-output
