package bloomkv

import (
	"sync"
	"sync/atomic"

	"github.com/bloomkv/bloomkv/internal/manifest"
)

// obsoleteFile is a file a running DB proved obsolete, for its deleter:
// file num of type t, made obsolete by job (0 for none). A WAL entry with
// below set stands for every WAL numbered below num, found by listing the
// directory.
type obsoleteFile struct {
	job   int
	t     manifest.FileType
	num   uint64
	below bool
}

// deleter removes, in a goroutine of its own, the files a running DB
// proves obsolete while it holds d.mu or manifestMu: an unlink of a large
// file frees its extents before it returns, milliseconds under I/O load,
// which no writer should wait for, and the EventListener's TableDeleted,
// BlobFileDeleted and WALDeleted callbacks then run with no lock of the
// DB held. Files go in the order queued, one at a time.
//
// INVARIANT: a file is queued only once nothing can need it (the caller's
// proof, made under the lock that guards what could need it), so that its
// removal, at whatever later time, takes nothing from a reader; and file
// numbers are never reused, so that a queued number names the same file
// when it is removed.
//
// INVARIANT: once stop returns, the goroutine has removed every file
// queued before and removes no more; a file queued after stop stays on
// disk, for the next Open to find. Close and a failed Open stop it before
// they release the directory's LOCK, so that nothing of this DB deletes
// in a directory another DB may have opened since.
type deleter struct {
	// remove deletes one queued file, with no lock held.
	remove func(obsoleteFile)
	// inline makes add call remove itself, in the caller, under the
	// caller's locks: deleteInline when start was called.
	inline bool

	mu sync.Mutex
	// cond is broadcast when a file is queued, when a batch is done and
	// when stop is called.
	cond    sync.Cond
	queue   []obsoleteFile
	spare   []obsoleteFile // the last batch's slice, for the next queue
	busy    bool           // a batch is being removed
	left    int            // of which this many files are not yet removed
	stopped bool
	done    chan struct{} // closed when the goroutine returns
}

// deleteInline, set only by tests that replay a workload's file system
// operations in the same order run after run, makes the deleters started
// meanwhile remove each file as it is queued, in the caller: the order
// of a goroutine's removals among other goroutines' operations is not
// deterministic. A test that sets it must not run in parallel with others.
var deleteInline atomic.Bool

// start starts the goroutine, which calls remove for each file queued.
func (dl *deleter) start(remove func(obsoleteFile)) {
	dl.remove = remove
	dl.inline = deleteInline.Load()
	dl.cond.L = &dl.mu
	dl.done = make(chan struct{})
	go dl.run()
}

// run removes the files queued, a batch at a time, until stopped with
// nothing queued.
func (dl *deleter) run() {
	defer close(dl.done)
	dl.mu.Lock()
	defer dl.mu.Unlock()
	for {
		for len(dl.queue) == 0 && !dl.stopped {
			dl.cond.Wait()
		}
		if len(dl.queue) == 0 {
			return // stopped, and drained
		}
		batch := dl.queue
		dl.queue, dl.spare = dl.spare[:0], nil
		dl.busy, dl.left = true, len(batch)
		dl.mu.Unlock()
		for _, f := range batch {
			dl.remove(f)
			dl.mu.Lock()
			dl.left--
			dl.mu.Unlock()
		}
		clear(batch)
		dl.mu.Lock()
		dl.spare, dl.busy = batch[:0], false
		dl.cond.Broadcast()
	}
}

// add queues f, and reports whether it did: not once stopped, when f is
// left on disk for the next Open.
func (dl *deleter) add(f obsoleteFile) bool {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	if dl.stopped {
		return false
	}
	if dl.inline {
		dl.remove(f)
		return true
	}
	dl.queue = append(dl.queue, f)
	dl.cond.Broadcast()
	return true
}

// wait returns once every file queued before it was called is removed
// (and those queued meanwhile too). It must not be called from remove.
func (dl *deleter) wait() {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	for len(dl.queue) > 0 || dl.busy {
		dl.cond.Wait()
	}
}

// pending returns how many files are queued or being removed and not
// yet removed (an entry for every WAL below a number counts one).
func (dl *deleter) pending() int {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	return len(dl.queue) + dl.left
}

// stop removes what is queued, then stops the goroutine: later files are
// not queued. It must not be called from remove; a second call returns
// at once. Without start it only marks the deleter stopped.
func (dl *deleter) stop() {
	dl.mu.Lock()
	dl.stopped = true
	dl.cond.Broadcast()
	dl.mu.Unlock()
	if dl.done != nil {
		<-dl.done
	}
}
