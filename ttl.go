package bloomkv

import (
	"fmt"
	"time"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/batchrepr"
	"github.com/bloomkv/bloomkv/internal/manifest"
)

// Writes with a time-to-live (docs/ttl.md). A write of kind
// base.KindSetTTL carries its expiry before its value (base.ExpiryLen);
// Apply stamps it: the clock's reading at the commit plus the write's
// time-to-live, one reading for the whole batch, written into the batch's
// bytes before the WAL record is, so that recovery replays the instant,
// not the duration. From that instant on the version reads as a
// tombstone: it hides the key and every older version of it from every
// read, and compactions treat it as one (internal/compaction).

// Clock tells the time by which expiries are set and judged
// (Options.Clock).
type Clock interface {
	Now() time.Time
}

// systemClock is the default Clock: the wall clock.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// nowNanos reads the DB's clock, in Unix nanoseconds.
func (d *DB) nowNanos() int64 { return d.opts.Clock.Now().UnixNano() }

// pendingTTL is a KindSetTTL write of a Batch: where its expiry is in the
// batch's bytes, and its time-to-live, from which each commit of the batch
// stamps the expiry anew.
type pendingTTL struct {
	off int
	ttl time.Duration
}

// SetWithTTL adds a write of value under key that expires ttl after the
// batch is committed: from then on every read finds key deleted (an older
// version of key does not come back), and compactions reclaim it as they
// do a deletion. The expiry is set by Apply, from Options.Clock, the same
// instant for every write of the batch. An indexed batch's own reads see
// the write as live: its time-to-live starts at the commit. It returns an
// *ArgumentError, and adds nothing, for a ttl that is not positive or a
// key or value over its limit.
func (b *Batch) SetWithTTL(key, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return argError("ttl", "%v is not positive", ttl)
	}
	if err := checkKeyValue(key, value); err != nil {
		return err
	}
	if err := b.room(base.ExpiryLen + len(key) + len(value)); err != nil {
		return err
	}
	var off int
	b.data, off = batchrepr.AppendTTLEntry(b.data, key, int64(ttl), value)
	b.ttls = append(b.ttls, pendingTTL{off: off, ttl: ttl})
	b.added()
	return nil
}

// stampExpiries writes the expiry of each of b's KindSetTTL writes for a
// commit at now (Unix nanoseconds).
func (b *Batch) stampExpiries(now int64) {
	for _, p := range b.ttls {
		batchrepr.SetExpiry(b.data, p.off, base.ExpiryAfter(now, int64(p.ttl)))
	}
}

// PutWithTTL sets key to value until ttl from now (Options.Clock): from
// then on every read finds key deleted, as if a Delete had been written at
// that instant, and compactions reclaim it. With a nil or Sync
// WriteOptions it returns once the write is durable. It returns an
// *ArgumentError for a ttl that is not positive or a key or value over
// its limit.
func (d *DB) PutWithTTL(key, value []byte, ttl time.Duration, opts *WriteOptions) error {
	w := getSingleWrite()
	defer putSingleWrite(w)
	if err := w.batch.SetWithTTL(key, value, ttl); err != nil {
		return err
	}
	return d.apply(&w.batch, &w.req, opts)
}

// SetWithTTL writes value under key in the transaction, to expire ttl
// after the transaction commits (Batch.SetWithTTL).
func (t *Transaction) SetWithTTL(key, value []byte, ttl time.Duration) error {
	if err := t.check(); err != nil {
		return err
	}
	if t.update {
		if err := t.fits(int64(base.ExpiryLen + maxEntryOverhead + len(key) + len(value))); err != nil {
			return err
		}
	}
	return t.write(key, value, func(b *Batch, key, value []byte) error { return b.SetWithTTL(key, value, ttl) })
}

// uncommittedTTL returns a write of an indexed batch as the batch's own
// reads see it: a KindSetTTL write, whose time-to-live has not started
// (it starts at the commit), as the KindSet of its value.
func uncommittedTTL(kind base.Kind, value []byte) (base.Kind, []byte) {
	if kind == base.KindSetTTL {
		return base.KindSet, value[base.ExpiryLen:]
	}
	return kind, value
}

// errShortExpiry is the error of a version whose kind says its value
// starts with an expiry and whose value is too short to: a damaged table
// (writers and batch decoding refuse such an entry).
func errShortExpiry(key []byte, kind base.Kind, n int) error {
	return fmt.Errorf("%w: version of %q of kind %v has a value of %d bytes, shorter than its expiry", ErrCorruption, key, kind, n)
}

// readClock is a point read's reading of the clock, taken at the first
// version with an expiry it meets, so that a read that meets none reads no
// clock, and one that meets several (a MultiGet) judges them all at one
// instant.
type readClock struct {
	d    *DB
	now  int64
	read bool
}

func (c *readClock) nanos() int64 {
	if !c.read {
		c.now, c.read = c.d.nowNanos(), true
	}
	return c.now
}

// unexpired takes the version a point read found for key, of kind and
// value, and returns what the read answers: for a kind with an expiry,
// the version without it (KindSet or KindSetBlob, the value after the
// expiry) if it has not expired at the clock's reading, and a deletion
// (base.KindDelete) if it has; any other version as it is. tr, if not
// nil, records the expiry.
func (c *readClock) unexpired(key, value []byte, kind base.Kind, tr lookupTracer) ([]byte, base.Kind, error) {
	if !kind.HasExpiry() {
		return value, kind, nil
	}
	expiry, rest, ok := base.SplitExpiry(value)
	if !ok {
		return nil, 0, errShortExpiry(key, kind, len(value))
	}
	now := c.nanos()
	if tr != nil {
		tr.expiry(expiry, now)
	}
	if now >= expiry {
		return nil, base.KindDelete, nil
	}
	return rest, kind.WithoutExpiry(), nil
}

// sets reports whether version k, the entry inner is at, sets its key for
// the Iterator's read: a Set, or a Set with an expiry that has not passed
// at the Iterator's clock reading (iterState.now). A version whose value
// is too short to hold its expiry stops the Iterator with an error.
func (it *Iterator) sets(k base.InternalKey) bool {
	kind := k.Kind()
	if !kind.HasExpiry() {
		return kind.IsSet()
	}
	expiry, _, ok := base.SplitExpiry(it.inner.Value())
	if !ok {
		it.err = errShortExpiry(k.UserKey, kind, len(it.inner.Value()))
		return false
	}
	return it.now < expiry
}

// withoutExpiry returns the value of a version sets found live, and
// whether it is a blob handle: the expiry, if its kind has one, stripped.
func withoutExpiry(kind base.Kind, value []byte) ([]byte, bool) {
	if kind.HasExpiry() {
		value = value[base.ExpiryLen:]
	}
	return value, kind.WithoutExpiry() == base.KindSetBlob
}

// earliestExpiryLocked returns the earliest expiry of the versions of
// table f, from its properties; ok is false for a table without versions
// that expire, or one not open. d.mu is held.
func (d *DB) earliestExpiryLocked(f *manifest.FileMetadata) (int64, bool) {
	t, ok := d.mu.tables[f.FileNum]
	if !ok {
		return 0, false
	}
	p := t.reader.Properties()
	return p.EarliestExpiry, p.ExpiringEntries > 0
}
