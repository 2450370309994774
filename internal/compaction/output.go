package compaction

import (
	"fmt"
	"io"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/internal/rangedel"
	"github.com/bloomkv/bloomkv/sstable"
)

// write adds an entry to the current output, first cutting it when it is
// full and the entry starts a new user key.
func (r *runner) write(k base.InternalKey, value []byte) error {
	if !r.wroteKey {
		if r.w != nil && r.w.EstimatedSize() >= r.target {
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
	}
	r.stats.EntriesOut++
	return r.w.Add(k, value)
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
	}
	switch props.FilterFamily {
	case sstable.BloomFamily:
		m.FilterParam = props.FilterBitsPer
	case sstable.FuseFamily, sstable.RibbonFamily:
		m.FilterParam = float64(props.FilterFPBits)
	}
	return m
}
