package compaction

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/blob"
	"github.com/bloomkv/bloomkv/internal/iterator"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/rangedel"
	"github.com/bloomkv/bloomkv/sstable"
)

// cancelCheckInterval is how many entries Run merges between looks at its
// context: often enough to stop within a millisecond, rarely enough to cost
// nothing.
const cancelCheckInterval = 1024

// Run performs compaction c: it merges the input tables in internal-key
// order, keeps of each user key the versions a read point can still see,
// writes them to new tables of c.OutputLevel, and returns the new tables'
// metadata, in key order, for c.Edit. snapshots are the sequence numbers of
// the live snapshots, in any order; every version newer than all of them is
// visible to the latest read only.
//
// Of the versions of a user key, newest first, Run keeps a version iff it is
// the newest of its snapshot stripe (see the package doc) and no range
// tombstone of the inputs in the same stripe covers it with a newer
// seqnum; and when c.Bottommost, it drops the tombstones among those that
// have no kept version older than them — a read that saw such a tombstone
// now finds nothing, as before. The inputs' range tombstones (Env.RangeDels)
// are merged and carried to the outputs, keeping the newest seqnum of each
// stripe and, when c.Bottommost, none of the oldest stripe (see
// readRangeDels); each output gets the part between its boundaries, which
// fall just past its last key, so outputs' bounds never share a user key.
// Output tables are cut at a change of user key, near opts.TargetFileSize
// and where they can at the start of one of c.Grandparents (outputCutter),
// and built with opts.TableOptions but c.Compression, each with the filter
// c.OutputFilter gives its file number, and the paged filter
// PagedFilterFor gives that filter.
//
// Run checks ctx every thousand entries or so and stops with its error. On
// any failure — ctx, an input, an output, inputs out of order (wrapping
// base.ErrCorruption) — it aborts every output it created and returns no
// tables, and the version is left as it was.
func Run(ctx context.Context, c *Compaction, env Env, snapshots []base.SeqNum, opts *Options) ([]*manifest.FileMetadata, Stats, error) {
	r := &runner{
		c:          c,
		lastStripe: -1,
		env:        env,
		stripes:    newStripes(snapshots),
		cutter:     newOutputCutter(outputTarget(c, opts), c.Grandparents),
		wopts:      opts.TableOptions,
		now:        math.MinInt64,

		pagedFilterBits: opts.PagedFilterBits,
	}
	if opts.Clock != nil {
		r.now = opts.Clock.Now().UnixNano()
	}
	if opts.Merger != nil {
		r.mergeFn = opts.Merger.Merge
	}
	r.wopts.RangeFilterBits = opts.RangeFilterBits[c.OutputLevel]
	r.wopts.Compression = c.Compression

	r.stats.InputTables = c.NumInputs()
	r.stats.BytesRead = c.InputBytes()

	err := r.readRangeDels()
	if err == nil {
		err = r.merge(ctx)
	}
	if err == nil && r.w == nil && len(r.rangeDels.Truncate(r.outLo, nil)) > 0 {
		err = r.newOutput() // range tombstones after the last kept version
	}
	if err == nil {
		err = r.finishOutput(nil)
	}
	if err == nil {
		err = r.finishBlob()
	}
	if err != nil {
		r.abort()
		return nil, r.stats, err
	}
	return r.outputs, r.stats, nil
}

// runner is the state of one Run.
type runner struct {
	c       *Compaction
	env     Env
	stripes stripes
	cutter  outputCutter
	wopts   sstable.WriterOptions
	// pagedFilterBits is Options.PagedFilterBits, which PagedFilterFor
	// weighs against each output's filter.
	pagedFilterBits float64
	stats           Stats
	// now is the clock's reading at the start of Run (Options.Clock), by
	// which versions expire: math.MinInt64, none, without a clock.
	now int64

	// The user key being merged (once haveKey), its last trailer and the
	// stripe of its last kept version (−1: none yet).
	haveKey     bool
	userKey     []byte
	lastTrailer base.Trailer
	lastStripe  int
	// wroteKey reports that an entry of userKey has been written: the next
	// write of the same key must go to the same table.
	wroteKey bool
	// pending are kept tombstones of userKey not yet written, newest
	// first: at the bottom they are written only if a kept version older
	// than them turns up. Their values are in pendingVals.
	pending     []pendingTombstone
	pendingVals []byte

	// allRangeDels are the inputs' range tombstones, merged, and
	// rangeDels those the outputs keep (see readRangeDels); rdPos is the
	// fragment of allRangeDels at or after the user key being merged.
	allRangeDels, rangeDels rangedel.List
	rdPos                   int
	// outLo is where the current output's range tombstones start (nil: at
	// the first), and lastWritten the user key last written to it.
	outLo       []byte
	lastWritten []byte

	// The output being written, and those finished.
	out     *Output
	counter countingWriter
	w       *sstable.Writer
	created []*Output // every output created, for abort
	outputs []*manifest.FileMetadata

	// refs are the current output's blob references; blobOut and bw the
	// blob file values are relocated to, once one is; blobBuf the stored
	// bytes of the value being relocated.
	refs    map[uint64]uint64
	blobOut *Output
	bw      *blob.Writer
	blobBuf []byte
	// ttlBuf is the entry of a KindSetBlobTTL being written: its expiry
	// and its handle.
	ttlBuf []byte

	// mergeFn folds merge operands (Options.Merge); mg is the run of
	// operands being folded (see merge.go).
	mergeFn base.MergeFunc
	mg      mergeRun
}

// pendingTombstone is a kept tombstone of the current user key whose
// writing waits; its value is pendingVals[start:end].
type pendingTombstone struct {
	trailer    base.Trailer
	start, end int
}

// merge streams the inputs through the keep rule into the outputs.
func (r *runner) merge(ctx context.Context) (err error) {
	it, err := r.inputIter()
	if err != nil {
		return err
	}
	defer func() {
		if cerr := it.Close(); err == nil {
			err = cerr
		}
	}()
	for ok := it.First(); ok; ok = it.Next() {
		if r.stats.EntriesIn%cancelCheckInterval == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		r.stats.EntriesIn++
		if err := r.add(it.Key(), it.Value()); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	if err := r.finishMergeRun(nil, nil); err != nil {
		return err
	}
	r.endKey()
	return nil
}

// inputIter returns the merge of the inputs: each L0 table on its own (they
// overlap), each deeper level's tables concatenated by a level iterator
// (they do not), which opens them one at a time. It is the DB's read-path
// merge; Run walks it forward only.
func (r *runner) inputIter() (*iterator.MergingIter, error) {
	var children []iterator.Iterator
	for i, files := range r.c.Inputs {
		level := r.c.Level
		if i == 1 {
			level = r.c.OutputLevel
		}
		if len(files) == 0 {
			continue
		}
		if level > 0 {
			open := func(j int) (iterator.Iterator, error) { return r.env.Open(files[j]) }
			children = append(children, iterator.NewLevelIter(files, open, nil, nil))
			continue
		}
		for _, f := range files {
			it, err := r.env.Open(f)
			if err != nil {
				for _, c := range children {
					c.Close()
				}
				return nil, err
			}
			children = append(children, it)
		}
	}
	return iterator.NewMergingIter(children...), nil
}

// add applies the keep rule to the next entry of the merge.
func (r *runner) add(k base.InternalKey, value []byte) error {
	if !r.haveKey || !bytes.Equal(k.UserKey, r.userKey) {
		if r.haveKey && bytes.Compare(k.UserKey, r.userKey) < 0 {
			return r.outOfOrder(k)
		}
		if err := r.finishMergeRun(nil, nil); err != nil {
			return err
		}
		r.endKey()
		r.userKey = append(r.userKey[:0], k.UserKey...)
		r.haveKey = true
	} else if k.Trailer >= r.lastTrailer {
		return r.outOfOrder(k)
	}
	r.lastTrailer = k.Trailer

	stripe := r.stripes.of(k.SeqNum())
	if r.mg.active {
		if stripe == r.mg.stripe {
			return r.mergeNext(k, value)
		}
		if err := r.finishMergeRun(&k, value); err != nil {
			return err
		}
	}
	if stripe == r.lastStripe {
		// A newer version of this key is in the same stripe: every read
		// point that could see this one sees that one instead.
		r.stats.ShadowedDropped++
		return nil
	}
	r.lastStripe = stripe
	if r.rangeDeleted(k, stripe) {
		// A range tombstone of the same stripe deletes it: every read
		// point that could see this version sees the tombstone too.
		r.stats.RangeDeletedDropped++
		return nil
	}
	if k.Kind().HasExpiry() {
		var err error
		if k, value, err = r.expire(k, value); err != nil {
			return err
		}
	}
	if k.Kind() == base.KindDelete && r.c.Bottommost {
		// Whether it hides anything depends on the versions older than
		// it, which come next.
		start := len(r.pendingVals)
		r.pendingVals = append(r.pendingVals, value...)
		r.pending = append(r.pending, pendingTombstone{trailer: k.Trailer, start: start, end: len(r.pendingVals)})
		return nil
	}
	// A version that stays: the pending tombstones above it hide it from
	// their read points, so they stay too.
	for _, p := range r.pending {
		if err := r.write(base.InternalKey{UserKey: r.userKey, Trailer: p.trailer}, r.pendingVals[p.start:p.end]); err != nil {
			return err
		}
	}
	r.pending, r.pendingVals = r.pending[:0], r.pendingVals[:0]
	if k.Kind() == base.KindMerge {
		// The newest version of its stripe, kept: with the operands and
		// the base below it in the stripe, folded into one (merge.go).
		r.startMergeRun(k, value, stripe)
		return nil
	}
	return r.write(k, value)
}

// endKey finishes the current user key: its pending tombstones hide nothing
// (nothing older was kept, and nothing is below), so they go.
func (r *runner) endKey() {
	r.stats.TombstonesDropped += uint64(len(r.pending))
	r.pending, r.pendingVals = r.pending[:0], r.pendingVals[:0]
	r.lastStripe = -1
	r.wroteKey = false
}

func (r *runner) outOfOrder(k base.InternalKey) error {
	prev := base.InternalKey{UserKey: r.userKey, Trailer: r.lastTrailer}
	return fmt.Errorf("%w: compaction L%d→L%d: input key %v after %v", base.ErrCorruption, r.c.Level, r.c.OutputLevel, k, prev)
}

// readRangeDels reads the input tables' range tombstones and merges them.
// The outputs keep of each fragment's seqnums the newest of each snapshot
// stripe — an older one in the same stripe deletes less for the same read
// points — and, when c.Bottommost, none of the oldest stripe: the versions
// such a tombstone covers are all in that stripe too, so Run drops them
// (rangeDeleted), and nothing below the output level holds any, so the
// tombstone has nothing left to hide.
func (r *runner) readRangeDels() error {
	if r.env.RangeDels == nil {
		return nil
	}
	var lists []rangedel.List
	for _, files := range r.c.Inputs {
		for _, f := range files {
			l, err := r.env.RangeDels(f)
			if err != nil {
				return err
			}
			if len(l) > 0 {
				lists = append(lists, l)
			}
		}
	}
	r.allRangeDels = rangedel.Merge(lists...)
	r.stats.RangeDelsIn = uint64(r.allRangeDels.Count())
	r.rangeDels = r.allRangeDels.Filter(func(f *rangedel.Fragment, s base.SeqNum) bool {
		stripe := r.stripes.of(s)
		if r.c.Bottommost && stripe == 0 {
			return false
		}
		// Seqs are newest first: s is the newest of its stripe iff the
		// seqnum before it is in a newer stripe.
		i := slices.Index(f.Seqs, s)
		return i == 0 || r.stripes.of(f.Seqs[i-1]) != stripe
	})
	r.stats.RangeDelsDropped = r.stats.RangeDelsIn - uint64(r.rangeDels.Count())
	return nil
}

// rangeDeleted reports whether a range tombstone of the inputs deletes k,
// of the given stripe, for every read point that can see it: one covering
// k with a newer seqnum in the same stripe. Keys come in order, so the
// fragment to look at only moves forward.
func (r *runner) rangeDeleted(k base.InternalKey, stripe int) bool {
	l := r.allRangeDels
	for r.rdPos < len(l) && bytes.Compare(l[r.rdPos].End, k.UserKey) <= 0 {
		r.rdPos++
	}
	if r.rdPos == len(l) || !l[r.rdPos].Covers(k.UserKey) {
		return false
	}
	for _, s := range l[r.rdPos].Seqs {
		if s <= k.SeqNum() {
			return false
		}
		if r.stripes.of(s) == stripe {
			return true
		}
	}
	return false
}
