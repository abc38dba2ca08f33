# infer's developer entry points. `make test` is what CI runs.

GO ?= go
# bash with pipefail, so `go test | tee` fails when the tests do.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
# VCS stamping needs a working git and a trusted checkout; CI clones as root
# and release builds pass the version explicitly, so it is off by default.
GOFLAGS ?= -buildvcs=false
export GOFLAGS

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

# Fuzz targets as package:FuzzName; add a line to fuzz another one.
FUZZ_TARGETS := \
	./bridge/wire:FuzzDecode \
	./session/config:FuzzParseBrowserUse \
	./session/config:FuzzParseConfig \
	./session/skills:FuzzFrontMatter \
	./session/tools/bashguard:FuzzGuard \
	./session/store:FuzzDecodeRecords \
	./session/llm/openai:FuzzChatChunk
FUZZTIME ?= 30s

# The soak (not in CI): at least this long, and at least this many browser
# commands and agent turns, through the simulator with faults on. `make test`
# runs the same test for 10 s.
SOAK_DURATION ?= 5m
SOAK_COMMANDS ?= 100000
SOAK_TURNS ?= 1000

# make bench: every benchmark, BENCH_COUNT runs each, into bench.txt
# (benchstat's format), then the performance report's table, which judges
# each target against a floor measured in the same run and says under it
# what each floor is (see docs/performance.md). BENCH_TIME is the per-package benchmarks'
# -benchtime; the end-to-end ones in ./perf do a fixed amount of work per
# run. BenchmarkChatEventFanout gets a fixed count because offline/demo
# streams at most 1,000,000 words, which a time-based -benchtime can ask
# past on a fast machine.
BENCH_COUNT ?= 6
BENCH_TIME ?= 1s
BENCH_FANOUT ?= 300000x
BENCH_PKGS ?= $(shell $(GO) list ./... | grep -v -e '/perf' -e '/bridge/panelsync$$')

.PHONY: build test e2e bench demo capture fuzz lint soak flake

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/ ./cmd/...

# make test says first which tests this machine cannot run (no bubblewrap,
# Chromium or tmux: they skip, or fail under CI), and last which tests
# skipped and why; the exit status is go test's. vet is built with -race
# too, so that it and the tests share one build of every dependency: a
# first run on a fresh machine compiles the module's large dependency
# tree once, not twice. See the README for how long it takes.
# RACE= (empty) runs it without the race detector, for a quicker look.
RACE ?= -race
TESTREPORT := $(GO) run $(RACE) ./internal/testreq/report
# go test's cache ignores files outside the module, such as /usr/bin/bwrap:
# the machine's state goes into an environment variable the tests read, so
# that a skip is not replayed from the cache once the program is installed.
TESTREQ_STATE = INFER_TEST_MACHINE="$$($(TESTREPORT) state)"

test:
	@$(TESTREPORT) needs
	$(GO) vet $(RACE) ./...
	$(TESTREQ_STATE) $(GO) test $(RACE) -json ./... | $(TESTREPORT) summary

e2e:
	$(GO) test -race -run 'E2E' -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) -benchtime $(BENCH_TIME) $(BENCH_PKGS) | tee bench.txt
	$(GO) test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) -benchtime $(BENCH_FANOUT) ./bridge/panelsync | tee -a bench.txt
	$(GO) test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) -benchtime 1x -timeout 30m ./perf/... | tee -a bench.txt
	@echo
	$(GO) run ./perf/report bench.txt

soak:
	INFER_SOAK_DURATION=$(SOAK_DURATION) INFER_SOAK_COMMANDS=$(SOAK_COMMANDS) INFER_SOAK_TURNS=$(SOAK_TURNS) \
		$(GO) test -run '^TestSoak$$' -count=1 -v -timeout 3h ./cmd/infer/

# make flake: the flaky-test hunt (not in CI; about an hour on 2 vCPUs).
# Every package FLAKE_COUNT times under -race, cmd/infer FLAKE_SLOW times,
# with a second suite looping beside them; FLAKE_LOAD=0 runs it alone.
flake:
	./scripts/flake.sh

demo: build
	./scripts/demo.sh

# make capture: the README's 120×40 picture of the workspace, taken from
# `make demo` in tmux (see scripts/readme-capture.sh), on stdout.
capture: build
	./scripts/readme-capture.sh

fuzz:
	@set -e; for target in $(FUZZ_TARGETS); do \
		pkg=$${target%%:*}; name=$${target##*:}; \
		echo "== $$name in $$pkg for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

lint:
	@unformatted=$$(gofmt -l .); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed on:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
