//go:build race

package ribbon

// raceEnabled is true under -race, which slows building and querying about
// tenfold; the largest sets are then tested at fewer widths.
const raceEnabled = true
