// Package race reports whether the binary was built with the race
// detector (go build -race, go test -race), so that a test can run smaller
// under it — the race detector slows the biggest tests tenfold, and
// `make test` runs them again at full size without it — or leave to the
// plain run what it cannot measure under it: resident memory, which the
// detector's shadow memory swamps, and allocations, which its sync.Pool
// (dropping a quarter of what it is given) does not let be counted; and
// so that a test that runs the go command builds as the binary was built
// (GoFlags).
package race
