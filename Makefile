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
# The manager image that docker-build/docker-push build and push and deploy/build-installer deploy.
IMG ?= controller:latest
# The container tool that builds and pushes the image.
CONTAINER_TOOL ?= docker
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
manifests: $(NODE_MODULES) ## Generate the CRD, RBAC and webhook manifests under config/ and dist/install.yaml.
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

.PHONY: run
run: $(NODE_MODULES) manifests ## Run the operator from source: against the current cluster, or (no cluster / LOCAL=1) a local control plane. ARGS=... passes flags.
	LOCAL="$(LOCAL)" exec $(NODE) hack/run.ts $(ARGS)

.PHONY: build
build: $(NODE_MODULES) ## Compile TypeScript to dist/.
	$(NPM_RUN) build

.PHONY: lint-dockerfile
lint-dockerfile: $(NODE_MODULES) ## Check the Dockerfile statically (stages, non-root user, no dev deps, entrypoint = build output).
	$(NODE) hack/lint-dockerfile.ts

# docker-build/docker-push need a container engine; say so plainly instead of failing on a socket error.
CHECK_CONTAINER_ENGINE = if ! $(CONTAINER_TOOL) info >/dev/null 2>&1; then \
	  echo "$@ needs a running container engine, but '$(CONTAINER_TOOL) info' failed (is the Docker daemon running?)." >&2; \
	  echo "Without one, 'make lint-dockerfile' checks the Dockerfile statically." >&2; exit 1; fi

.PHONY: docker-build
docker-build: ## Build the manager image $(IMG) (needs a running Docker engine).
	@$(CHECK_CONTAINER_ENGINE)
	$(CONTAINER_TOOL) build -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the manager image $(IMG) (needs a running Docker engine).
	@$(CHECK_CONTAINER_ENGINE)
	$(CONTAINER_TOOL) push $(IMG)

# `kubectl kustomize config/default` with the manager image set to $(IMG). kubectl's built-in kustomize has
# no `edit set image`, so a throwaway overlay in a temp dir patches the image: config/ is never modified.
KUSTOMIZE_DEFAULT = overlay="$$(mktemp -d)"; trap 'rm -rf "$$overlay"' EXIT; \
	printf '%s\n' 'apiVersion: kustomize.config.k8s.io/v1beta1' 'kind: Kustomization' 'resources:' \
	  "- $$(realpath --relative-to="$$overlay" config/default)" 'patches:' \
	  '- target: {kind: Deployment, labelSelector: control-plane=controller-manager}' '  patch: |-' \
	  '    [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "$(IMG)"}]' \
	  >"$$overlay/kustomization.yaml"; \
	$(KUBECTL) kustomize "$$overlay"

.PHONY: build-installer
build-installer: manifests ## Write dist/install.yaml: the CRD and everything to deploy the manager with image $(IMG).
	@mkdir -p dist
	@echo "kubectl kustomize config/default (image $(IMG)) > dist/install.yaml"
	@$(KUSTOMIZE_DEFAULT) >"$$overlay/install.yaml"; mv "$$overlay/install.yaml" dist/install.yaml

##@ Deployment

.PHONY: install
install: ## Install the CRDs into the cluster of the current kubeconfig context (server-side apply).
	$(KUBECTL) apply --server-side --force-conflicts -f $(CRD_DIR)

.PHONY: uninstall
uninstall: ## Remove the CRDs from the cluster (and with them every CronJob).
	$(KUBECTL) delete --ignore-not-found -f $(CRD_DIR)

.PHONY: deploy
deploy: manifests ## Deploy the manager (image $(IMG)) to the current cluster: config/default, server-side apply. Needs cert-manager.
	@echo "kubectl kustomize config/default (image $(IMG)) | $(KUBECTL) apply --server-side --force-conflicts -f -"
	@$(KUSTOMIZE_DEFAULT) | $(KUBECTL) apply --server-side --force-conflicts -f -

.PHONY: undeploy
undeploy: ## Remove what deploy applied (CRD, CronJobs, namespace, RBAC, webhooks) from the current cluster.
	@echo "kubectl kustomize config/default | $(KUBECTL) delete --ignore-not-found -f -"
	@$(KUSTOMIZE_DEFAULT) | $(KUBECTL) delete --ignore-not-found -f -

##@ Benchmark

# Ours vs the built-in CronJob controller (kube-controller-manager 1.20, controller v2) on fresh envtest
# control planes; about 11 minutes per N at MINUTES=3. Never part of `make test`. See bench/README.md.
.PHONY: bench
bench: $(NODE_MODULES) build ## Benchmark ours vs the built-in CronJob controller (N=1000 MINUTES=3 NAMESPACES=4 OUT=bench/results/<date>.md).
	export KUBEBUILDER_ASSETS="$$(hack/setup-envtest)"; \
	$(NODE) bench/run.ts $(if $(N),--n=$(N)) $(if $(MINUTES),--minutes=$(MINUTES)) \
	  $(if $(NAMESPACES),--namespaces=$(NAMESPACES)) $(if $(OUT),--out=$(OUT))
