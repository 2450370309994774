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
	r.out, r.counter = out, &countingWriter{w: out.W}
	r.wopts.Filter = r.c.OutputFilter(out.FileNum)
	r.w, err = sstable.NewWriter(r.counter, r.wopts)
	return err
}

// finishOutput ends the current output table, if any: it gives the
// table the kept range tombstones within [r.outLo, hi) (nil hi: all the
// rest), and the next table's start at hi, and hands the table's last
// steps to finishTable, on a goroutine of its own, while the merge goes on
// into the next table. Those steps — building the filter, writing the
// index and footer, syncing the file — are a third of a compaction's CPU
// under Ribbon filters, and all of its waits on the device: alone they
// would leave a core idle while the last compactions of a fill run by
// themselves. At most one table finishes at a time (finishOutput waits for
// the one before), so outputs stay in key order and the memory of a build
// beyond the one being written is bounded by one table's.
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
	w, out, counter := r.w, r.out, r.counter
	r.w = nil
	if err := r.waitFinished(); err != nil {
		return err
	}
	f := &finishing{done: make(chan struct{})}
	r.finishing = f
	go func() {
		defer close(f.done)
		f.meta, f.err = finishTable(w, out, counter)
	}()
	return nil
}

// finishing is an output table whose finishTable runs in the background;
// meta and err are set once done is closed.
type finishing struct {
	done chan struct{}
	meta *manifest.FileMetadata
	err  error
}

// waitFinished waits for the output table finishing in the background,
// if any, and records its metadata.
func (r *runner) waitFinished() error {
	f := r.finishing
	if f == nil {
		return nil
	}
	<-f.done
	r.finishing = nil
	if f.err != nil {
		return f.err
	}
	r.outputs = append(r.outputs, f.meta)
	r.stats.OutputTables++
	r.stats.BytesWritten += f.meta.Size
	return nil
}

// finishTable completes the table w writes to out through counter — its
// last data block, filter, index, properties and footer — makes it durable
// (out.Finish) and returns its metadata.
func finishTable(w *sstable.Writer, out *Output, counter *countingWriter) (*manifest.FileMetadata, error) {
	props, err := w.Finish()
	if err != nil {
		return nil, err
	}
	if out.Finish != nil {
		if err := out.Finish(); err != nil {
			return nil, err
		}
	}
	meta := TableMetadata(out.FileNum, counter.n, &props)
	if err := meta.Validate(); err != nil {
		return nil, fmt.Errorf("compaction: output table: %w", err)
	}
	return meta, nil
}

// abort discards every output created, once the one finishing in the
// background, if any, is done with its file.
func (r *runner) abort() {
	if r.finishing != nil {
		<-r.finishing.done
		r.finishing = nil
	}
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
