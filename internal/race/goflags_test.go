package race

import (
	"slices"
	"testing"
)

// TestGoFlags checks that GoFlags asks for the race build exactly when
// this test binary is one (the build tag race, which sets Enabled).
func TestGoFlags(t *testing.T) {
	if got := slices.Contains(GoFlags(), "-race"); got != Enabled {
		t.Errorf("GoFlags() = %q with the race detector %v", GoFlags(), Enabled)
	}
}
