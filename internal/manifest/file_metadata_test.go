package manifest

import (
	"math"
	"testing"
)

// TestFilterBitsPerKey checks a level's bits per key against the bits and
// entries summed by hand: a large table of 10 bits a key and a small one
// of 64 spend 10.54 bits on each of their 1,010 keys, where the mean of
// the two tables' figures is 37.
func TestFilterBitsPerKey(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []*FileMetadata
		want  float64
	}{
		{"none", nil, 0},
		{"one", []*FileMetadata{{FilterBitsPerKey: 10, Entries: 1000}}, 10},
		{"large and small", []*FileMetadata{{FilterBitsPerKey: 10, Entries: 1000}, {FilterBitsPerKey: 64, Entries: 10}}, (10*1000 + 64*10) / 1010.0},
		{"no filter counts its keys", []*FileMetadata{{FilterBitsPerKey: 10, Entries: 100}, {Entries: 100}}, 5},
		{"entries unknown weigh nothing", []*FileMetadata{{FilterBitsPerKey: 10, Entries: 100}, {FilterBitsPerKey: 99}}, 10},
		{"all entries unknown", []*FileMetadata{{FilterBitsPerKey: 99}}, 0},
	} {
		if got := FilterBitsPerKey(tc.files); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
