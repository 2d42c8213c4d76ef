# Lorenz operator. `make test` is the README's test command and what .ci/run calls.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

NPM ?= npm

.PHONY: help deps build test lint tools

help: ## List the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

node_modules/.package-lock.json: package.json package-lock.json
	$(NPM) ci --no-audit --no-fund

deps: node_modules/.package-lock.json ## Install dependencies (Node 24 comes from the npm registry's node package)

build: deps ## Compile and bundle the lorenz CLI and the in-pod runner into dist/
	$(NPM) run build

lint: deps ## eslint, prettier, tsc --noEmit
	$(NPM) run lint

tools: ## kube-apiserver, etcd, kubectl, kube-controller-manager, helm, kueue, the CSI parts: cached, else built from the Go proxy
	hack/tools.sh > /dev/null
	hack/tools.sh path kueue > /dev/null
	for tool in csi-hostpath csi-provisioner csi-snapshotter snapshot-controller; do hack/tools.sh path "$$tool" > /dev/null; done

test: build lint tools ## Every test tier that runs on this machine (unit + integration + containers)
	hack/ensure-sshd.sh
	hack/ensure-postgres.sh >/dev/null
	hack/ensure-chromium.sh >/dev/null
	$(NPM) test

# Packaging and the newcomer's path: Dockerfile, charts/lorenz, config/, hack/*.sh.
.PHONY: crds dev demo docker-build images helm-lint e2e-kind e2e-real-node e2e-local

IMG ?= ghcr.io/lorenz-dev/lorenz:0.1.0
# Where `make demo` runs: local (the local control plane, no Docker) or kind.
CLUSTER ?= local
AGENT_IMG ?= ghcr.io/lorenz-dev/lorenz-agent:0.1.0

crds: deps ## Regenerate crds/ and config/rbac from src/api; sync the chart and config/crd
	hack/run-ts.sh hack/gen-crds.ts
	hack/run-ts.sh hack/sync-chart.ts

dev: build ## Local cluster + the controller in the foreground; Ctrl-C tears it down
	hack/dev.sh

demo: build ## The samples to Succeeded on the local control plane, then stops it (KEEP=1 keeps it; CLUSTER=kind: on kind, with Docker)
	DEMO_KEEP='$(KEEP)' DEMO_CLUSTER='$(CLUSTER)' hack/demo.sh

docker-build: ## Build the operator image $(IMG) and the example agent image $(AGENT_IMG)
	docker build -t $(IMG) .
	docker build -t $(AGENT_IMG) examples/agent-image

images: deps ## Build the base, operator and agent images here, with no image registry (cached by input digest)
	hack/images.sh

helm-lint: deps ## Check the chart's synced copies, helm lint --strict and helm template
	hack/run-ts.sh hack/sync-chart.ts --check
	"$$(hack/tools.sh path helm)" lint --strict charts/lorenz
	"$$(hack/tools.sh path helm)" template lorenz charts/lorenz --namespace lorenz-system >/dev/null

e2e-kind: ## End to end on kind: image, helm install --wait, samples to Succeeded (Docker)
	hack/e2e-kind.sh

e2e-real-node: build ## The samples to Succeeded on a real node (kubelet + containerd) of the local control plane (root)
	hack/e2e-real-node.sh

e2e-local: build ## The chart (built operator image) on the local control plane with the real node and kube-proxy; the samples to Succeeded (root)
	hack/e2e-local.sh
