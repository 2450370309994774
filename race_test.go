//go:build race

package bloomkv

// raceEnabled is true under -race, which slows the biggest tests tenfold;
// `make test` runs them again at full size without the race detector.
const raceEnabled = true
