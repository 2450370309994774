package compaction

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/blob"
	"github.com/bloomkv/bloomkv/internal/compress"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/rangedel"
	"github.com/bloomkv/bloomkv/sstable"
)

// write adds an entry to the current output, first cutting it when it is
// full and the entry starts a new user key.
func (r *runner) write(k base.InternalKey, value []byte) error {
	if !r.wroteKey {
		if r.w != nil && r.cutter.cut(r.w.EstimatedSize(), k.UserKey) {
			// The table ends at the last key written: its range
			// tombstones end just past it, the next table's start there,
			// so the two tables' key bounds do not overlap.
			if err := r.finishOutput(rangedel.Successor(r.lastWritten)); err != nil {
				return err
			}
		}
		r.wroteKey = true
		r.lastWritten = append(r.lastWritten[:0], k.UserKey...)
	}
	if r.w == nil {
		if err := r.newOutput(); err != nil {
			return err
		}
		r.cutter.begin(k.UserKey)
	}
	r.stats.EntriesOut++
	switch k.Kind() {
	case base.KindSetBlob:
		var err error
		if value, err = r.blobHandle(k, value); err != nil {
			return err
		}
	case base.KindSetBlobTTL: // the expiry (checked by expire), then the handle
		h, err := r.blobHandle(k, value[base.ExpiryLen:])
		if err != nil {
			return err
		}
		r.ttlBuf = append(append(r.ttlBuf[:0], value[:base.ExpiryLen]...), h...)
		value = r.ttlBuf
	}
	return r.w.Add(k, value)
}

// blobHandle returns the handle to write for entry k, whose value is enc,
// a handle: enc itself, or, for a value of a blob file in
// c.RelocateBlobs, the handle of its copy in the compaction's blob file.
// It counts the reference in the output's.
func (r *runner) blobHandle(k base.InternalKey, enc []byte) ([]byte, error) {
	h, ok := blob.DecodeHandle(enc)
	if !ok {
		return nil, fmt.Errorf("%w: compaction L%d→L%d: entry %v holds a malformed blob handle", base.ErrCorruption, r.c.Level, r.c.OutputLevel, k)
	}
	if r.c.RelocateBlobs[h.FileNum] {
		if r.bw == nil {
			out, err := r.env.CreateBlob()
			if err != nil {
				return nil, err
			}
			r.created = append(r.created, out)
			// Its records are copied as stored (AddStored): the
			// writer's own compression is never used.
			r.blobOut, r.bw = out, blob.NewWriter(out.W, compress.None)
		}
		stored, c, err := r.env.ReadBlobStored(r.blobBuf[:0], h)
		if err != nil {
			return nil, err
		}
		r.blobBuf = stored
		off, err := r.bw.AddStored(stored, c)
		if err != nil {
			return nil, err
		}
		h = blob.Handle{FileNum: r.blobOut.FileNum, Offset: off, Length: h.Length}
		enc = blob.AppendHandle(r.blobBuf[:0], h)
		r.stats.BlobValuesRelocated++
	}
	if r.refs == nil {
		r.refs = map[uint64]uint64{}
	}
	r.refs[h.FileNum] += h.Length
	return enc, nil
}

// blobRefs returns refs as a table's sorted references, and empties refs.
func blobRefs(refs map[uint64]uint64) []manifest.BlobRef {
	var out []manifest.BlobRef
	for num, n := range refs {
		if n > 0 {
			out = append(out, manifest.BlobRef{FileNum: num, Bytes: n})
		}
		delete(refs, num)
	}
	slices.SortFunc(out, func(a, b manifest.BlobRef) int { return cmp.Compare(a.FileNum, b.FileNum) })
	return out
}

// finishBlob completes the compaction's blob file, if it has one.
func (r *runner) finishBlob() error {
	if r.bw == nil {
		return nil
	}
	props, err := r.bw.Finish()
	if err != nil {
		return err
	}
	if r.blobOut.Finish != nil {
		if err := r.blobOut.Finish(); err != nil {
			return err
		}
	}
	r.stats.BlobFile = &manifest.BlobFileMetadata{FileNum: r.blobOut.FileNum, Size: props.Size, Values: props.Values, ValueBytes: props.ValueBytes}
	r.stats.BlobBytesWritten = props.Size
	return nil
}

// outputCutter decides where a compaction ends an output table: near the
// target size, at the start of a grandparent — a table of the level below
// the output level — where it can. An output that ends before a
// grandparent starts does not overlap it, so compacting that output down
// later leaves the grandparent out, instead of rewriting all of it for the
// sliver of its range the output covered. These are RocksDB's and Pebble's
// thresholds. In 10,000,000-key random fills at the peers runner's
// settings (four of each, alternating) the cut brought the bytes written
// to tables per WAL byte from 6.16–6.25 to 5.66–5.80, and the L4→L5
// compactions' overlap with L5 per byte of L4 from 0.9–1.7 to 0.6–1.3.
type outputCutter struct {
	target uint64
	// starts are the grandparents' smallest user keys, in key order;
	// next indexes the first one the merge has not passed, and passed
	// counts those the current output has passed.
	starts [][]byte
	next   int
	passed int
}

// newOutputCutter returns the cutter of a compaction whose outputs target
// target bytes and whose grandparents are grandparents (in key order).
func newOutputCutter(target uint64, grandparents []*manifest.FileMetadata) outputCutter {
	c := outputCutter{target: target}
	for _, g := range grandparents {
		c.starts = append(c.starts, g.Smallest.UserKey)
	}
	return c
}

// begin starts a new output at userKey, its first user key: the
// grandparents that start at or before it are behind it.
func (c *outputCutter) begin(userKey []byte) {
	c.skip(userKey)
	c.passed = 0
}

// skip moves past the grandparents that start at or before userKey and
// reports how many there were.
func (c *outputCutter) skip(userKey []byte) int {
	n := 0
	for c.next < len(c.starts) && bytes.Compare(c.starts[c.next], userKey) <= 0 {
		c.next++
		n++
	}
	return n
}

// cut reports whether the current output, of size bytes, ends before
// userKey, the next user key to write (greater than every one written);
// if so the next output begins there.
//
// Below half the target it never does, from twice the target always.
// Between, it cuts where userKey is a grandparent's start or past one:
// at the first grandparent the output passes, at a later one once the
// output holds 5% more of the target for each it passed before (up to
// 90%) — where grandparents are dense the output can wait for one nearer
// the target. From the last grandparent's start on it cuts at the target:
// what follows that start may be the compaction's last few keys, which
// a cut there would leave a table of their own.
func (c *outputCutter) cut(size uint64, userKey []byte) bool {
	n := c.skip(userKey)
	c.passed += n
	switch {
	case size < c.target/2:
		return false
	case size >= 2*c.target:
		return true
	case n == 0 || c.next == len(c.starts):
		return c.next == len(c.starts) && size >= c.target
	}
	pct := 50 + 5*uint64(min(c.passed-1, 8))
	return size*100 >= pct*c.target
}

// newOutput creates the next output table.
func (r *runner) newOutput() error {
	out, err := r.env.Create()
	if err != nil {
		return err
	}
	r.created = append(r.created, out)
	r.out, r.counter = out, countingWriter{w: out.W}
	r.wopts.Filter = r.c.OutputFilter(out.FileNum)
	r.wopts.PagedFilterBits = PagedFilterFor(r.wopts.Filter, r.pagedFilterBits)
	r.w, err = sstable.NewWriter(&r.counter, r.wopts)
	return err
}

// finishOutput completes the current output table, if any, and records its
// metadata. The table gets the kept range tombstones within [r.outLo, hi)
// (nil hi: all the rest), and the next table's start at hi.
func (r *runner) finishOutput(hi []byte) error {
	if r.w == nil {
		return nil
	}
	if rd := r.rangeDels.Truncate(r.outLo, hi); len(rd) > 0 {
		if err := r.w.SetRangeDels(rd); err != nil {
			return err
		}
		r.stats.RangeDelsOut += uint64(rd.Count())
	}
	r.outLo = hi
	props, err := r.w.Finish()
	r.w = nil
	if err != nil {
		return err
	}
	if r.out.Finish != nil {
		if err := r.out.Finish(); err != nil {
			return err
		}
	}
	meta := TableMetadata(r.out.FileNum, r.counter.n, &props)
	meta.BlobRefs = blobRefs(r.refs)
	if err := meta.Validate(); err != nil {
		return fmt.Errorf("compaction: output table: %w", err)
	}
	r.outputs = append(r.outputs, meta)
	r.stats.OutputTables++
	r.stats.BytesWritten += meta.Size
	return nil
}

// abort discards every output created.
func (r *runner) abort() {
	for _, out := range r.created {
		if out.Abort != nil {
			out.Abort()
		}
	}
	r.created, r.outputs, r.w = nil, nil, nil
}

// countingWriter counts the bytes written through it: the table's size,
// without asking the file system.
type countingWriter struct {
	w io.Writer
	n uint64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += uint64(n)
	return n, err
}

// TableMetadata returns the manifest's record of a table just written, as
// number num of size bytes, from its properties — flushes and compactions
// alike.
func TableMetadata(num, size uint64, props *sstable.Properties) *manifest.FileMetadata {
	m := &manifest.FileMetadata{
		FileNum:          num,
		Size:             size,
		Smallest:         props.Smallest,
		Largest:          props.Largest,
		SmallestSeqNum:   props.SmallestSeqNum,
		LargestSeqNum:    props.LargestSeqNum,
		FilterBitsPerKey: props.FilterBitsPer,
		FilterFamily:     uint8(props.FilterFamily),
		Entries:          props.Entries,
		Compression:      uint8(props.Compression),
	}
	switch props.FilterFamily {
	case sstable.BloomFamily:
		m.FilterParam = props.FilterBitsPer
	case sstable.FuseFamily, sstable.RibbonFamily:
		m.FilterParam = float64(props.FilterFPBits)
	}
	return m
}
