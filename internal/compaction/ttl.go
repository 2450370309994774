package compaction

import (
	"fmt"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
)

// expire returns the entry to merge for version k, whose kind has an
// expiry (base.KindSetTTL, base.KindSetBlobTTL), of the given value: the
// version itself while its expiry is after the clock's reading at the
// start of Run, and a tombstone with its sequence number once it is not.
//
// An expired version hides its key from every read, at every read point
// that sees it, exactly as a tombstone with its sequence number would: so
// from here on it is one, under the same keep rule. It shadows the older
// versions of its snapshot stripe (dropped by the stripe rule already),
// is written where a tombstone would be kept — above the bottom, or with a
// kept older version below it — and dropped where a tombstone would be.
// Either way its value, and the blob value its handle locates, is gone.
//
// This takes the clock not to go back: a version expired at Run's reading
// is then expired for every read after it, which a tombstone in its place
// makes permanent.
func (r *runner) expire(k base.InternalKey, value []byte) (base.InternalKey, []byte, error) {
	expiry, _, ok := base.SplitExpiry(value)
	if !ok {
		return k, nil, fmt.Errorf("%w: compaction L%d→L%d: entry %v has a value of %d bytes, shorter than its expiry", base.ErrCorruption, r.c.Level, r.c.OutputLevel, k, len(value))
	}
	if r.now < expiry {
		return k, value, nil
	}
	r.stats.ExpiredDropped++
	k.Trailer = base.MakeTrailer(k.SeqNum(), base.KindDelete)
	return k, nil, nil
}

// PickExpired returns the next step of reclaiming what expired in the
// user-key range [lo, hi] (hi nil: no upper bound) once PickManual has
// nothing left to do there: a rewrite, into its own level, of a table of
// the deepest level holding the range whose earliest expiry is at or
// before now (Unix nanoseconds), or nil when there is none. earliest
// gives a table's earliest expiry from its properties, ok false for a
// table without versions that expire.
//
// PickManual leaves the deepest level as it is: there is no level below
// to merge it with. A tombstone that got there had nothing below it to
// hide and was dropped; but a version whose time-to-live ends later stays
// there, its space held, until a compaction from above happens to reach
// it. The rewrite (bottommost, so its keep rule drops every expired
// version no snapshot separates from the older ones) gives it back. Its
// outputs hold no version that expired by now, so a caller that passes
// the same now gets nil after a rewrite of each such table.
func PickExpired(v *manifest.Version, lo, hi []byte, now int64, earliest func(*manifest.FileMetadata) (int64, bool), opts *Options) *Compaction {
	if hi == nil {
		if hi = largestUserKey(v); hi == nil {
			return nil // the version is empty
		}
	}
	for level := lastLevel; level > 0; level-- {
		files := v.Overlapping(level, lo, hi)
		if len(files) == 0 {
			continue
		}
		for _, f := range files {
			if e, ok := earliest(f); ok && e <= now {
				c := newRewrite(v, level, f)
				c.Manual = true
				c.complete(v, opts)
				return c
			}
		}
		return nil
	}
	return nil
}
