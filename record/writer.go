package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Syncer is implemented by destinations that can make written data durable,
// such as *os.File and the files of bloomkv's vfs.
type Syncer interface {
	Sync() error
}

// ErrNoSync is returned by Writer.Sync when the destination has no Sync
// method: the data was flushed but nothing can vouch for its durability.
// It wraps errors.ErrUnsupported.
var ErrNoSync = fmt.Errorf("wal: destination cannot sync: %w", errors.ErrUnsupported)

// Writer appends records to a log. It buffers one block: records reach the
// destination when a block fills, and on Flush and Sync. A Writer is not
// safe for concurrent use; the DB's commit pipeline serializes writes.
//
// A Writer always starts a new log at offset 0.
//
// A Writer from NewBackgroundWriter writes its full blocks in a goroutine
// of its own, so that the record that fills a block does not wait for the
// destination's write while fewer than 2 MiB of blocks are pending (see
// NewBackgroundWriter): Flush and Sync wait for those writes first, and a
// failed one is the error of the next WriteRecord that fills a block, or
// of the next Flush, Sync or Drain.
//
// Once a write to the destination or a sync fails, the Writer stops: every
// later call returns the same error. After a failed write the log may end in
// part of a record, and a record appended after it would put intact data
// behind damage, which the Reader must report as corruption rather than a
// torn tail. After a failed sync, which pages reached the disk is unknown.
type Writer struct {
	w    io.Writer
	sync Syncer // nil when w cannot sync

	// buf holds the current block: buf[i] is at file offset blockOff+i.
	// buf[:flushed] has been written to w, buf[flushed:pos] has not.
	// INVARIANT: 0 <= flushed <= pos <= BlockSize, and blockOff is a
	// multiple of BlockSize.
	buf      []byte
	blockOff int64
	flushed  int
	pos      int

	// bg, if set, writes the full blocks (NewBackgroundWriter).
	bg *blockQueue

	err error
}

// NewWriter returns a Writer that appends a new log to w. If w has a
// Sync() error method (see Syncer), Writer.Sync calls it; the check is a
// type assertion on w, so a wrapper around a file must pass Sync through
// for Writer.Sync to be durable.
func NewWriter(w io.Writer) *Writer {
	s, _ := w.(Syncer)
	return &Writer{w: w, sync: s, buf: make([]byte, BlockSize)}
}

// NewBackgroundWriter is NewWriter, but the Writer hands each full block to
// a goroutine that writes it, holding at most 2 MiB of them (a record
// that would hand it more waits for the block being written, or writes
// the oldest itself if the goroutine has not yet run): for a log whose
// writers should not wait for a write(2) that, with the page cache full,
// may reclaim memory for milliseconds first. It pays where a processor
// is free for the goroutine; where the writers keep every processor
// busy, the goroutine runs only when a writer blocks, and NewWriter's
// tail is the shorter. The log's bytes are the same. Call Drain, Flush
// or Sync before closing w.
func NewBackgroundWriter(w io.Writer) *Writer {
	lw := NewWriter(w)
	lw.bg = newBlockQueue(w)
	return lw
}

// WriteRecord appends p as one record and returns the record's offset in
// the log. The record is buffered; Flush or Sync hands it to the
// destination. p may be empty, and is not retained.
func (w *Writer) WriteRecord(p []byte) (offset int64, err error) {
	if w.err != nil {
		return 0, w.err
	}
	first := true
	for {
		if BlockSize-w.pos < HeaderSize {
			// The buffer is reused, so the trailer must be zeroed explicitly.
			clear(w.buf[w.pos:])
			w.pos = BlockSize
			if err := w.endBlock(); err != nil {
				return 0, err
			}
			w.blockOff += BlockSize
			w.flushed, w.pos = 0, 0
		}
		// INVARIANT: a header fits in what is left of the block, so the
		// chunk, its payload cut to the rest, ends within the block.
		if first {
			offset = w.blockOff + int64(w.pos)
		}
		n := min(len(p), BlockSize-w.pos-HeaderSize)
		last := n == len(p)
		var t byte
		switch {
		case first && last:
			t = fullChunk
		case first:
			t = firstChunk
		case last:
			t = lastChunk
		default:
			t = middleChunk
		}
		c := w.buf[w.pos : w.pos+HeaderSize+n]
		binary.LittleEndian.PutUint16(c[4:6], uint16(n))
		c[6] = t
		copy(c[HeaderSize:], p[:n])
		binary.LittleEndian.PutUint32(c[0:4], chunkCRC(c[6:]))
		w.pos += len(c)
		p = p[n:]
		if last {
			return offset, nil
		}
		first = false
	}
}

// endBlock hands the full block to the destination, or to the background
// goroutine with a new block to fill.
func (w *Writer) endBlock() error {
	if w.bg == nil {
		return w.flush()
	}
	next, err := w.bg.push(w.buf, w.flushed)
	if err != nil {
		return w.fail(err)
	}
	w.buf = next
	return nil
}

// Flush writes buffered records to the destination.
func (w *Writer) Flush() error {
	if err := w.Drain(); err != nil {
		return err
	}
	return w.flush()
}

// Drain waits until the full blocks handed to the background goroutine
// are written (NewBackgroundWriter; without one it does nothing), and
// returns the Writer's error, if any: a Writer's destination may be closed
// once Drain returns.
func (w *Writer) Drain() error {
	if w.err != nil {
		return w.err
	}
	if w.bg != nil {
		if err := w.bg.drain(); err != nil {
			return w.fail(err)
		}
	}
	return nil
}

// fail makes err, a failed write's, the Writer's error.
func (w *Writer) fail(err error) error {
	w.err = fmt.Errorf("wal: write failed, log closed to writes: %w", err)
	return w.err
}

func (w *Writer) flush() error {
	if w.flushed == w.pos {
		return nil
	}
	n, err := w.w.Write(w.buf[w.flushed:w.pos])
	if err == nil && n < w.pos-w.flushed {
		err = io.ErrShortWrite
	}
	if err != nil {
		return w.fail(err)
	}
	w.flushed = w.pos
	return nil
}

// Sync flushes buffered records and then syncs the destination, so that
// every record written so far survives a crash. If the destination has no
// Sync method, Sync flushes and returns ErrNoSync; that error is not sticky,
// since nothing was lost.
func (w *Writer) Sync() error {
	if err := w.Flush(); err != nil {
		return err
	}
	if w.sync == nil {
		return ErrNoSync
	}
	if err := w.sync.Sync(); err != nil {
		w.err = fmt.Errorf("wal: sync failed, log closed to writes: %w", err)
		return w.err
	}
	return nil
}

// Size returns the length of the log: every byte written, including the
// ones still buffered. It is the offset the next record would start at,
// unless the block's trailer comes first.
func (w *Writer) Size() int64 {
	return w.blockOff + int64(w.pos)
}
