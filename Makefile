# Lorenz operator. `make test` is the README's test command and what .ci/run calls.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

NPM ?= npm

.PHONY: help deps build test lint

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

node_modules/.package-lock.json: package.json package-lock.json
	$(NPM) ci --no-audit --no-fund

deps: node_modules/.package-lock.json ## Install dependencies (Node 24 comes from the npm registry's node package)

build: deps ## Compile and bundle the lorenz CLI and the in-pod runner into dist/
	$(NPM) run build

lint: deps ## eslint, prettier, tsc --noEmit
	$(NPM) run lint

test: build lint ## Every test tier that runs on this machine (unit + integration)
	$(NPM) test
