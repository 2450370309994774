package fuse

import (
	"testing"

	"github.com/bloomkv/bloomkv/internal/filtertest"
)

// The hashes, probes, binomial interval and CPU time the tests share with
// the other static filter package's (package filtertest).
var (
	randomHashes   = filtertest.RandomHashes
	probes         = filtertest.Probes
	binomialBounds = filtertest.BinomialBounds
	cpuTime        = filtertest.CPUTime
)

var filterCache = map[[2]int]*Filter{}

// builtFilter returns the filter of randomHashes(n, 1) at bits bits, built
// once per test binary: several tests share the large ones.
func builtFilter(t testing.TB, n, bits int) (*Filter, []uint64) {
	t.Helper()
	hashes := randomHashes(n, 1)
	if f, ok := filterCache[[2]int{n, bits}]; ok {
		return f, hashes
	}
	f, err := Build(hashes, bits)
	if err != nil {
		t.Fatalf("Build(%d hashes, %d bits): %v", n, bits, err)
	}
	filterCache[[2]int{n, bits}] = f
	return f, hashes
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
