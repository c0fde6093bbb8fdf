# cronjob-operator — kubebuilder-style targets. Run `make help` for the list.
#
# Node: the project runs on Node 24, which npm installs into node_modules (devDependency `node`), so a
# machine with any npm (even Node 20's) can build and test it. Every target uses that Node.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

NODE_MODULES := node_modules/.installed
NODE := $(CURDIR)/node_modules/.bin/node
NPM_RUN := PATH="$(CURDIR)/node_modules/.bin:$$PATH" npm run --silent
KUBECTL ?= kubectl
CRD_DIR := config/crd/bases

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

$(NODE_MODULES): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

.PHONY: deps
deps: $(NODE_MODULES) ## Install dependencies (npm ci), including the project's Node 24.

.PHONY: manifests
manifests: $(NODE_MODULES) ## Generate the CRD (and other manifests) under config/ from the zod schemas.
	$(NODE) hack/generate-manifests.ts

.PHONY: verify-manifests
verify-manifests: $(NODE_MODULES) ## Fail if the committed generated manifests are stale.
	$(NODE) hack/generate-manifests.ts --check

.PHONY: fmt
fmt: $(NODE_MODULES) ## Format the code (prettier) and apply lint fixes.
	$(NPM_RUN) fmt

.PHONY: lint
lint: $(NODE_MODULES) ## Lint (eslint + prettier --check) and type-check.
	$(NPM_RUN) lint
	$(NPM_RUN) typecheck

.PHONY: setup-envtest
setup-envtest: ## Provision etcd + kube-apiserver + kube-controller-manager for tests (cached).
	@hack/setup-envtest

.PHONY: test
test: $(NODE_MODULES) ## Run unit and integration tests (integration against a real kube-apiserver).
	export KUBEBUILDER_ASSETS="$$(hack/setup-envtest)"; \
	$(NPM_RUN) test

.PHONY: test-unit
test-unit: $(NODE_MODULES) ## Run the unit tests only (no control plane).
	$(NPM_RUN) test:unit

##@ Build

.PHONY: build
build: $(NODE_MODULES) ## Compile TypeScript to dist/.
	$(NPM_RUN) build

##@ Deployment

.PHONY: install
install: ## Install the CRDs into the cluster of the current kubeconfig context (server-side apply).
	$(KUBECTL) apply --server-side --force-conflicts -f $(CRD_DIR)

.PHONY: uninstall
uninstall: ## Remove the CRDs from the cluster (and with them every CronJob).
	$(KUBECTL) delete --ignore-not-found -f $(CRD_DIR)
