# The project's commands. `make test` is the whole suite: the command
# README.md gives a newcomer and the one .ci/run calls.
GO       ?= go
FUZZTIME ?= 2m

.PHONY: test check-format vet fuzz bench reliability

test: check-format vet
	./scripts/ensure-redis
	$(GO) test -race -count=1 ./...
	# The full-size runs of tests too slow for -race (which runs them smaller):
	# the 1,000,000-entry table round trip and the Optimal-vs-Uniform tree.
	$(GO) test -count=1 -run='^TestRoundTrip$$' ./sstable
	$(GO) test -count=1 -run='^TestOptimalFilterPolicy$$' .
	$(GO) test -count=1 -run='^TestTableCacheUnderFileLimit$$' -tablecache.tables=2000 .
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

# The long forms of the reliability suites: 500 SIGKILL crash cycles,
# 10,000 bit flips, 200 metamorphic histories × 9 option sets, the
# in-memory crash and fault-injection tests at full size; and the machine's
# edges — a crash at every step of every manifest rotation of 20
# workloads and a failure at each, a failure at every operation of a flush
# and a compaction, a full tmpfs (root), read-only opens, foreign
# directories, 2,000 tables under a 256-file limit. Not under -race: the
# point is the count. Takes about 10 minutes on 2 cores.
reliability:
	$(GO) test -count=1 -timeout=60m -v -run='^(TestCrashSIGKILL|TestCorruption.*|TestMetamorphic|TestDBRecovery.*|TestReliability.*|TestManifestRotation.*|TestBackground.*|TestWALFailureResume|TestCompactionCorruptionNotRetried|TestOutOfSpace|TestReadOnly.*|TestOpenForeignDirectory|TestTableCacheUnderFileLimit)$$' \
		-crash.cycles=500 -corrupt.flips=10000 -meta.seeds=200 -meta.configs=8 -db.crashcycles=40 \
		-db.rotationseeds=20 -db.rotationall -tablecache.tables=2000 .
