//go:build race

package sstable

// raceEnabled is true under -race, which slows the big round trip tenfold;
// `make test` runs it again at full size without the race detector.
const raceEnabled = true
