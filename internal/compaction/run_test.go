package compaction

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/sstable"
)

// set and del make entries for the hand-written cases.
func set(uk string, seq base.SeqNum, value string) entry {
	return entry{base.MakeInternalKey([]byte(uk), seq, base.KindSet), []byte(value)}
}

func del(uk string, seq base.SeqNum) entry {
	return entry{base.MakeInternalKey([]byte(uk), seq, base.KindDelete), nil}
}

// runOne compacts tables (each a list of entries, sorted here) as L0 inputs,
// newest table first, and returns the output entries.
func runOne(t *testing.T, tables [][]entry, bottommost bool, snapshots []base.SeqNum) ([]entry, Stats) {
	t.Helper()
	return runOneWith(t, tables, bottommost, snapshots, defaultOptions())
}

// runOneWith is runOne with opts.
func runOneWith(t *testing.T, tables [][]entry, bottommost bool, snapshots []base.SeqNum, opts *Options) ([]entry, Stats) {
	t.Helper()
	s := newTableStore(t)
	c := &Compaction{Level: 0, OutputLevel: 1, Bottommost: bottommost, Filter: sstable.Bloom(10)}
	for i, es := range tables {
		es = slices.Clone(es)
		sortEntries(es)
		c.Inputs[0] = append(c.Inputs[0], s.build(uint64(i+1), es, 10))
	}
	outputs, stats, err := Run(context.Background(), c, s.env(), snapshots, opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []entry
	for _, f := range outputs {
		out = append(out, s.entries(f.FileNum)...)
	}
	return out, stats
}

func TestRunKeepRule(t *testing.T) {
	cases := []struct {
		name       string
		in         []entry
		snapshots  []base.SeqNum
		bottommost bool
		want       []entry
	}{
		{"the newest version wins", []entry{set("a", 3, "v3"), set("a", 2, "v2"), del("a", 1)}, nil, false,
			[]entry{set("a", 3, "v3")}},
		{"a snapshot keeps the version it sees", []entry{set("a", 3, "v3"), set("a", 2, "v2"), set("a", 1, "v1")}, []base.SeqNum{2}, false,
			[]entry{set("a", 3, "v3"), set("a", 2, "v2")}},
		{"a snapshot between versions keeps the older", []entry{set("a", 9, "v9"), set("a", 4, "v4"), set("a", 3, "v3")}, []base.SeqNum{7}, false,
			[]entry{set("a", 9, "v9"), set("a", 4, "v4")}},
		{"a snapshot nothing changed under keeps nothing more", []entry{set("a", 4, "v4"), set("a", 3, "v3")}, []base.SeqNum{7, 8}, false,
			[]entry{set("a", 4, "v4")}},
		{"a tombstone hiding nothing at the bottom goes", []entry{del("a", 5), set("a", 4, "v4"), set("b", 1, "b")}, nil, true,
			[]entry{set("b", 1, "b")}},
		{"a tombstone above the bottom stays", []entry{del("a", 5), set("a", 4, "v4")}, nil, false,
			[]entry{del("a", 5)}},
		{"a tombstone over a version a snapshot sees stays", []entry{del("a", 5), set("a", 4, "v4")}, []base.SeqNum{4}, true,
			[]entry{del("a", 5), set("a", 4, "v4")}},
		{"a tombstone newer than every snapshot, hiding nothing, goes", []entry{del("a", 5)}, []base.SeqNum{4}, true,
			nil},
		{"a run of tombstones hiding nothing goes", []entry{del("a", 8), set("a", 7, "v7"), del("a", 5)}, []base.SeqNum{6}, true,
			nil},
		{"tombstones between sets stay", []entry{set("a", 7, "v7"), del("a", 5), set("a", 2, "v2")}, []base.SeqNum{3, 6}, true,
			[]entry{set("a", 7, "v7"), del("a", 5), set("a", 2, "v2")}},
		{"a snapshot at a version's seqnum sees it", []entry{set("a", 6, "v6"), set("a", 5, "v5"), set("a", 4, "v4")}, []base.SeqNum{5, 5}, false,
			[]entry{set("a", 6, "v6"), set("a", 5, "v5")}},
		{"the empty key is a key", []entry{set("", 3, "e3"), set("", 2, "e2"), set("a", 1, "a")}, nil, true,
			[]entry{set("", 3, "e3"), set("a", 1, "a")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Spread the versions over tables, as flushes would: each
			// version in its own table, newest table first.
			var tables [][]entry
			in := slices.Clone(tc.in)
			slices.SortFunc(in, func(a, b entry) int { return -int(a.key.SeqNum()) + int(b.key.SeqNum()) })
			for _, e := range in {
				tables = append(tables, []entry{e})
			}
			got, stats := runOne(t, tables, tc.bottommost, tc.snapshots)
			if !equalEntries(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			if stats.EntriesIn != uint64(len(tc.in)) || stats.EntriesOut != uint64(len(tc.want)) ||
				stats.EntriesIn != stats.EntriesOut+stats.ShadowedDropped+stats.TombstonesDropped {
				t.Fatalf("stats %+v for %d in, %d out", stats, len(tc.in), len(tc.want))
			}
		})
	}
}

func equalEntries(a, b []entry) bool {
	return slices.EqualFunc(a, b, func(x, y entry) bool {
		return base.CompareInternal(x.key, y.key) == 0 && bytes.Equal(x.value, y.value)
	})
}

func TestRunSplitsOnUserKeys(t *testing.T) {
	// A key with many versions, all held by snapshots, must not be split
	// even though it alone is several times the target size.
	var in []entry
	var snaps []base.SeqNum
	seq := base.SeqNum(1)
	for _, uk := range []string{"a", "b", "c", "d"} {
		n := 3
		if uk == "b" {
			n = 60
		}
		for range n {
			in = append(in, set(uk, seq, strings.Repeat("x", 50)))
			snaps = append(snaps, seq)
			seq++
		}
	}
	sortEntries(in)
	s := newTableStore(t)
	c := &Compaction{Level: 1, OutputLevel: 2, Inputs: [2][]*manifest.FileMetadata{{s.build(1, in, 10)}}, Filter: sstable.Bloom(10)}
	outputs, _, err := Run(context.Background(), c, s.env(), snaps, with(defaultOptions(), func(o *Options) { o.TargetFileSize = 1024 }))
	if err != nil {
		t.Fatal(err)
	}
	var ranges []string
	for _, f := range outputs {
		ranges = append(ranges, string(f.Smallest.UserKey)+"-"+string(f.Largest.UserKey))
	}
	if want := []string{"a-b", "c-d"}; !slices.Equal(ranges, want) {
		t.Fatalf("outputs %v, want %v", ranges, want)
	}
}

func TestRunFailures(t *testing.T) {
	build := func(s *tableStore) *Compaction {
		var es []entry
		for i := range 400 {
			es = append(es, set(string(rune('a'+i/26))+string(rune('a'+i%26)), base.SeqNum(i+1), strings.Repeat("v", 40)))
		}
		sortEntries(es)
		c := &Compaction{Level: 1, OutputLevel: 2, Bottommost: true, Filter: sstable.Bloom(10)}
		c.Inputs[0] = []*manifest.FileMetadata{s.build(1, es[:200], 10), s.build(2, es[200:], 10)}
		c.Inputs[1] = []*manifest.FileMetadata{s.build(3, []entry{set("zz", 1000, "z")}, 10)}
		return c
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name    string
		setup   func(s *tableStore)
		ctx     context.Context
		wantErr error
	}{
		{"an input does not open", func(s *tableStore) { s.failOpen = 2 }, nil, errInjected},
		{"an output is not created", func(s *tableStore) { s.failCreate = 3 }, nil, errInjected},
		{"an output is not written", func(s *tableStore) { s.failWrite = 2 }, nil, errInjected},
		{"an output is not synced", func(s *tableStore) { s.failFinish = 4 }, nil, errInjected},
		{"the context is canceled", func(*tableStore) {}, canceled, context.Canceled},
		{"inputs repeat a key", func(s *tableStore) {
			s.tables[3] = s.tables[1] // the next level holds versions of the input level
		}, nil, base.ErrCorruption},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newTableStore(t)
			c := build(s)
			tc.setup(s)
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			outputs, _, err := Run(ctx, c, s.env(), nil, with(defaultOptions(), func(o *Options) { o.TargetFileSize = 2048 }))
			if !errors.Is(err, tc.wantErr) || outputs != nil {
				t.Fatalf("Run = %d outputs, %v; want none, %v", len(outputs), err, tc.wantErr)
			}
			if s.open != 0 {
				t.Errorf("%d input iterators left open", s.open)
			}
			for num := range s.finished {
				if !s.aborted[num] {
					t.Errorf("output %06d finished but not aborted", num)
				}
			}
			if got := s.creates - boolInt(s.failCreate > 0); len(s.aborted) != got {
				t.Errorf("%d outputs aborted, %d created", len(s.aborted), got)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestRunEverythingDropped(t *testing.T) {
	got, stats := runOne(t, [][]entry{{del("a", 3), del("b", 4)}, {set("a", 1, "x")}}, true, nil)
	if len(got) != 0 || stats.OutputTables != 0 || stats.TombstonesDropped != 2 || stats.ShadowedDropped != 1 {
		t.Fatalf("got %v, stats %+v", got, stats)
	}
}
