package vfs

// WritebackStarter is a File that can ask the system to start writing a
// range of its written pages to the device, and return without waiting
// for those writes (sync_file_range(2) with SYNC_FILE_RANGE_WRITE on
// Linux). It makes nothing durable — only Sync does — but a file written
// whole and then synced, a table or a blob file, that starts each
// stretch's writeback as soon as the stretch is written has little left
// for its Sync to wait for, and does not hold its bytes dirty in the page
// cache until then: memory the system can reclaim at once, where dirty
// pages make whoever needs memory wait for their writes — in a memory
// cgroup, every process of the group.
//
// Like Prefetcher it is optional, and only advice: a File without it
// writes back when the system likes, and an error from it changes
// nothing. The OS file has it on Linux; Counting and Injecting pass it
// through to the files they wrap.
type WritebackStarter interface {
	StartWriteback(off, n int64) error
}

// StartWriteback calls f's StartWriteback, if it has one.
func StartWriteback(f File, off, n int64) error {
	if w, ok := f.(WritebackStarter); ok {
		return w.StartWriteback(off, n)
	}
	return nil
}

// WritebackFile is a File being written front to back that starts the
// writeback of every Chunk bytes written as soon as they are
// (StartWriteback), so that its Sync waits for the last chunk only. Writes
// must append: it counts the bytes Write was given, not where they went.
type WritebackFile struct {
	File
	// Chunk is how many written bytes start a writeback; 0 or less: none.
	Chunk int64
	// written is the bytes written; started where the writeback started
	// last ends.
	written, started int64
}

// Write writes p to the file and starts the writeback of the bytes
// written since the last one started, once they are Chunk or more.
func (f *WritebackFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.written += int64(n)
	if f.Chunk > 0 && f.written-f.started >= f.Chunk {
		_ = StartWriteback(f.File, f.started, f.written-f.started)
		f.started = f.written
	}
	return n, err
}
