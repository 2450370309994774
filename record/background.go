package record

import (
	"io"
	"sync"
)

// maxPendingBlocks bounds the full blocks a background Writer holds for
// its goroutine: 2 MiB. A writer that would pass it waits for the
// oldest to be written, so a destination slower than the writes slows
// the writes rather than grow the queue.
const maxPendingBlocks = 64

// blockQueue writes a Writer's full blocks to its destination in a
// goroutine of its own, in order (NewBackgroundWriter). The goroutine runs
// while blocks are pending and exits when none are, so a Writer left
// without Drain holds no goroutine once its blocks are written.
//
// A pusher that finds maxPendingBlocks pending and no block being written
// writes the oldest itself rather than wait: the goroutine is then waiting
// for a processor, which on a machine whose every processor is busy (the
// writer, a flush, compactions) it gets only once the writer blocks — and
// then it kept it for every pending block, up to 2 MiB of writes, while
// the writer waited to have it back.
//
// INVARIANT: at most one goroutine writes to the destination at a time: a
// block is written only with writing set, by the queue's goroutine or a
// pusher, always the oldest pending; the Writer's own writes (Flush, Sync)
// come only once Drain has seen running clear.
type blockQueue struct {
	w io.Writer

	mu   sync.Mutex
	cond sync.Cond // broadcast when a block is written and when the goroutine exits
	// pending are the blocks to write, oldest first; each is written from
	// its from offset (a Flush may have written the block's first bytes).
	pending []pendingBlock
	// free are written blocks, for the Writer's next.
	free    [][]byte
	running bool
	// writing is set while a block is being written (writeOldestLocked).
	writing bool
	// err is the first failed write's: every later push and Drain
	// returns it, and the blocks pending behind it are never written.
	err error
}

type pendingBlock struct {
	buf  []byte
	from int
}

func newBlockQueue(w io.Writer) *blockQueue {
	q := &blockQueue{w: w}
	q.cond.L = &q.mu
	return q
}

// push hands buf[from:] to the goroutine and returns an empty block to
// fill next, or the error of an earlier write (and buf, still the
// Writer's). While maxPendingBlocks are pending it waits for the block
// being written, or, if none is, writes the oldest itself.
func (q *blockQueue) push(buf []byte, from int) ([]byte, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.pending) >= maxPendingBlocks && q.err == nil {
		if q.writing {
			q.cond.Wait()
		} else {
			q.writeOldestLocked()
		}
	}
	if q.err != nil {
		return buf, q.err
	}
	q.pending = append(q.pending, pendingBlock{buf, from})
	if !q.running {
		q.running = true
		go q.run()
	}
	if n := len(q.free); n > 0 {
		next := q.free[n-1]
		q.free = q.free[:n-1]
		return next, nil
	}
	return make([]byte, BlockSize), nil
}

// run writes the pending blocks until none are left or one fails.
func (q *blockQueue) run() {
	q.mu.Lock()
	for len(q.pending) > 0 && q.err == nil {
		if q.writing { // a pusher writes the oldest
			q.cond.Wait()
			continue
		}
		q.writeOldestLocked()
	}
	q.pending = q.pending[:0]
	q.running = false
	q.cond.Broadcast()
	q.mu.Unlock()
}

// writeOldestLocked writes the oldest pending block, with q.mu released
// meanwhile and writing set, and records its error if it is the first.
// q.mu is held, no block is being written, and one is pending.
func (q *blockQueue) writeOldestLocked() {
	b := q.pending[0]
	q.writing = true
	q.mu.Unlock()
	n, err := q.w.Write(b.buf[b.from:])
	if err == nil && n < len(b.buf)-b.from {
		err = io.ErrShortWrite
	}
	q.mu.Lock()
	q.writing = false
	q.pending = append(q.pending[:0], q.pending[1:]...)
	q.free = append(q.free, b.buf)
	if q.err == nil {
		q.err = err
	}
	q.cond.Broadcast()
}

// drain waits until the goroutine has written every pending block, or
// stopped at a failed write, and returns that write's error.
func (q *blockQueue) drain() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.running {
		q.cond.Wait()
	}
	return q.err
}
