# Rejuv's build, test and local-cluster targets. `make help` lists them.

# Tool versions, pinned here and nowhere else. The programs the tests build
# from source, the local cluster's Kubernetes, helm (for the chart in
# config/helm/rejuv), metrics-server (for the memory rules' end-to-end
# tests), kwok (for the scale benchmark) and krew (for the released
# plugin), are pinned by test/cluster/kubebuild/go.mod, with checksums, and
# built there in one go build.
CONTROLLER_GEN_VERSION ?= v0.23.0
GOLANGCI_LINT_VERSION  ?= v2.15.0
ACTIONLINT_VERSION     ?= v1.7.12

GO      ?= go
# Rejuv's version has one home, the Helm chart's appVersion: the images' tag
# and what the binaries report.
VERSION ?= $(shell sed -n 's/^appVersion: *//p' config/helm/rejuv/Chart.yaml)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null)
# A registry (host[:port][/path]) make images pushes to as well; none when empty.
REGISTRY ?=
# What make deploy and make install-file add to config/default: the
# component of the nodes' container runtime (RUNTIME: crio, k3s, which
# serves RKE2 too, or cri-dockerd; empty or containerd adds none), and
# more kustomize components (COMPONENTS, separated by spaces: folders of
# config/components such as monitoring, image-pull-secret and
# critical-priority-quota, or folders of your own).
RUNTIME ?=
COMPONENTS ?=
INSTALL_OPTIONS = -registry '$(REGISTRY)' -runtime '$(RUNTIME)' -components '$(COMPONENTS)'
# The platforms every image make images builds holds.
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
LDFLAGS := -X github.com/rejuv-dev/rejuv/cmd/internal/buildinfo.Version=$(VERSION) \
           -X github.com/rejuv-dev/rejuv/cmd/internal/buildinfo.Commit=$(COMMIT)

CONTROLLER_GEN := $(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
GOLANGCI_LINT  := $(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
ACTIONLINT     := $(GO) run github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)
CLUSTER        := $(GO) run ./test/cluster
# Built once from the Go module proxy, where the harness builds it too.
KUBECTL        ?= kubectl

# Every package but the end-to-end tests. Under -short (make test-unit) their
# tests need no cluster and no Kubernetes binaries.
DEMO_DURATION ?= 4m
UNIT_PKGS = $(shell $(GO) list ./... | grep -v -e /test/e2e)
BENCH_PKGS = $(shell $(GO) list ./... | grep -v -e /test/e2e -e /test/bench)
# How many end-to-end tests that may share the cluster run at once. Most
# of their time is waiting (for probes, grace periods, the kubelet's
# back-off), so more than go test's default of one per core: on two cores
# the phase took 1,017 s at four and 1,199 s at two. At six (785 s) the
# control plane of a loaded 2-core machine falls behind what a Service's
# clients need: in one whole make test in two, a connection of
# TestRollingRestartThroughAServiceFailsNoRequest reached a pod stopped
# 5 s (the default unready grace) after it left the Service.
E2E_PARALLEL ?= 4
# Where `make test` appends "phase NAME: SECONDS" lines (read by .ci/run).
PHASE_LOG ?= /dev/null
# Runs a command at idle CPU priority (util-linux's chrt; nice 19 where chrt
# is missing or may not set it).
IDLE = $(shell chrt --idle 0 true 2>/dev/null && echo chrt --idle 0 || echo nice -n 19)

.DEFAULT_GOAL := help
SHELL := /bin/bash

.PHONY: help
help: ## Show the targets.
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

.PHONY: build
# Static binaries, as Kubernetes components are: no libc to map (the daemon's
# resident memory is 2.5 MiB smaller) and none needed in the image.
build: ## Build the three binaries into bin/ with the version stamped.
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/rejuv-healer ./cmd/healer
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/rejuv-daemon ./cmd/daemon
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/kubectl-rejuv ./cmd/kubectl-rejuv

.PHONY: krew
krew: ## Package kubectl-rejuv for krew (archives per platform and the plugin manifest rejuv.yaml) into bin/krew; VERSION must be vX.Y.Z.
	$(GO) run ./config/krew -version '$(VERSION)' -commit '$(COMMIT)' -out bin/krew

# make release: where the release is written and where it is published.
RELEASE_DIR              ?= bin/release/$(VERSION)
RELEASE_URL              ?= https://github.com/rejuv-dev/rejuv/releases/download
RELEASE_IMAGE_PLATFORMS  ?= linux/amd64,linux/arm64
RELEASE_PLUGIN_PLATFORMS ?= linux/amd64,linux/arm64,darwin/amd64,darwin/arm64

.PHONY: release
release: ## Cut release VERSION (vX.Y.Z, the chart's appVersion) into RELEASE_DIR: images pushed to REGISTRY and as archives, install files and chart pinned by digest, the plugin for krew, SBOMs, notes, SHA256SUMS (docs/releasing.md).
	$(GO) run ./config/release -version '$(VERSION)' -commit '$(COMMIT)' -registry '$(REGISTRY)' -out '$(RELEASE_DIR)' \
		-url-base '$(RELEASE_URL)' -image-platforms '$(RELEASE_IMAGE_PLATFORMS)' -plugin-platforms '$(RELEASE_PLUGIN_PLATFORMS)'

.PHONY: install-file
install-file: ## Write bin/install.yaml: config/default with Rejuv's images in REGISTRY (host[:port][/path]; required) and the components RUNTIME and COMPONENTS name.
	@test -n '$(REGISTRY)' || { echo "install-file: set REGISTRY to where make images REGISTRY=... pushed the images"; exit 1; }
	$(GO) run ./config/render $(INSTALL_OPTIONS) -o bin/install.yaml

.PHONY: images
images: ## Build the manager's, the daemon's and the demo app's images (IMAGE_PLATFORMS) as archives in bin/images, push them to REGISTRY (host[:port][/path]) when set, and print their sizes.
	$(GO) run ./test/images/rejuv -commit '$(COMMIT)' -out bin/images -registry '$(REGISTRY)' -platforms '$(IMAGE_PLATFORMS)'

# The soak make test runs: short, with a fixed seed, so that a failure can
# be replayed (make soak SOAK_DURATION=5m SOAK_SEED=...).
TEST_SOAK_DURATION ?= 5m
TEST_SOAK_SEED     ?= 42
.PHONY: test
# On a fresh machine the cluster's start compiles Kubernetes, helm and
# metrics-server from source, in one go build that compiles the packages
# they share once (Rejuv's own build beside it saved nothing: both are
# bound by the two cores). The compatibility run's Kubernetes and
# containerd 1.7 are built from the start at idle priority (SCHED_IDLE:
# they take only a core nothing else wants), and the compatibility run
# waits for them. In a cold run they were done when the cluster was up,
# and the two builds before took 4.5 minutes longer (a Go build leaves a
# core idle part of the time; the builds share the network and the disk);
# built beside the scale run at normal priority, they had kept it 6.5
# minutes longer. The install paths, which mostly wait for
# rollouts on the cluster, run beside the unit and integration tests
# (envtest's own API servers), before the end-to-end tests take the
# cluster. The install paths from the source tree with the single file,
# with Helm and beside OpenKruise run in the compatibility run; here, the
# released file and chart show the first two, the chart beside OpenKruise
# the third. The soak runs last on the newest version's cluster, which the
# compatibility run then replaces: what its faults leave behind reaches no
# other phase.
test: ## Everything: unit, integration and end-to-end tests on a real local cluster, a small scale run, a 5-minute soak and the compatibility run (installs what is missing; needs root).
	@set -eo pipefail; \
	phase() { local name=$$1 start=$$(date +%s%N); shift; "$$@"; \
	  local ms=$$(( ($$(date +%s%N) - start) / 1000000 )); \
	  printf 'phase %s: %d.%03ds\n' "$$name" $$((ms / 1000)) $$((ms % 1000)) | tee -a $(PHASE_LOG); }; \
	beside() { local log=$$(mktemp) main=0 side=0; $$1 >"$$log" 2>&1 & local pid=$$!; shift; \
	  "$$@" || main=$$?; wait $$pid || side=$$?; cat "$$log"; rm -f "$$log"; \
	  [ $$main -eq 0 ] && [ $$side -eq 0 ]; }; \
	if $(CLUSTER) status | grep -q '^healthy'; then started=; else started=1; fi; \
	oldest_log=$$(mktemp); \
	setsid $(IDLE) env REJUV_KUBERNETES=oldest $(CLUSTER) build >"$$oldest_log" 2>&1 & oldest=$$!; \
	trap 'kill -- -$$oldest 2>/dev/null || true; rm -f "$$oldest_log"; if [ -n "$$started" ]; then $(CLUSTER) down; fi' EXIT; \
	phase build $(MAKE) --no-print-directory build; \
	phase "cluster up (builds Kubernetes, helm, metrics-server, kwok and krew once)" $(CLUSTER) up; \
	phase "unit and integration tests, install paths beside them" beside "$(GO) test -count=1 -timeout 30m -skip $(COMPAT_INSTALL) ./test/e2e/install/" \
	  $(GO) test -count=1 -timeout 30m $(UNIT_PKGS); \
	phase "end-to-end tests" $(GO) test -count=1 -timeout 30m -parallel $(E2E_PARALLEL) ./test/e2e/; \
	phase "scale smoke run (100 simulated nodes, 1,000 pods)" $(MAKE) --no-print-directory bench-scale \
	  REJUV_SCALE_NODES=100 REJUV_SCALE_SIZES=1000 REJUV_SCALE_NAMESPACES=10 REJUV_SCALE_SETTLE=15s; \
	phase "soak ($(TEST_SOAK_DURATION) of load and faults, seed $(TEST_SOAK_SEED))" env SOAK_DURATION=$(TEST_SOAK_DURATION) SOAK_SEED=$(TEST_SOAK_SEED) $(GO) run ./test/soak; \
	oldest_built() { wait $$oldest || { cat "$$oldest_log"; return 1; }; cat "$$oldest_log"; }; \
	phase "the oldest Kubernetes and containerd 1.7 built (at idle priority, from the start)" oldest_built; \
	phase "compatibility run (oldest Kubernetes, containerd 1.7)" $(MAKE) --no-print-directory test-compat

# The compatibility run: the oldest Kubernetes Rejuv supports
# (test/cluster/kubebuild-oldest) on two nodes with containerd 1.7, the
# runtime its users have. It replaces the newest version's cluster, runs
# the install paths and the core of the end-to-end tests on it
# (docs/operations.md says why these), and leaves it running.
COMPAT_INSTALL = ^(TestInstallWithTheSingleFile|TestInstallWithHelm|TestInstallBesideOpenKruise)$$
# The memory rules from Prometheus without its subtests (the plateau,
# signals, tenants' queries): the source and the leak are what the
# version could change; the rest is the rules' and the manager's own.
COMPAT_SKIP = ^TestMemoryFromPrometheus$$/.
COMPAT_E2E = ^(TestCRRRecreatesTwoContainersInPlace|TestWebhooksAdmitAndConvertThroughTheirService|TestDaemonFindsTheNodesRuntime|TestShippedRolesGrantOnlyWhatTheCodeUses|TestDaemonTokenWritesOnlyItsNodesRequests|TestADaemonCannotWriteTheStatusOfAnotherNodesRequest|TestARequestOnTheSecondNodeIsItsDaemonsAlone|TestEditorCannotForgeARequestsStatus|TestPreStopOfEachKindRunsBeforeTheStop|TestUnreadyGraceTakesThePodOutOfServiceFirst|TestPolicyRollingRestart|TestPolicyInlineRuleOnAnnotation|TestPolicyRespectsDisruptionBudget|TestMemoryFromPrometheus)$$

.PHONY: test-compat
test-compat: ## The oldest supported Kubernetes with containerd 1.7 on two nodes: install paths and the core end-to-end tests (builds them once; needs root).
	REJUV_KUBERNETES=oldest $(CLUSTER) up
	REJUV_KUBERNETES=oldest $(GO) test -count=1 -timeout 30m -run '$(COMPAT_INSTALL)' ./test/e2e/install/
	REJUV_KUBERNETES=oldest $(GO) test -count=1 -timeout 30m -parallel $(E2E_PARALLEL) -run '$(COMPAT_E2E)' -skip '$(COMPAT_SKIP)' ./test/e2e/

.PHONY: test-unit
test-unit: ## Fast tests: no cluster, no Kubernetes binaries.
	$(GO) test -short -count=1 $(UNIT_PKGS)

.PHONY: test-e2e
test-e2e: ## End-to-end tests only (starts the cluster if needed), then the install paths.
	$(GO) test -count=1 -timeout 30m -parallel $(E2E_PARALLEL) -v ./test/e2e/
	$(GO) test -count=1 -timeout 30m -v ./test/e2e/install/

.PHONY: demo
demo: ## Start the local cluster and Rejuv, apply config/samples and show live what the policies do (DEMO_DURATION, default 4m).
	$(GO) run ./test/demo -duration $(DEMO_DURATION)

.PHONY: bench
bench: ## Benchmarks that need no cluster; each prints its time per operation.
	$(GO) test -short -run '^$$' -bench . -benchmem $(BENCH_PKGS)

.PHONY: bench-engine
bench-engine: ## The Rego engine on 10,000 pods against the simple way; prints a table per policy, then the bytes it keeps a pod.
	$(GO) test -run '^$$' -bench BenchmarkPolicyEngine -benchtime 1x -timeout 20m ./test/bench/engine

.PHONY: bench-backtest
bench-backtest: ## The backtest's replay of a week of 30 s samples of 1,000 containers (the memory-leak rule, the manager's windows and passes); prints how long it took and the heap it held.
	$(GO) test -count=1 -run '^$$' -bench BenchmarkBacktest -benchtime 1x -timeout 90m ./healer/backtest

.PHONY: bench-scale
bench-scale: ## The manager as installed among thousands of simulated pods (kwok, built once into .cache); prints its memory, API requests, reaction time, a 1,000-pod rolling restart and the engine's sampled pass at each size (REJUV_SCALE_NODES, REJUV_SCALE_SIZES, REJUV_SCALE_NAMESPACES, REJUV_SCALE_SETTLE, REJUV_SCALE_GOGC).
	REJUV_SCALE_NODES=$(REJUV_SCALE_NODES) REJUV_SCALE_SIZES=$(REJUV_SCALE_SIZES) REJUV_SCALE_NAMESPACES=$(REJUV_SCALE_NAMESPACES) REJUV_SCALE_SETTLE=$(REJUV_SCALE_SETTLE) REJUV_SCALE_GOGC=$(REJUV_SCALE_GOGC) \
	  $(GO) test -count=1 -run '^$$' -bench BenchmarkScale -benchtime 1x -timeout 120m ./test/bench/scale

.PHONY: bench-cluster
bench-cluster: ## The recreation latency, the create call's breakdown and one container recreated again and again (the kubelet's back-off) on the local cluster (starts it if needed); prints three tables.
	$(GO) test -run '^$$' -bench 'BenchmarkRecreate|BenchmarkCreateCall|BenchmarkRecreateBackOff' -benchtime 1x -timeout 45m ./test/bench

.PHONY: bench-traffic
bench-traffic: ## Each way of restarting a Deployment behind a Service (kubectl rollout restart, kubectl rejuv restart, a policy's run, with and without unready grace) under a steady client on the local cluster; prints failed requests, latency, duration and extra pods side by side.
	$(GO) test -count=1 -run '^$$' -bench BenchmarkRollingRestartTraffic -benchtime 1x -timeout 30m ./test/bench

.PHONY: soak
soak: ## Rejuv as installed on the local cluster under load and random faults for SOAK_DURATION (default 30m), every promise checked from outside; prints a summary table and fails on any violation (SOAK_SEED replays a run's choices; needs root).
	$(GO) run ./test/soak

.PHONY: lint
lint: ## golangci-lint with .golangci.yml, and actionlint on the workflows in .github/workflows.
	$(GOLANGCI_LINT) run ./...
	$(ACTIONLINT) -no-color

.PHONY: helm
helm: ## Build helm (pinned by test/cluster/kubebuild/go.mod) into .cache/tools once, and print its path.
	@$(CLUSTER) helm

.PHONY: generate
generate: ## Generate deepcopy code (controller-gen).
	$(CONTROLLER_GEN) object paths=./api/...

.PHONY: manifests
manifests: ## Generate CRDs, RBAC and webhook manifests into config/ (controller-gen), config/install.yaml, and OpenKruise's CRR CRD for tests.
	$(CONTROLLER_GEN) rbac:roleName=healer crd webhook paths=./api/... paths=./healer/... \
		output:crd:artifacts:config=config/crd/bases \
		output:rbac:artifacts:config=config/rbac \
		output:webhook:artifacts:config=config/webhook
	$(CONTROLLER_GEN) rbac:roleName=daemon paths=./daemon/... output:rbac:artifacts:config=config/daemon
	$(CONTROLLER_GEN) rbac:roleName=healer paths=./healer paths=./healer/certs paths=./healer/pause paths=./healer/recreatepolicy paths=./healer/workingset \
		output:rbac:artifacts:config=config/openkruise
	@crds=$$(mktemp -d) && trap 'rm -rf $$crds' EXIT && \
	$(CONTROLLER_GEN) crd paths=github.com/openkruise/kruise-api/apps/v1alpha1 output:crd:dir=$$crds && \
	cp $$crds/apps.kruise.io_containerrecreaterequests.yaml test/openkruise/crd/
	$(GO) run ./config/render

.PHONY: docs
docs: ## Write the generated docs (docs/validation.md from the rows of test/refusals, docs/metrics.md from what the binaries register, docs/observability.md's tables from the dashboards and alert rules, the table of memory shapes in docs/rules.md from their replays, the table of built-ins in docs/security.md from the sandbox's audit, docs/flags.md from the binaries' flag sets, docs/helm-values.md from the chart's values.yaml, docs/architecture.svg from test/catalogue/architecture.go).
	REJUV_WRITE_DOCS=1 $(GO) test -short -count=1 -run '^TestValidationDoc$$' ./test/refusals
	REJUV_WRITE_DOCS=1 $(GO) test -short -count=1 -run '^(TestMetricsDoc|TestObservabilityDoc)$$' ./test/catalogue
	REJUV_WRITE_DOCS=1 $(GO) test -short -count=1 -run '^TestCatalogue$$' ./test/memshapes
	REJUV_WRITE_DOCS=1 $(GO) test -short -count=1 -run '^TestBuiltinsDoc$$' ./test/builtins
	REJUV_WRITE_DOCS=1 $(GO) test -short -count=1 -run '^TestFlagsDoc$$' ./cmd/internal/cli
	REJUV_WRITE_DOCS=1 $(GO) test -short -count=1 -run '^TestHelmValuesDoc$$' ./config
	REJUV_WRITE_DOCS=1 $(GO) test -short -count=1 -run '^TestArchitectureDiagram$$' ./test/catalogue

.PHONY: verify
verify: ## Fail when generated files or go.mod/go.sum are stale.
	@snapshot() { find api config test/openkruise -type f -print0 | sort -z | xargs -0 sha256sum; }; \
	before=$$(snapshot); \
	$(MAKE) --no-print-directory generate manifests >/dev/null; \
	if [ "$$before" != "$$(snapshot)" ]; then \
	  git status --short -- api config test/openkruise; \
	  echo "verify: generated files were stale and have been regenerated: review and commit them"; exit 1; \
	fi
	@$(GO) test -short -count=1 -run '^TestValidationDoc$$' ./test/refusals >/dev/null || { echo "verify: docs/validation.md is stale: run 'make docs'"; exit 1; }
	@$(GO) test -short -count=1 -run '^(TestMetricsDoc|TestObservabilityDoc)$$' ./test/catalogue >/dev/null || { echo "verify: docs/metrics.md or docs/observability.md is stale: run 'make docs'"; exit 1; }
	@$(GO) test -short -count=1 -run '^TestCatalogue$$' ./test/memshapes >/dev/null || { echo "verify: a memory shape misses its expectation, or docs/rules.md's table of them is stale: run 'make docs'"; exit 1; }
	@$(GO) test -short -count=1 -run '^TestBuiltinsDoc$$' ./test/builtins >/dev/null || { echo "verify: docs/security.md's table of built-ins is stale: run 'make docs'"; exit 1; }
	@$(GO) test -short -count=1 -run '^TestFlagsDoc$$' ./cmd/internal/cli >/dev/null || { echo "verify: docs/flags.md is stale: run 'make docs'"; exit 1; }
	@$(GO) test -short -count=1 -run '^TestHelmValuesDoc$$' ./config >/dev/null || { echo "verify: docs/helm-values.md is stale, or a value of the chart lacks a comment: run 'make docs'"; exit 1; }
	@$(GO) test -short -count=1 -run '^TestArchitectureDiagram$$' ./test/catalogue >/dev/null || { echo "verify: docs/architecture.svg is stale, or its text overlaps: run 'make docs'"; exit 1; }
	@$(GO) mod tidy -diff || { echo "verify: go.mod/go.sum are not tidy: run 'go mod tidy'"; exit 1; }
	@cd test/cluster/kubebuild && $(GO) mod tidy -diff || { echo "verify: test/cluster/kubebuild: run 'go mod tidy' there"; exit 1; }
	@for m in kubebuild-oldest runtimebuild runtimebuild1; do \
	  (cd test/cluster/$$m && $(GO) mod tidy -diff) || { echo "verify: test/cluster/$$m: run 'go mod tidy' there"; exit 1; }; \
	done
	@echo "verify: generated files and go.mod are up to date"

# What make deploy applies: an overlay of config/default that it writes
# into DEPLOY_DIR at each run, with the components RUNTIME and COMPONENTS
# name and, with REGISTRY set, an images: override that pulls Rejuv's
# images from REGISTRY.
DEPLOY_DIR ?= bin/deploy

.PHONY: deploy
deploy: ## Install Rejuv with kustomize on the cluster of $KUBECONFIG: config/default with the components RUNTIME (crio, k3s, cri-dockerd) and COMPONENTS name, its images from REGISTRY when set (make images REGISTRY=..., README.md).
	$(GO) run ./config/render -overlay '$(DEPLOY_DIR)' $(INSTALL_OPTIONS)
	$(KUBECTL) apply --server-side -k $(DEPLOY_DIR)
	$(KUBECTL) --namespace rejuv-system rollout status deployment/rejuv-healer --timeout=180s
	$(KUBECTL) --namespace rejuv-system rollout status daemonset/rejuv-daemon --timeout=180s

.PHONY: undeploy
undeploy: ## Remove everything make deploy installed (what config/components add goes with its namespace), and every RecreatePolicy and ContainerRecreateRequest with it.
	$(KUBECTL) delete -k config/default --ignore-not-found --wait

.PHONY: up
up: ## Start the local cluster, two nodes by default (or reuse it).
	$(CLUSTER) up

.PHONY: down
down: ## Stop the local cluster and undo its changes to the host.
	$(CLUSTER) down

.PHONY: status
status: ## Show the local cluster's processes and health.
	$(CLUSTER) status
