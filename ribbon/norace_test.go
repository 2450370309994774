//go:build !race

package ribbon

const raceEnabled = false
