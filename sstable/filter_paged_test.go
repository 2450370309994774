package sstable

import (
	"bytes"
	"fmt"
	"math"
	"testing"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/cache"
)

// TestPagedFilter checks a table's paged filter against a Bloom filter
// built apart from the table over the same keys (the oracle): a lookup
// past its filter's maybe reads one page and ends without a data block
// exactly where the oracle rules the key out; a present key is always
// found; a lookup its filter rules out reads no page; the paged filter's
// false-positive rate over the absent keys that reach it is the formula's
// within five standard deviations; and Locate, MultiGet's half of Get,
// decides as Get does.
func TestPagedFilter(t *testing.T) {
	const n, bits = 20000, 10
	entries := distinctEntries(n)
	hashes := make([]uint64, n)
	for i, e := range entries {
		hashes[i] = bloom.Hash(e.key.UserKey)
	}
	oracle, err := bloom.BuildBlocked(hashes, bits)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		opts   WriterOptions
		cached bool
	}{
		{"bloom 2", WriterOptions{BlockSize: 512, Filter: Bloom(2), PagedFilterBits: bits}, false},
		{"ribbon 2, cached", WriterOptions{BlockSize: 512, Filter: Ribbon(2), PagedFilterBits: bits, BlockAlign: true}, true},
		{"no filter, partitioned index, cached", WriterOptions{BlockSize: 512, PagedFilterBits: bits, IndexPartitionSize: 1024}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := buildTable(t, entries, tc.opts)
			if (len(data)-footerLen)%alignPage != 0 {
				t.Fatalf("the pages end at %d, not on a page boundary", len(data)-footerLen)
			}
			var c *cache.Cache
			if tc.cached {
				c = cache.New(64 << 20)
			}
			r := openTable(t, data, c)
			if p := r.Properties(); p.PagedFilterBlocks != oracle.NumBlocks() || p.PagedFilterProbes != uint64(oracle.Probes()) || r.PagedFilterBitsPerKey() != oracle.BitsPerKey() {
				t.Fatalf("properties: %d blocks, %d probes, %v bits/key; the oracle has %d, %d, %v",
					p.PagedFilterBlocks, p.PagedFilterProbes, r.PagedFilterBitsPerKey(), oracle.NumBlocks(), oracle.Probes(), oracle.BitsPerKey())
			}
			for _, e := range entries {
				v, _, found, err := r.Get(MakeLookupKey(e.key.UserKey, base.SeqNumMax), nil)
				if err != nil || !found || !bytes.Equal(v, e.value) {
					t.Fatalf("Get(%q) = %q, %v, %v", e.key.UserKey, v, found, err)
				}
			}
			var reached, passed int
			for pass := range 2 {
				for i := range n {
					uk := fmt.Appendf(nil, "key%09d", 2*i+1)
					k := MakeLookupKey(uk, base.SeqNumMax)
					var stats LookupStats
					_, _, found, err := r.Get(k, &stats)
					if err != nil || found {
						t.Fatalf("Get(%q) of an absent key = %v, %v", uk, found, err)
					}
					pages := stats.FilterPagesRead + stats.FilterPagesCached
					blocks := stats.BlocksRead + stats.BlocksCached
					switch {
					case !r.MayContainHash(k.Hash):
						if pages != 0 || blocks != 0 || stats.PagedFilterNegative {
							t.Fatalf("%q: ruled out by the filter, yet %d pages and %d blocks read", uk, pages, blocks)
						}
						continue
					case pages != 1:
						t.Fatalf("%q: %d pages read, want 1", uk, pages)
					case stats.PagedFilterNegative == oracle.MayContainHash(k.Hash):
						t.Fatalf("%q: the paged filter ruled it out: %v, the oracle: %v", uk, stats.PagedFilterNegative, !oracle.MayContainHash(k.Hash))
					case stats.PagedFilterNegative && blocks != 0:
						t.Fatalf("%q: ruled out by the paged filter, yet %d blocks read", uk, blocks)
					case tc.cached && pass == 1 && stats.FilterPagesCached != 1:
						t.Fatalf("%q: the page was not found in the cache the second time", uk)
					}
					var lstats LookupStats
					if _, ok, err := r.Locate(k, &lstats); err != nil || ok == lstats.PagedFilterNegative || lstats.PagedFilterNegative != stats.PagedFilterNegative {
						t.Fatalf("Locate(%q) = %v, %v, paged negative %v; Get's %v", uk, ok, err, lstats.PagedFilterNegative, stats.PagedFilterNegative)
					}
					if pass == 0 {
						reached++
						if !stats.PagedFilterNegative {
							passed++
						}
					}
				}
			}
			p := bloom.BlockedFalsePositiveRate(oracle.BitsPerKey(), oracle.Probes())
			sd := math.Sqrt(p * (1 - p) / float64(reached))
			if got := float64(passed) / float64(reached); math.Abs(got-p) > 5*sd {
				t.Errorf("paged filter: %d of %d absent keys passed (%.4f), the formula says %.4f (± %.4f)", passed, reached, got, p, 5*sd)
			}
		})
	}
}

// TestPagedFilterFlipDetected damages bytes of every page of a paged
// filter, its stored blocks and trailers: a Get that reads a damaged page
// fails with a corruption error naming the file, never answers wrongly
// (readAll), and one that reads only intact pages answers as before.
func TestPagedFilterFlipDetected(t *testing.T) {
	entries := distinctEntries(8000)
	data := buildTable(t, entries, WriterOptions{BlockSize: 512, Filter: Bloom(1), PagedFilterBits: 10})
	r := openTable(t, data, nil)
	pages := pagesOf(r.Properties().PagedFilterBlocks)
	if pages < 3 {
		t.Fatalf("%d pages, want a few", pages)
	}
	start := uint64(len(data)-footerLen) - pages*pagedFilterPageSize
	for p := range pages {
		n := min(pagedFilterBlocksPerPage, r.Properties().PagedFilterBlocks-p*pagedFilterBlocksPerPage)
		for i := uint64(0); i < n*64+blockTrailerLen; i += 61 {
			damaged := bytes.Clone(data)
			damaged[start+p*pagedFilterPageSize+i] ^= 0x5a
			checkCorruption(t, readAll(t, damaged, entries, "paged filter flip"), fmt.Sprintf("flip of page %d's byte %d", p, i))
		}
	}
}

// TestPagedFilterBits checks that a writer refuses bits per key no Bloom
// filter has.
func TestPagedFilterBits(t *testing.T) {
	for _, bits := range []float64{-1, 0.5, math.NaN(), bloom.MaxBitsPerKey + 1} {
		if _, err := NewWriter(new(bytes.Buffer), WriterOptions{PagedFilterBits: bits}); err == nil {
			t.Errorf("PagedFilterBits %v: no error", bits)
		}
	}
}
