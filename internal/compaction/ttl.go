package compaction

import (
	"fmt"

	"github.com/bloomkv/bloomkv/internal/base"
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
