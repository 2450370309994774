# The project's commands. `make test` is the whole suite: the command
# README.md gives a newcomer and the one .ci/run calls.
GO       ?= go
FUZZTIME ?= 2m

# The linters, pinned and run with `go run`, so that a fresh machine needs
# nothing but Go and the module proxy: the first run downloads and builds
# them, later ones come from the build cache. Both need Go 1.26 or newer to
# run; an older go command, under the default GOTOOLCHAIN=auto, fetches
# that toolchain for them from the proxy. staticcheck runs its default
# checks (no staticcheck.conf); a finding the code cannot fix takes a
# //lint:ignore with the reason, on that line only. goimports is taken
# from the golang.org/x/tools release staticcheck's module requires (with
# the same x/mod and x/sync), so that the packages both use are compiled
# once for the two.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOIMPORTS   ?= golang.org/x/tools/cmd/goimports@v0.51.0

# The bench module's tests and checks build Pebble with its pure-Go zstd
# (build tag pebblegozstd). Its default, the DataDog cgo binding, compiles
# zstd's C sources once per build mode, minutes of a fresh machine's first
# `make test`; no test uses Pebble's zstd. The peers runner's own builds,
# which measure, keep the default.
BENCH_TAGS ?= pebblegozstd

.PHONY: test build-race build-race-core build-race-nested test-race test-plain build-plain test-plain-root test-plain-packages test-bench test-raft check-format vet staticcheck fuzz bench reliability raft-reliability

# The whole suite, its steps run by scripts/test: the programs the tests
# start installed (scripts/ensure-packages) and the checks, in the
# background; then the tests below, the core module's -race run beside the
# others in turn (scripts/test says why). It prints each step's output and
# time. README.md says how long it takes.
test:
	MAKE="$(MAKE)" ./scripts/test

# Every package of the three modules, their tests' too, compiled once under
# the race detector, as the -race test runs and staticcheck (which reads
# their export data) both want them: run before either, it spares a fresh
# machine compiling each package twice at once (two go commands given the
# same package at the same moment both compile it), and the -race runs and
# staticcheck find them in the build cache. Nothing is linked or run. In
# two parts, so that the core module's tests, the longest, can start once
# the first is done (scripts/test).
build-race: build-race-core build-race-nested

build-race-core:
	$(GO) list -race -export -deps -test ./... >/dev/null

build-race-nested:
	cd bench && $(GO) list -race -export -deps -test -tags $(BENCH_TAGS) ./... >/dev/null
	cd raftstore && $(GO) list -race -export -deps -test ./... >/dev/null

# The core module's packages under the race detector. The test runs are
# also the suite's go vet: -vet=all runs every vet check (go vet's own
# set, not go test's usual few) on every package, tests or not, with the
# race build's export data, so no second, plain build of the packages is
# made for vet alone. `make vet` is the same check on its own.
test-race:
	$(GO) test -race -vet=all -count=1 -timeout=30m ./...

# The full-size runs of the tests that -race runs smaller or skips (the
# -race run vets these packages): work of one goroutine, where the race
# detector has nothing to check but the unsafe reads' pointer rules, which
# the smaller form exercises as well, or an oracle it would spoil.
#   sstable: the 1,000,000-entry round trip (-race: 20,000); 10,000 bit
#     flips in a table (-race: 2,000); a flip of every byte of the
#     partitioned-index tables (-race: every fourth).
#   the root package: the Optimal-vs-Uniform tree of four levels
#     (-alloc.keys=250000; go test's default and -race: 20,000 keys);
#     2,000 tables under a 256-file limit; the reliability suites whose
#     -race forms are a third to a half of their size (the metamorphic
#     histories, the bit flips, the iterator's model, the DB's model, the
#     crash-recovery workloads, the manifest rotation crashes, the SIGKILL
#     crash cycles: sequences of single-threaded steps, where the race
#     detector checks the background work beside them in the smaller form
#     as well; and the generations of the writers, readers and compactions
#     run at once, which the smaller form runs at once too); half of
#     100,000 keys expiring (-race: 4,000); the memory
#     accounting and the memory limit, whose oracle, the process's
#     resident memory, the race detector's shadow memory would swamp, and
#     the tables' heap (range tombstones, handles) against the heap; what
#     a new Iterator allocates, which -race's sync.Pool, dropping a quarter
#     of what it is given, does not let be counted.
#   bloom: the classic and blocked filters' false-positive rates at every
#     setting (-race: one each).
#   internal/compaction: the simulated concurrent compactions, four seeds
#     per sizing (-race: one).
#   fuse, ribbon: the filters at a million keys in every width (-race:
#     8 bits); their false-positive rates over 16 times -race's probes;
#     how often one Ribbon build attempt fails (400 builds; skipped under
#     -race).
#   rangefilter: the whole false-positive grid (-race: one setting).
# cmd/bloomkv has none: its bench under -memlimit runs under -race with a
# cap sized for the race detector's memory, so that no plain build of the
# command and its dependencies (a minute of CPU on a fresh machine) is
# made for one test.
# The root package's runs and the other packages' are two targets, which
# `make -j2 test-plain` (scripts/test) runs at once: the root package's
# take as long as the others' together. Their packages are compiled first,
# once (two go commands given the same package at once both compile it).
test-plain: test-plain-root test-plain-packages

PLAIN_PACKAGES = . ./sstable ./bloom ./internal/compaction ./fuse ./ribbon ./rangefilter

build-plain:
	$(GO) list -export -deps -test $(PLAIN_PACKAGES) >/dev/null

test-plain-root: build-plain
	$(GO) test -vet=off -count=1 -run='^(TestOptimalFilterAllocation|TestMemoryAccounted|TestMemoryLimitHolds|TestTableHeapAccounted|TestNewIterAllocs|TestTableCacheUnderFileLimit|TestMetamorphic|TestCorruptionBitFlips|TestIterModel|TestManifestRotationCrash|TestCrashSIGKILL|TestTTLExpiresHalf|TestDBModel|TestDBRecoveryCrash|TestReliabilityConcurrentCompaction)$$' . -alloc.keys=250000

test-plain-packages: build-plain
	$(GO) test -vet=off -count=1 -run='^(TestRoundTrip|TestRandomBitFlipsLargeTable|TestPartitionedEveryByteFlipDetected)$$' ./sstable
	$(GO) test -vet=off -count=1 -run='^(TestBlockedFalsePositiveRate|TestClassicFalsePositiveRate)$$' ./bloom
	$(GO) test -vet=off -count=1 -run='^TestPickConcurrentlyKeepsTheTree$$' ./internal/compaction
	$(GO) test -vet=off -count=1 -run='^(TestBuildNoFalseNegatives|TestFalsePositiveRate|TestSizeBytes|TestBitsPerKeyAtOneMillion)$$' ./fuse
	$(GO) test -vet=off -count=1 -run='^(TestBuildNoFalseNegatives|TestFalsePositiveRate|TestAttemptFailureRate)$$' ./ribbon
	$(GO) test -vet=off -count=1 -run='^(TestFalsePositiveRate|TestShortScanTarget|TestMappingAgainstBytes8)$$' ./rangefilter

# The bench module (the peers and the filter-library comparisons), vetted
# as test-race vets the core.
test-bench:
	cd bench && $(GO) test -race -vet=all -tags $(BENCH_TAGS) -count=1 -timeout=30m ./...

# bloomkv under hashicorp/raft (its own module): the Store's conformance
# cases, the FSM, a 3-node cluster in one process, 4 SIGKILLs of node
# processes, and bloomkv-node's API and 8 s of porcupine-checked clients
# under kills and partitions (the long forms: make raft-reliability);
# vetted as test-race vets the core.
test-raft:
	cd raftstore && $(GO) test -race -vet=all -count=1 -timeout=30m ./...

# gofmt, and goimports for the grouping of imports: the standard library,
# a blank line, then the rest. Both walk the nested modules (bench,
# raftstore) too.
check-format:
	@out=$$(gofmt -l . bench raftstore); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@out=$$($(GO) run $(GOIMPORTS) -l .) || exit 1; if [ -n "$$out" ]; then echo "goimports would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...
	cd bench && $(GO) vet -tags $(BENCH_TAGS) ./...
	cd raftstore && $(GO) vet ./...

# staticcheck analyses the race build (GOFLAGS=-race for staticcheck's go
# list, not for the go run that builds staticcheck), the one the tests
# compile, so that no package is compiled a second time, plain, for its
# export data. Every file is in that build but internal/race's one-line
# norace.go: a test that cannot run under the race detector skips there,
# at run time, rather than leave the race build by a build constraint.
STATICCHECK_RUN = $(GO) run -exec 'env GOFLAGS=-race' $(STATICCHECK)

staticcheck:
	$(STATICCHECK_RUN) ./...
	cd bench && $(STATICCHECK_RUN) -tags $(BENCH_TAGS) ./...
	cd raftstore && $(STATICCHECK_RUN) ./...

# Run every fuzz target of the core module for FUZZTIME each.
fuzz:
	./scripts/fuzz $(FUZZTIME)

# Microbenchmarks of the core module (use -count and benchstat to compare).
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

# The long forms of the reliability suites: 500 SIGKILL crash cycles,
# 10,000 bit flips, 200 metamorphic histories × 9 option sets, 200 model
# runs, the in-memory crash and fault-injection tests at full size — each
# with values in blob files and inline, half and half, and transactions,
# time-to-live writes, merges and ingests in the crash, metamorphic and
# model mixes (the -v logs count them); and the machine's edges — a crash at every step of every manifest
# rotation of 20 workloads and a failure at each, a failure at every
# operation of a flush, a compaction (values inline and separated) and a
# blob rewrite, a full tmpfs (root), read-only opens, foreign directories,
# 2,000 tables under a 256-file limit; 200 checkpoints beside concurrent
# writers. Not under -race: the point is the count. Takes about 7½
# minutes on 2 cores, idle.
reliability:
	$(GO) test -count=1 -timeout=60m -v -run='^(TestCrashSIGKILL|TestCorruption.*|TestMetamorphic|TestDBModel|TestDBRecovery.*|TestReliability.*|TestManifestRotation.*|TestBackground.*|TestWALFailureResume|TestCompactionCorruptionNotRetried|TestOutOfSpace|TestReadOnly.*|TestOpenForeignDirectory|TestTableCacheUnderFileLimit|TestCheckpoint.*)$$' \
		-crash.cycles=500 -corrupt.flips=10000 -meta.seeds=200 -meta.configs=8 -db.seeds=200 -db.crashcycles=40 \
		-db.rotationseeds=20 -db.rotationall -tablecache.tables=2000 -checkpoint.rounds=200 .

# The long form of the raft suite: 300 SIGKILLs of a node process (the
# leader mostly, in the middle of the client's writes) of a 3-node raft
# cluster on raftstore, every acknowledged write checked on every node.
# About 3 minutes on 2 cores (300 kills, 10,000 writes), not under -race.
# Then 3 minutes of 8 clients' puts, gets and compare-and-sets against 3
# bloomkv-node processes while the nemesis SIGKILLs nodes and cuts the
# leader (or a follower) off, the history checked by porcupine; it closes
# with the counts of operations, kills, partitions and leader changes.
raft-reliability:
	cd raftstore && $(GO) test -count=1 -timeout=60m -v -run='^TestRaftProcessKills$$' -raft.kills=300 .
	cd raftstore && $(GO) test -count=1 -timeout=60m -v -run='^TestLinearizable$$' ./node -lin.duration=3m -lin.clients=8
