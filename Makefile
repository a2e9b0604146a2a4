# Berth — the two commands that matter: `make run` (whole system on embedded defaults) and `make test`.
SHELL := /bin/bash
# Every module of the workspace (go.work lists them; adding a service there adds it here).
MODULES := $(shell sed -n "s|^[[:space:]]*\./||p" go.work)
GO_TEST_FLAGS ?= -race -count=1 -timeout 20m

.PHONY: run test test-cluster fuzz lint proto proto-check tidy build bench bench-search bench-console bench-series bench-stack docs

## run: every service, the REST edge and embedded NATS in one process on 127.0.0.1:8080, seeded demo app.
run:
	go run ./cmd/berth

## test: every module's tests with the race detector (Postgres suites included; see CONTRIBUTING.md).
test:
	@set -e; for m in $(MODULES); do echo "== $$m"; (cd $$m && go test $(GO_TEST_FLAGS) ./...); done

## test-cluster: the production binaries as separate processes, several replicas per service, on
## loopback against PostgreSQL and NATS; one replica of each service is killed mid-load and restarted
## (docs/operations.md).
test-cluster:
	cd tests && BERTH_TEST_CLUSTER=1 go test -count=1 -timeout 15m -v -run '^TestAClusterOfReplicas' ./cluster/

## fuzz: the edge's request decoding, the login, verification, second-step and passkey forms, the identity-provider callback and link confirmation, the password-reset, email-change, account-page and console forms, the choice of a page's language and the charts' SVG and CSV, FUZZTIME each (`make test` runs their seed corpus only).
FUZZTIME ?= 60s
fuzz:
	cd gateway && go test -run '^$$' -fuzz '^FuzzEdgeRequest$$' -fuzztime $(FUZZTIME) ./edge
	cd gateway && go test -run '^$$' -fuzz '^FuzzLoginForm$$' -fuzztime $(FUZZTIME) ./login
	cd gateway && go test -run '^$$' -fuzz '^FuzzEmailChangeForm$$' -fuzztime $(FUZZTIME) ./emailchange
	cd gateway && go test -run '^$$' -fuzz '^FuzzRecoveryForm$$' -fuzztime $(FUZZTIME) ./recovery
	cd gateway && go test -run '^$$' -fuzz '^FuzzVerifyForm$$' -fuzztime $(FUZZTIME) ./login
	cd gateway && go test -run '^$$' -fuzz '^FuzzProviderCallback$$' -fuzztime $(FUZZTIME) ./login
	cd gateway && go test -run '^$$' -fuzz '^FuzzSecondFactorForm$$' -fuzztime $(FUZZTIME) ./login
	cd gateway && go test -run '^$$' -fuzz '^FuzzPasskeyForm$$' -fuzztime $(FUZZTIME) ./login
	cd gateway && go test -run '^$$' -fuzz '^FuzzAccountForm$$' -fuzztime $(FUZZTIME) ./account
	cd gateway && go test -run '^$$' -fuzz '^FuzzConsoleForm$$' -fuzztime $(FUZZTIME) ./console
	cd pkg && go test -run '^$$' -fuzz '^FuzzChoose$$' -fuzztime $(FUZZTIME) ./locale
	cd gateway && go test -run '^$$' -fuzz '^FuzzCSVReadsBackAsTheDefusedCells$$' -fuzztime $(FUZZTIME) ./webpage/chart
	cd gateway && go test -run '^$$' -fuzz '^FuzzSVGIsWellFormed$$' -fuzztime $(FUZZTIME) ./webpage/chart

## build: every binary of every module.
build:
	@set -e; for m in $(MODULES); do (cd $$m && go build ./...); done

## lint: gofmt, go vet and golangci-lint (.golangci.yml) over every module, buf lint and buf breaking
## over proto/ (proto/buf.yaml), and no build output or binary tracked in git (CONTRIBUTING.md#linting).
# golangci-lint and buf are pinned as tools in tools/lint/go.mod, a module outside go.work so that
# their dependencies never change the versions the workspace builds with; `go tool -n` builds each
# once into Go's build cache and prints its path.
LINT_TOOL = cd tools/lint && GOWORK=off go tool -n
# buf breaking compares proto/ with where HEAD and BUF_AGAINST meet (git merge-base): by default the
# commit before HEAD, which any clone with history has (CI's fresh clone of main included); on a
# branch, BUF_AGAINST=main checks everything the branch changed since it left main.
BUF_AGAINST ?= HEAD~1
# The compared commit may predate proto/buf.yaml, so its layout is given here: proto/ is the module,
# proto/third_party (google/api) the one it imports.
BUF_AGAINST_CONFIG := {"version":"v2","modules":[{"path":"proto","excludes":["proto/third_party"]},{"path":"proto/third_party"}]}
lint:
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@set -e; for m in $(MODULES); do (cd $$m && go vet ./...); done
	@echo "golangci-lint run $(MODULES:%=./%/...)"; gl=$$($(LINT_TOOL) golangci-lint) && $$gl run $(MODULES:%=./%/...)
	@base=$$(git merge-base HEAD '$(BUF_AGAINST)') || { echo "buf breaking needs the commit $(BUF_AGAINST): a clone with history, or set BUF_AGAINST"; exit 1; }; \
	echo "buf lint proto; buf breaking proto against $(BUF_AGAINST) ($$base)"; buf=$$($(LINT_TOOL) buf) && $$buf lint proto && \
		$$buf breaking proto --against ".git#ref=$$base" --against-config '$(BUF_AGAINST_CONFIG)'
	cd tests && go test -count=1 -run '^(TestTheRepositoryTracksNoBuildOutputs|TestBuildOutputsAreRecognised)$$' ./architecture/

## docs: regenerate docs/configuration.md's tables from the settings declarations (a test checks them).
docs:
	cd tests && BERTH_WRITE_DOCS=1 go test -count=1 -run '^TestTheConfigurationReferenceIsGeneratedFromTheDeclarations$$' ./manifests/

## proto: regenerate the committed Go code from proto/ (needs protoc; plugins are pinned in proto/go.mod).
proto:
	./proto/gen.sh

## proto-check: fail when the committed generated code differs from what the sources produce.
proto-check: proto
	@if [ -n "$$(git status --porcelain -- proto)" ]; then echo "generated proto code is out of date:"; git status --porcelain -- proto; git --no-pager diff --stat -- proto; exit 1; fi

## tidy: go mod tidy in every module on its own (GOWORK=off). Outside the workspace a module finds
## its siblings only through replace lines, one for every sibling in its module graph; tidy derives
## them from go.work: it writes one for every sibling, tidies, and drops those the graph does not hold.
## tools/lint (the pinned linters, outside go.work) is tidied on its own.
tidy:
	@set -e; for m in $(MODULES); do (cd $$m && up=$$(echo $$m | sed 's|[^/][^/]*|..|g') && \
	  modpath() { sed -n 's/^module //p' $$up/$$1/go.mod; } && \
	  for w in $(MODULES); do go mod edit -dropreplace=$$(modpath $$w); done && \
	  block=$$(echo 'replace ('; for w in $(MODULES); do [ $$w = $$m ] || echo "	$$(modpath $$w) => $$up/$$w"; done; echo ')') && \
	  awk -v block="$$block" '{print} /^go [0-9]/ {print ""; print block}' go.mod >go.mod.tmp && mv go.mod.tmp go.mod && \
	  GOWORK=off go mod tidy && graph=$$(GOWORK=off go list -m all) && \
	  for w in $(MODULES); do grep -qx "$$(modpath $$w) v[^ ]* => $$up/$$w" <<<"$$graph" || go mod edit -dropreplace=$$(modpath $$w); done); done
	cd tools/lint && GOWORK=off go mod tidy

## bench: every benchmark, each against a baseline measured in the same run; prints the ratios.
bench:
	@set -eo pipefail; for m in $(MODULES); do (cd $$m && go test -run '^$$' -bench . -benchmem ./... | { grep -v 'no test files' || true; }); done | tee /dev/stderr | go run ./tools/benchratio

## bench-search: the console's user and tenant searches on 100,000 rows each in PostgreSQL, each page
## beside its bare statement, with p50/p99 (docs/performance.md); a narrower `make bench`.
bench-search:
	@set -eo pipefail; for m in services/identity services/tenant; do (cd $$m && go test -run '^$$' -bench '^BenchmarkSearch' ./internal/adapters/postgres/); done | tee /dev/stderr | go run ./tools/benchratio

## bench-console: the console's users and tenants pages as a signed-in member loads them, on the whole
## stack with 100,000 users and tenants in PostgreSQL, beside a bare net/http + pgx page (docs/performance.md).
bench-console:
	@set -eo pipefail; (cd cmd && go test -run '^$$' -bench '^BenchmarkConsoleListPages$$' -benchtime 200x ./berth/stacktest/) | tee /dev/stderr | go run ./tools/benchratio

## bench-series: the console analytics page's daily series over a week to a year of an app with 100,000
## users in PostgreSQL, beside its bare statements, with p50/p99 (docs/performance.md); a narrower `make bench`.
bench-series:
	@set -eo pipefail; (cd services/analytics && go test -run '^$$' -bench '^BenchmarkDailySeries' ./internal/adapters/postgres/) | tee /dev/stderr | go run ./tools/benchratio

## bench-stack: the whole stack's read path on PostgreSQL against a net/http + pgx baseline, both as
## separate processes, over loopback (docs/performance.md); flags go in BENCH_STACK_FLAGS.
bench-stack:
	go run ./tools/benchstack $(BENCH_STACK_FLAGS)
