//go:build race

package rangefilter

// raceEnabled is true under -race, which slows queries about tenfold; the
// false-positive tests then measure fewer settings.
const raceEnabled = true
