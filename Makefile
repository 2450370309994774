# The project's commands. `make test` is the whole suite: the command
# README.md gives a newcomer and the one .ci/run calls.
GO       ?= go
FUZZTIME ?= 2m

.PHONY: test check-format vet fuzz bench

test: check-format vet
	./scripts/ensure-redis
	$(GO) test -race -count=1 ./...
	# The full-size runs of tests too slow for -race (which runs them smaller):
	# the 1,000,000-entry table round trip and the Optimal-vs-Uniform tree.
	$(GO) test -count=1 -run='^TestRoundTrip$$' ./sstable
	$(GO) test -count=1 -run='^TestOptimalFilterPolicy$$' .
	cd bench && $(GO) test -race -count=1 ./...

check-format:
	@out=$$(gofmt -l . bench); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	cd bench && $(GO) vet ./...

# Run every fuzz target of the core module for FUZZTIME each.
fuzz:
	./scripts/fuzz $(FUZZTIME)

# Microbenchmarks of the core module (use -count and benchstat to compare).
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...
