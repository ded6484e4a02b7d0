# crossfade: `make demo` shows the job on the embedded sandbox; `make test` runs everything.
SHELL := /bin/bash
CACHE := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/crossfade
BIN   := $(CACHE)/bin
GO    ?= go
# Fuzz targets run briefly in `make test`: package:target.
FUZZ_TARGETS := ./internal/sandbox/route53api:FuzzChangeBatchXML ./internal/sandbox/dnsserver:FuzzServeDNS ./internal/registry:FuzzReadTXT ./internal/source:FuzzParseAnnotations ./internal/source/manifest:FuzzDecode ./internal/cutover/spec:FuzzParse \
	./internal/cloudmap:FuzzDesire ./internal/cutover/lever/authority:FuzzAuthorityTags ./internal/registry:FuzzPlanHandover ./internal/sandbox/servicediscoveryapi:FuzzJSONBodies ./internal/sandbox/elbv2api:FuzzQueryForms
# A count, not a duration: Go 1.26's fuzz coordinator can report a spurious "context
# deadline exceeded" when a duration budget expires mid-run (golang/go#75804).
FUZZTIME ?= 50000x

.PHONY: all build demo test unit vet lint fuzz soak bench bench-soak bench-controller deps clean

all: build

# What `crossfade version` prints (internal/cli/version.go), linked in by build and image.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
# $(call version_ldflags,VERSION): the -X flags that set them.
version_ldflags = -X github.com/crossfade-io/crossfade/internal/cli.version=$(1) -X github.com/crossfade-io/crossfade/internal/cli.commit=$(COMMIT)

# bin/kubectl-crossfade links to it: on PATH, kubectl runs it as `kubectl crossfade` (docs/cli.md).
build:
	$(GO) build -ldflags "$(call version_ldflags,$(VERSION))" -o bin/crossfade ./cmd/crossfade
	ln -sf crossfade bin/kubectl-crossfade

demo:
	@scripts/deps.sh demo
	$(GO) run ./cmd/crossfade demo

# The whole suite: installs what it needs, then vet, staticcheck, every test (real AWS CLI
# and dig included) and a short fuzz of each parser.
# Screenshots and other test artifacts (the dashboard in Chromium) land here.
CROSSFADE_ARTIFACTS ?= $(CURDIR)/artifacts
export CROSSFADE_ARTIFACTS

# -timeout: the end-to-end package runs for minutes on a 2-core machine, near go test's
# default 10 minutes when the machine is busy; a hang still ends, with every stack.
# scripts/testreport prints what go test prints, then how many tests skipped and which;
# under CI=true (.ci/run sets it) a skip fails the run. It is built first so that a
# broken report program does not cost a test run; pipefail keeps go test's own failure.
test:
	@scripts/deps.sh test
	$(MAKE) --no-print-directory vet lint
	$(GO) build -o $(BIN)/testreport ./scripts/testreport
	set -o pipefail; $(GO) test -count=1 -timeout 30m -json ./... | $(BIN)/testreport
	$(MAKE) --no-print-directory fuzz

# Seconds, nothing installed: pure logic and in-process servers only.
unit:
	$(GO) test -short ./...

vet:
	$(GO) vet ./...

lint:
	$(BIN)/staticcheck ./...

fuzz:
	@for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t##*:}; \
	  $(GO) test -list "^$$name$$" $$pkg | grep -qx "$$name" || { echo "fuzz target $$name is not in $$pkg"; exit 1; }; \
	  echo "fuzz $$name ($$pkg, $(FUZZTIME))"; \
	  $(GO) test -run='^$$' -fuzz="^$$name$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	done

# The cutover crash tests at length: SIGKILL at random moments, resume, check (20 trials
# run in `make test`): `cutover run` resumed with --resume, and a `controller --cutovers`
# replica replaced by another that resumes the Cutover object from its status (about 8 s
# a trial).
SOAK_TRIALS ?= 200
soak:
	@scripts/deps.sh test
	CROSSFADE_CUTOVER_TRIALS=$(SOAK_TRIALS) $(GO) test -count=1 -timeout 180m -run '^TestCutoverKill9$$' -v ./test/e2e
	CROSSFADE_CUTOVER_OBJECT_TRIALS=$(SOAK_TRIALS) $(GO) test -count=1 -timeout 180m -run '^TestCutoverObjectsKill9$$' -v ./test/controller

# Every figure of BENCHMARKS.md's summary in one run (well under 15 minutes on 2 cores):
# the packages' go test benchmarks (the plan, the fleet cutover and its pacing, the DNS
# server in process, …), the planner beside its 6ef3d3f baseline, the sandbox's DNS server
# beside CoreDNS and Knot, the ALB proxy beside nginx, one Service's change at 10,000
# Services, and the controller at rest for a few minutes. Apart: the side by side with
# external-dns (bench-controller, about 35 minutes) and the hour at rest (bench-soak).
bench:
	@scripts/deps.sh bench
	$(GO) test -run='^$$' -bench=. -benchmem -timeout 30m ./internal/...
	$(GO) run ./bench/planbench -out BENCHMARKS.plan.md
	$(GO) run ./bench/dnsbench -duration 8s -out BENCHMARKS.latest.md
	$(GO) run ./bench/albbench -duration 10s -out BENCHMARKS.alb.md
	KUBEBENCH_SERVICES=10000 $(GO) test -run='^$$' -bench='ReconcileOneChange' -benchtime=20x -timeout 20m ./bench/kubebench/
	$(GO) run ./bench/kubebench --tools crossfade --scenarios soak --services 10000 --soak 2m --soak-every 15s --soak-settle 0 -out BENCHMARKS.soak.md

# The controller at rest for an hour over 10,000 Services: CPU, goroutines, heap, Route 53
# calls (bench/kubebench's soak scenario), from 11 minutes after its first sync (past the
# first periodic full re-plan); each judged flat, grows or falls. `make bench` runs a
# two-minute window at once: its CPU and calls, not a verdict on the heap.
bench-soak:
	@scripts/deps.sh bench
	$(GO) run ./bench/kubebench --tools crossfade --scenarios soak --services 10000 --soak 1h --soak-every 1m -out BENCHMARKS.soak.md

# crossfade controller against external-dns v0.21.0, 10,000 Services (about 35 minutes:
# three 5-minute idle windows and external-dns's 1-minute loop).
bench-controller:
	@scripts/deps.sh bench
	$(GO) run ./bench/kubebench -out BENCHMARKS.controller.md

clean:
	rm -rf bin BENCHMARKS.latest.md BENCHMARKS.controller.md BENCHMARKS.alb.md BENCHMARKS.plan.md BENCHMARKS.soak.md

# The container image (Dockerfile): the static binary and the host's CA bundle staged in
# bin/image/, then `buildah bud` (Debian package buildah). FROM scratch with no RUN step:
# no registry, daemon or container runtime is needed, and chroot isolation works as root.
IMAGE_NAME ?= crossfade
IMAGE_TAG  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
IMAGE_ARCH ?= $(shell $(GO) env GOARCH)
CA_BUNDLE  ?= /etc/ssl/certs/ca-certificates.crt
BUILDAH    ?= buildah

.PHONY: image
image:
	@command -v $(BUILDAH) >/dev/null || { echo "make image: $(BUILDAH) not found: install the Debian package buildah" >&2; exit 1; }
	@test -r $(CA_BUNDLE) || { echo "make image: no CA bundle at $(CA_BUNDLE): install the Debian package ca-certificates" >&2; exit 1; }
	@mkdir -p bin/image
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath -ldflags "-s -w $(call version_ldflags,$(IMAGE_TAG))" -o bin/image/crossfade-linux-$(IMAGE_ARCH) ./cmd/crossfade
	cp $(CA_BUNDLE) bin/image/ca-certificates.crt
	$(BUILDAH) bud --isolation chroot --os linux --arch $(IMAGE_ARCH) \
	  --build-arg TARGETARCH=$(IMAGE_ARCH) --build-arg VERSION=$(IMAGE_TAG) \
	  -f Dockerfile -t $(IMAGE_NAME):$(IMAGE_TAG) .
