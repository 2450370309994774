package compaction

import (
	"bytes"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/blob"
)

// fixedClock is a clock stopped at an instant.
type fixedClock int64

func (c fixedClock) Now() time.Time { return time.Unix(0, int64(c)) }

// ttl is a version of uk that expires at expiry.
func ttl(uk string, seq base.SeqNum, expiry int64, value string) entry {
	return entry{base.MakeInternalKey([]byte(uk), seq, base.KindSetTTL), append(base.AppendExpiry(nil, expiry), value...)}
}

// blobTTL is a separated version of uk that expires at expiry.
func blobTTL(uk string, seq base.SeqNum, expiry int64, h blob.Handle) entry {
	return entry{base.MakeInternalKey([]byte(uk), seq, base.KindSetBlobTTL), blob.AppendHandle(base.AppendExpiry(nil, expiry), h)}
}

// TestRunExpiry checks that Run treats a version whose expiry has passed
// at its clock's reading exactly as a tombstone of its seqnum — the same
// keep rule, snapshots included — and leaves one that has not as it is.
func TestRunExpiry(t *testing.T) {
	const expiry = 1000
	h := blob.Handle{FileNum: 7, Offset: 0, Length: 300}
	cases := []struct {
		name       string
		now        int64
		in         []entry
		snapshots  []base.SeqNum
		bottommost bool
		want       []entry
		expired    uint64
	}{
		{"before its expiry a version is kept whole", expiry - 1,
			[]entry{ttl("a", 5, expiry, "v5"), set("a", 3, "v3")}, nil, true,
			[]entry{ttl("a", 5, expiry, "v5")}, 0},
		{"at its expiry, at the bottom, it goes with what it shadows", expiry,
			[]entry{ttl("a", 5, expiry, "v5"), set("a", 3, "v3"), set("b", 1, "b1")}, nil, true,
			[]entry{set("b", 1, "b1")}, 1},
		{"above the bottom it stays as a tombstone", expiry + 1,
			[]entry{ttl("a", 5, expiry, "v5"), set("a", 3, "v3")}, nil, false,
			[]entry{del("a", 5)}, 1},
		{"a snapshot between it and an older version keeps both, it as a tombstone", expiry,
			[]entry{ttl("a", 5, expiry, "v5"), set("a", 3, "v3")}, []base.SeqNum{4}, true,
			[]entry{del("a", 5), set("a", 3, "v3")}, 1},
		{"a snapshot above it changes nothing: it expired for every read", expiry,
			[]entry{set("a", 9, "v9"), ttl("a", 5, expiry, "v5"), set("a", 3, "v3")}, []base.SeqNum{6}, true,
			[]entry{set("a", 9, "v9")}, 1},
		{"a newer version in its stripe shadows it before it is judged", expiry,
			[]entry{set("a", 9, "v9"), ttl("a", 5, expiry, "v5")}, nil, true,
			[]entry{set("a", 9, "v9")}, 0},
		{"a separated value keeps its expiry", expiry - 1,
			[]entry{blobTTL("a", 5, expiry, h)}, nil, true,
			[]entry{blobTTL("a", 5, expiry, h)}, 0},
		{"an expired separated value is dropped", expiry,
			[]entry{blobTTL("a", 5, expiry, h), set("b", 1, "b1")}, nil, true,
			[]entry{set("b", 1, "b1")}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := with(defaultOptions(), func(o *Options) { o.Clock = fixedClock(tc.now) })
			got, stats := runOneWith(t, [][]entry{tc.in}, tc.bottommost, tc.snapshots, opts)
			if !equalEntries(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if stats.ExpiredDropped != tc.expired {
				t.Errorf("ExpiredDropped = %d, want %d", stats.ExpiredDropped, tc.expired)
			}
			if stats.EntriesIn != stats.EntriesOut+stats.ShadowedDropped+stats.TombstonesDropped {
				t.Errorf("stats do not add up: %+v", stats)
			}
		})
	}
	// Without a clock nothing expires.
	got, stats := runOne(t, [][]entry{{ttl("a", 5, 1, "v5")}}, true, nil)
	if want := []entry{ttl("a", 5, 1, "v5")}; !equalEntries(got, want) || stats.ExpiredDropped != 0 {
		t.Errorf("without a clock: got %v (%d expired), want %v", got, stats.ExpiredDropped, want)
	}
}

// mergeGetAt is mergeGet for a tree whose versions may expire: a read at
// clock reading now folds the operands over a base with an expiry while
// it is after now (without the expiry), over nothing once it is not.
func mergeGetAt(es []entry, userKey []byte, seq base.SeqNum, now int64) (value []byte, found bool) {
	resolved := make([]entry, 0, len(es))
	for _, e := range es {
		if e.key.Kind() == base.KindSetTTL {
			expiry, rest, _ := base.SplitExpiry(e.value)
			kind := base.KindSet
			if now >= expiry {
				kind, rest = base.KindDelete, nil
			}
			e = entry{base.MakeInternalKey(e.key.UserKey, e.key.SeqNum(), kind), rest}
		}
		resolved = append(resolved, e)
	}
	return mergeGet(resolved, userKey, seq)
}

// TestRunMergeOverExpiry checks Run's folding of merge operands over a
// base with a time-to-live against mergeGetAt: every read, at a clock
// reading before the base's expiry and at one after, gets the same value
// from the output as from the input. Expired at the run's clock, the base
// is a tombstone and the operands fold into a Set of their own; live, the
// operands fold into one and the base stays below them, expiry and all,
// since a read after the expiry must fold them over nothing.
func TestRunMergeOverExpiry(t *testing.T) {
	const expiry = 1000
	op := func(seq base.SeqNum, v string) entry {
		return entry{base.MakeInternalKey([]byte("a"), seq, base.KindMerge), []byte(v)}
	}
	in := []entry{op(7, "+c"), op(6, "+b"), ttl("a", 5, expiry, "v5"), set("a", 3, "v3")}
	cases := []struct {
		name       string
		now        int64
		bottommost bool
		want       []entry
		expired    uint64
		snapshots  []base.SeqNum
	}{
		{"live base: operands folded, the base kept", expiry - 1, true,
			[]entry{op(7, "+b+c"), ttl("a", 5, expiry, "v5")}, 0, nil},
		{"live base above the bottom", expiry - 1, false,
			[]entry{op(7, "+b+c"), ttl("a", 5, expiry, "v5")}, 0, nil},
		{"expired base: the fold over nothing", expiry, true,
			[]entry{set("a", 7, "+b+c")}, 1, nil},
		{"expired base above the bottom", expiry + 1, false,
			[]entry{set("a", 7, "+b+c")}, 1, nil},
		{"expired base in an older stripe, next below the run", expiry, false,
			[]entry{set("a", 7, "+b+c"), del("a", 5)}, 1, []base.SeqNum{5}},
		{"live base in an older stripe", expiry - 1, false,
			[]entry{op(7, "+b+c"), ttl("a", 5, expiry, "v5")}, 0, []base.SeqNum{5}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := with(defaultOptions(), func(o *Options) { o.Clock = fixedClock(tc.now); o.Merger = appendMerger })
			got, stats := runOneWith(t, [][]entry{in}, tc.bottommost, tc.snapshots, opts)
			if !equalEntries(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			if stats.ExpiredDropped != tc.expired {
				t.Errorf("ExpiredDropped = %d, want %d", stats.ExpiredDropped, tc.expired)
			}
			for _, now := range []int64{tc.now, expiry - 1, expiry, expiry + 5} {
				if now < tc.now {
					continue // the clock does not go back
				}
				wantV, wantOK := mergeGetAt(in, []byte("a"), base.SeqNumMax, now)
				gotV, gotOK := mergeGetAt(got, []byte("a"), base.SeqNumMax, now)
				if gotOK != wantOK || !bytes.Equal(gotV, wantV) {
					t.Errorf("read at %d: output gives %q (%v), input %q (%v)", now, gotV, gotOK, wantV, wantOK)
				}
			}
		})
	}
}
