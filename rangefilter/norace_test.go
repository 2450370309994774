//go:build !race

package rangefilter

const raceEnabled = false
