package compaction

import (
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
