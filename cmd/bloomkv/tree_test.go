package main

import (
	"testing"

	"github.com/bloomkv/bloomkv/internal/manifest"
)

// TestTreeFilters renders tables' filters and levels' summaries of every
// family, from manifest records as flushes and compactions write them and
// as tables recorded before families were (FilterFamily 0) read.
func TestTreeFilters(t *testing.T) {
	bloom10 := &manifest.FileMetadata{FilterBitsPerKey: 10.24, FilterFamily: 1, FilterParam: 10.24}
	legacy := &manifest.FileMetadata{FilterBitsPerKey: 10.1}
	fuse8 := &manifest.FileMetadata{FilterBitsPerKey: 9.3, FilterFamily: 2, FilterParam: 8}
	fuse16 := &manifest.FileMetadata{FilterBitsPerKey: 18.2, FilterFamily: 2, FilterParam: 16}
	none := &manifest.FileMetadata{}
	for _, tc := range []struct {
		m    *manifest.FileMetadata
		want string
	}{
		{bloom10, "bloom 10.2 bits/key"},
		{legacy, "bloom 10.1 bits/key"},
		{fuse8, "fuse 8-bit 9.3 bits/key"},
		{fuse16, "fuse 16-bit 18.2 bits/key"},
		{none, "no filter"},
	} {
		if got := tableFilter(tc.m); got != tc.want {
			t.Errorf("tableFilter(%+v) = %q, want %q", *tc.m, got, tc.want)
		}
	}
	for _, tc := range []struct {
		files []*manifest.FileMetadata
		bits  float64
		want  string
	}{
		{[]*manifest.FileMetadata{bloom10, legacy}, 10.17, "filter bloom 10.2 bits/key"},
		{[]*manifest.FileMetadata{fuse8, fuse8}, 9.3, "filter fuse 8-bit 9.3 bits/key"},
		{[]*manifest.FileMetadata{fuse8, bloom10, fuse8, fuse16}, 11.76, "filters 2 fuse 8-bit + 1 bloom + 1 fuse 16-bit, 11.8 bits/key"},
		{[]*manifest.FileMetadata{none, none}, 0, "no filters"},
		{[]*manifest.FileMetadata{none, bloom10}, 5.12, "filters 1 none + 1 bloom, 5.1 bits/key"},
	} {
		if got := levelFilters(tc.files, tc.bits); got != tc.want {
			t.Errorf("levelFilters = %q, want %q", got, tc.want)
		}
	}
}
