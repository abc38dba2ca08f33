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
	./session/tools/bashguard:FuzzGuard
FUZZTIME ?= 30s

.PHONY: build test e2e bench demo fuzz lint

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/ ./cmd/...

test:
	$(GO) vet ./...
	$(GO) test -race ./...

e2e:
	$(GO) test -race -run 'E2E' -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./... | tee bench.txt

demo: build
	./scripts/demo.sh

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
