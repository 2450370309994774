//go:build !race

package bloomkv

const raceEnabled = false
