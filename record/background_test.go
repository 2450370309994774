package record

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestBackgroundWriterSameLog checks that a background Writer writes the
// bytes a foreground one does, record for record and flush for flush, and
// that what it has written when Flush returns is the log so far.
func TestBackgroundWriterSameLog(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 0))
		var fg, bg bytes.Buffer
		fw, bw := NewWriter(&fg), NewBackgroundWriter(&bg)
		var wl written
		for range 300 {
			var n int
			switch rng.IntN(4) {
			case 0:
				n = rng.IntN(16)
			case 1:
				n = rng.IntN(3 * BlockSize) // across blocks
			default:
				n = rng.IntN(2000)
			}
			rec := randRecord(rng, n)
			fo, err1 := fw.WriteRecord(rec)
			bo, err2 := bw.WriteRecord(rec)
			if err1 != nil || err2 != nil || fo != bo {
				t.Fatalf("seed %d: WriteRecord: offsets %d, %d; errors %v, %v", seed, fo, bo, err1, err2)
			}
			wl.records, wl.offsets = append(wl.records, rec), append(wl.offsets, bo)
			if rng.IntN(20) == 0 {
				if err := fw.Flush(); err != nil {
					t.Fatal(err)
				}
				if err := bw.Flush(); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(fg.Bytes(), bg.Bytes()) || int64(bg.Len()) != bw.Size() {
					t.Fatalf("seed %d: after Flush the background log has %d bytes, the foreground %d, Size %d",
						seed, bg.Len(), fg.Len(), bw.Size())
				}
			}
		}
		if err := fw.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fg.Bytes(), bg.Bytes()) {
			t.Fatalf("seed %d: the logs differ", seed)
		}
		res := readLog(t, bytes.NewReader(bg.Bytes()))
		checkPrefix(t, res, wl, len(wl.records))
	}
}

// gatedFile's writes wait for its gate to open.
type gatedFile struct {
	gate chan struct{}
	bytes.Buffer
}

func (f *gatedFile) Write(p []byte) (int, error) {
	<-f.gate
	return f.Buffer.Write(p)
}

// TestBackgroundWriterBound checks that a background Writer holds at most
// maxPendingBlocks full blocks: with its destination stalled, the record
// that would hand it one more waits.
func TestBackgroundWriterBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &gatedFile{gate: make(chan struct{})}
		w := NewBackgroundWriter(f)
		const n = maxPendingBlocks + 4
		var written atomic.Int64
		done := make(chan error)
		rec := make([]byte, BlockSize-HeaderSize) // one record fills one block
		go func() {
			for range n {
				if _, err := w.WriteRecord(rec); err != nil {
					done <- err
					return
				}
				written.Add(1)
			}
			done <- w.Flush()
		}()
		synctest.Wait()
		// Record k hands block k−1 over: records 1 to maxPendingBlocks
		// hand over maxPendingBlocks blocks, the goroutine writing the
		// first of them, and the next record waits.
		if got := written.Load(); got != maxPendingBlocks+1 {
			t.Fatalf("with the destination stalled %d records were written, want %d", got, maxPendingBlocks+1)
		}
		close(f.gate)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		res := readLog(t, bytes.NewReader(f.Bytes()))
		if len(res.records) != n || res.err == nil || res.torn {
			t.Fatalf("read %d records (%v, torn %v), want %d", len(res.records), res.err, res.torn, n)
		}
	})
}

// TestBackgroundWriterFailsTheNextBlock checks that a failed write of a
// block in the background is the error of a later WriteRecord that fills
// a block, with no Flush: the writer learns of it within the queue's bound.
func TestBackgroundWriterFailsTheNextBlock(t *testing.T) {
	errDisk := errors.New("no space left on device")
	f := &failingFile{limit: 3 * BlockSize, writeErr: errDisk}
	w := NewBackgroundWriter(f)
	rec := make([]byte, 1000)
	var err error
	records := 0
	for ; err == nil; records++ {
		// The 4th block's write fails; the writer hears of it at the
		// latest when it finds the queue full behind it.
		if records > (4+maxPendingBlocks+1)*BlockSize/len(rec) {
			t.Fatalf("%d records written after the destination failed, no error", records)
		}
		_, err = w.WriteRecord(rec)
	}
	if !errors.Is(err, errDisk) {
		t.Fatalf("WriteRecord = %v, want %v", err, errDisk)
	}
	if err2 := w.Drain(); err2 != err {
		t.Fatalf("Drain = %v, want the sticky %v", err2, err)
	}
	res := readLog(t, bytes.NewReader(f.Bytes()))
	if len(res.records) == 0 || res.err == nil {
		t.Fatalf("the failed log reads %d records, %v", len(res.records), res.err)
	}
}

// TestBlockQueueWritesForAStarvedGoroutine: a push that finds the queue
// full while its goroutine has not run (started, but waiting for a
// processor) writes the oldest block itself, in order, rather than wait
// (TestBackgroundWriterBound has a push wait for a block being written).
// The oracle is the destination's bytes: exactly the oldest block's.
func TestBlockQueueWritesForAStarvedGoroutine(t *testing.T) {
	var dst bytes.Buffer
	q := newBlockQueue(&dst)
	q.mu.Lock()
	for i := range maxPendingBlocks {
		q.pending = append(q.pending, pendingBlock{bytes.Repeat([]byte{byte(i)}, BlockSize), 0})
	}
	q.running = true // as if its goroutine were started and not yet run
	q.mu.Unlock()

	type pushed struct {
		next []byte
		err  error
	}
	done := make(chan pushed, 1)
	go func() {
		next, err := q.push(bytes.Repeat([]byte{0xff}, BlockSize), 0)
		done <- pushed{next, err}
	}()
	var next []byte
	select {
	case p := <-done:
		if p.err != nil {
			t.Fatal(p.err)
		}
		next = p.next
	case <-time.After(10 * time.Second): // a memory write's time, many times over
		t.Fatal("push waited for a goroutine that never ran")
	}
	if len(next) != BlockSize {
		t.Errorf("push returned a block of %d bytes, want %d", len(next), BlockSize)
	}
	if want := bytes.Repeat([]byte{0}, BlockSize); !bytes.Equal(dst.Bytes(), want) {
		t.Errorf("destination holds %d bytes, want the oldest block's %d", dst.Len(), BlockSize)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) != maxPendingBlocks || q.pending[0].buf[0] != 1 || q.pending[maxPendingBlocks-1].buf[0] != 0xff {
		t.Errorf("pending: %d blocks, first %d, last %d; want %d, 1, 0xff",
			len(q.pending), q.pending[0].buf[0], q.pending[len(q.pending)-1].buf[0], maxPendingBlocks)
	}
}
