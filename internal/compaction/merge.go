package compaction

import (
	"fmt"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/blob"
)

// mergeRun is the run of merge operands (base.KindMerge) of the current
// user key, all in one snapshot stripe, that Run is folding: it starts
// at the newest version of a stripe when that is an operand (the keep
// rule keeps it), takes the operands below it in the same stripe, and
// ends at the first other version of the stripe — the base it folds
// over: a Set's value, or none for a tombstone, a version expired at the
// clock's reading or a version a range tombstone of the stripe deletes; a
// Set with an expiry not yet passed is kept below the run instead
// (mergeOverExpiring) — or at the stripe's end (see finishMergeRun). Every read point that sees one of its versions sees
// the newest, and folds the run down to the same place: so one version,
// the fold, at the newest operand's seqnum, answers every one of them as
// the run did.
type mergeRun struct {
	active bool
	stripe int
	// ops are the operands, newest first, copied into buf (ends);
	// trailers their trailers, to write them back unfolded should the
	// merger fail.
	buf      []byte
	ends     []int
	trailers []base.Trailer
	list     [][]byte
	// baseVal holds a separated base value, read to fold over.
	baseVal []byte
}

// startMergeRun begins a run at operand k, the newest version of its
// stripe.
func (r *runner) startMergeRun(k base.InternalKey, value []byte, stripe int) {
	m := &r.mg
	m.active, m.stripe = true, stripe
	m.buf, m.ends, m.trailers = m.buf[:0], m.ends[:0], m.trailers[:0]
	r.addOperand(k, value)
}

func (r *runner) addOperand(k base.InternalKey, value []byte) {
	m := &r.mg
	m.buf = append(m.buf, value...)
	m.ends = append(m.ends, len(m.buf))
	m.trailers = append(m.trailers, k.Trailer)
}

// mergeNext takes version k, of the run's key and stripe, into the run:
// another operand, or the base that ends it.
func (r *runner) mergeNext(k base.InternalKey, value []byte) error {
	if r.rangeDeleted(k, r.mg.stripe) {
		r.stats.RangeDeletedDropped++
		return r.endMergeRun(nil, false, nil, nil)
	}
	switch k.Kind() {
	case base.KindMerge:
		r.addOperand(k, value)
		return nil
	case base.KindSet:
		return r.endMergeRun(value, true, &k, value)
	case base.KindSetTTL, base.KindSetBlobTTL:
		return r.mergeOverExpiring(k, value)
	case base.KindSetBlob:
		if r.env.ReadBlob == nil {
			return r.keepMergeRun(&k, value)
		}
		h, ok := blob.DecodeHandle(value)
		if !ok {
			return fmt.Errorf("%w: compaction L%d→L%d: entry %v holds a malformed blob handle", base.ErrCorruption, r.c.Level, r.c.OutputLevel, k)
		}
		var err error
		if r.mg.baseVal, err = r.env.ReadBlob(r.mg.baseVal[:0], h); err != nil {
			return err
		}
		return r.endMergeRun(r.mg.baseVal, true, &k, value)
	}
	// A tombstone: no base.
	return r.endMergeRun(nil, false, &k, nil)
}

// mergeOverExpiring ends the run at version k, a base with an expiry of
// the given value. Expired at the clock's reading (see expire), it is a
// tombstone to every read from then on: the run folds over no base, as
// over a Delete. Live, it is the base only until its expiry: a read before
// it folds the operands over its value, one after it over nothing. No one
// version answers both, so the run folds into one operand (as
// finishMergeRun does with no base in sight) and k stays below it as it
// is, expiry and all; a later compaction that finds it expired folds the
// operand over nothing.
func (r *runner) mergeOverExpiring(k base.InternalKey, value []byte) error {
	expiry, _, ok := base.SplitExpiry(value)
	if !ok {
		return fmt.Errorf("%w: compaction L%d→L%d: entry %v has a value of %d bytes, shorter than its expiry", base.ErrCorruption, r.c.Level, r.c.OutputLevel, k, len(value))
	}
	if r.now >= expiry {
		// Kept as a tombstone should the merger fail: an expired version
		// is never written back (PickExpired counts on it).
		r.stats.ExpiredDropped++
		k.Trailer = base.MakeTrailer(k.SeqNum(), base.KindDelete)
		return r.endMergeRun(nil, false, &k, nil)
	}
	if err := r.collapseMergeRun(); err != nil {
		return err
	}
	return r.write(k, value)
}

// expired reports whether version k, of the given value, has an expiry
// that has passed at the clock's reading (a value too short to hold one
// is left to expire to report).
func (r *runner) expired(k base.InternalKey, value []byte) bool {
	if !k.Kind().HasExpiry() {
		return false
	}
	expiry, _, ok := base.SplitExpiry(value)
	return ok && r.now >= expiry
}

// finishMergeRun ends the run, if one is open, where the stripe or the
// key ends with no base in the stripe: next is the key's next version, in
// an older stripe (its value nextValue), nil at the key's end. There is
// no base for any read of the run when next is a tombstone, a version
// expired at the clock's reading (for every read from then on), or a
// version a range tombstone of its stripe deletes (that tombstone is older
// than the run, so its reads see it too), and at the bottom of the tree with no version left below:
// the fold is then the key's value, a Set. Otherwise next, or a deeper
// level, may hold the base: the run folds into one operand.
func (r *runner) finishMergeRun(next *base.InternalKey, nextValue []byte) error {
	if !r.mg.active {
		return nil
	}
	if next == nil && r.c.Bottommost ||
		next != nil && (next.Kind() == base.KindDelete || r.expired(*next, nextValue) || r.rangeDeleted(*next, r.stripes.of(next.SeqNum()))) {
		return r.endMergeRun(nil, false, nil, nil)
	}
	return r.collapseMergeRun()
}

// collapseMergeRun ends the run with its operands folded into one, the
// newest's version, where the base is not known (or not one): each read
// folds it over what it finds below, as it did the operands.
func (r *runner) collapseMergeRun() error {
	m := &r.mg
	if len(m.ends) == 1 || r.mergeFn == nil {
		return r.keepMergeRun(nil, nil)
	}
	m.active = false
	v, err := base.Fold(r.mergeFn, r.userKey, nil, false, r.operandsOldestFirst())
	if err != nil {
		return r.keepMergeRun(nil, nil)
	}
	r.stats.MergesFolded += uint64(len(m.ends))
	return r.write(base.InternalKey{UserKey: r.userKey, Trailer: m.trailers[0]}, v)
}

// endMergeRun ends the run at its base: value when hasBase, none
// otherwise; the fold, a Set at the newest operand's seqnum, replaces the
// operands and the version that ended the run (baseKey, stored as raw,
// when there is one: a Set, or a tombstone), which it shadows in their
// stripe. With no merger, or if the merger fails, everything is kept as
// it was (keepMergeRun).
func (r *runner) endMergeRun(value []byte, hasBase bool, baseKey *base.InternalKey, raw []byte) error {
	m := &r.mg
	if r.mergeFn == nil {
		return r.keepMergeRun(baseKey, raw)
	}
	v, err := base.Fold(r.mergeFn, r.userKey, value, hasBase, r.operandsOldestFirst())
	if err != nil {
		return r.keepMergeRun(baseKey, raw)
	}
	m.active = false
	r.stats.MergesFolded += uint64(len(m.ends))
	if baseKey != nil {
		r.stats.ShadowedDropped++
	}
	return r.write(base.InternalKey{UserKey: r.userKey, Trailer: base.MakeTrailer(m.trailers[0].SeqNum(), base.KindSet)}, v)
}

// keepMergeRun writes the run's operands as they came, and then the base
// version baseKey (its stored value raw), if not nil: what Run writes when it cannot
// fold, so that nothing is lost and the reads report the merger's error.
func (r *runner) keepMergeRun(baseKey *base.InternalKey, raw []byte) error {
	m := &r.mg
	m.active = false
	start := 0
	for i, end := range m.ends {
		if err := r.write(base.InternalKey{UserKey: r.userKey, Trailer: m.trailers[i]}, m.buf[start:end]); err != nil {
			return err
		}
		start = end
	}
	if baseKey == nil {
		return nil
	}
	return r.write(base.InternalKey{UserKey: r.userKey, Trailer: baseKey.Trailer}, raw)
}

// operandsOldestFirst returns the run's operands, oldest first.
func (r *runner) operandsOldestFirst() [][]byte {
	m := &r.mg
	m.list = m.list[:0]
	for i := len(m.ends) - 1; i >= 0; i-- {
		start := 0
		if i > 0 {
			start = m.ends[i-1]
		}
		m.list = append(m.list, m.buf[start:m.ends[i]:m.ends[i]])
	}
	return m.list
}
