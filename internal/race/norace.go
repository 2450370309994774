//go:build !race

package race

// Enabled is true in a binary built with the race detector.
const Enabled = false
