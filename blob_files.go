package bloomkv

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/blob"
	"github.com/bloomkv/bloomkv/internal/compaction"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/vfs"
)

// Blob files hold the values of at least Options.ValueSeparation.MinSize
// bytes (see ValueSeparation and package blob). A flush writes one per
// memtable that has such values, before its table; a compaction writes
// one when it relocates values (compaction.Run). Either syncs it before
// the manifest edit that adds it with the tables referencing it. The
// version holds the blob files its tables reference (package manifest);
// one that no version a reader holds lists is obsolete, closed and
// deleted (unrefVersionLocked) — a snapshot keeps its versions' handles
// in the tables, an iterator and a checkpoint in progress hold a version.
//
// INVARIANT: a blob file is deleted only once no live version lists it;
// every handle a read can meet is in a table of a version it holds, whose
// references name the file, so the version lists it.

// blobFileHandles bounds the blob files the DB keeps open besides the
// table cache's tables (see Options.MaxOpenFiles): a file beyond it is
// closed, the least recently read first, and opened again when read.
const blobFileHandles = 64

// blobFiles are the DB's open blob files, opened on a read's first need,
// closed when obsolete or when more than capacity are open.
type blobFiles struct {
	mu   sync.RWMutex
	open map[uint64]*blobFile
	// capacity is how many may be open; 0 means blobFileHandles (tests
	// set less). clock orders their uses.
	capacity int
	clock    atomic.Uint64
	// kept is set by DB.Close (keepBlobsOpenLocked): no file is evicted
	// from then on, so an iterator left open reads the files it opened then.
	kept bool
	// Counters for Metrics.
	bytesRead, reads, bytesWritten atomic.Uint64
}

// blobFile is an open blob file.
type blobFile struct {
	f vfs.File
	r *blob.Reader
	// refs counts the cache's reference, while open holds the file, and
	// each reader's; the last to drop one closes the file.
	refs atomic.Int32
	// lastUse is the clock at its latest use, for eviction.
	lastUse atomic.Uint64
}

// release drops a reference; the last closes the file.
func (f *blobFile) release() {
	if f.refs.Add(-1) == 0 {
		f.f.Close()
	}
}

// blobFile returns blob file num, opening it if need be, with a reference
// the caller releases. The caller holds a version listing it, so it is not
// obsolete.
//
// INVARIANT: a reference is taken only while open holds the file (under
// mu), and open drops the cache's reference only after removing it
// (under mu), so a file's references never come back from zero.
func (d *DB) blobFile(num uint64) (*blobFile, error) {
	b := &d.blobs
	b.mu.RLock()
	bf := b.open[num]
	if bf != nil {
		bf.refs.Add(1)
		bf.lastUse.Store(b.clock.Add(1))
	}
	b.mu.RUnlock()
	if bf != nil {
		return bf, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if bf := b.open[num]; bf != nil { // opened meanwhile
		bf.refs.Add(1)
		bf.lastUse.Store(b.clock.Add(1))
		return bf, nil
	}
	path := manifest.MakeFilepath(d.fs, d.dirname, manifest.FileTypeBlob, num)
	f, err := d.fs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bloomkv: blob file: %w", err)
	}
	info, err := f.Stat()
	var r *blob.Reader
	if err == nil {
		r, err = blob.Open(f, info.Size(), path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	if b.open == nil {
		b.open = map[uint64]*blobFile{}
	}
	capacity := b.capacity
	if capacity == 0 {
		capacity = blobFileHandles
	}
	for !b.kept && len(b.open) >= capacity {
		var victim uint64
		oldest := uint64(math.MaxUint64)
		for n, o := range b.open {
			if u := o.lastUse.Load(); u < oldest {
				victim, oldest = n, u
			}
		}
		o := b.open[victim]
		delete(b.open, victim)
		o.release()
	}
	bf = &blobFile{f: f, r: r}
	bf.refs.Store(2) // the cache's and the caller's
	bf.lastUse.Store(b.clock.Add(1))
	b.open[num] = bf
	return bf, nil
}

// keepBlobsOpenLocked opens, at Close, every blob file the versions that
// readers still hold list, and stops the evictions: an Iterator left open
// reads them, as DB.Close promises, whatever the cache's capacity, and an
// Open after Close may delete them under their open handles (the files a
// Close leaves open are those its readers need). A file that does not
// open now is opened again by the read that needs it, which reports what
// stops it. d.mu is held.
func (d *DB) keepBlobsOpenLocked() {
	d.blobs.mu.Lock()
	d.blobs.kept = true
	d.blobs.mu.Unlock()
	for v := range d.mu.versions {
		for _, b := range v.Blobs {
			if f, err := d.blobFile(b.FileNum); err == nil {
				f.release()
			}
		}
	}
}

// closeBlob closes blob file num if it is open, once its readers are
// done. Its version is gone: no new reader can ask for it.
func (d *DB) closeBlob(num uint64) {
	b := &d.blobs
	b.mu.Lock()
	f := b.open[num]
	delete(b.open, num)
	b.mu.Unlock()
	if f != nil {
		f.release()
	}
}

// closeBlobs closes every open blob file: a failed Open's.
func (d *DB) closeBlobs() {
	d.blobs.mu.Lock()
	defer d.blobs.mu.Unlock()
	for num, f := range d.blobs.open {
		delete(d.blobs.open, num)
		f.release()
	}
}

// readBlob appends to dst the value the encoded handle enc locates, read
// from its blob file and checked, and counts the read. rec, if not nil,
// gets the handle and the bytes read.
func (d *DB) readBlob(dst, enc []byte, rec *blobRead) ([]byte, error) {
	h, ok := blob.DecodeHandle(enc)
	if !ok {
		return dst, fmt.Errorf("%w: malformed blob handle %x", ErrCorruption, enc)
	}
	return d.readBlobAt(dst, h, rec)
}

// readBlobAt is readBlob of a decoded handle.
func (d *DB) readBlobAt(dst []byte, h blob.Handle, rec *blobRead) ([]byte, error) {
	bf, err := d.blobFile(h.FileNum)
	if err != nil {
		return dst, err
	}
	dst, err = bf.r.ReadValue(dst, h.Offset, h.Length)
	bf.release()
	n := blob.RecordLen(h)
	d.blobs.reads.Add(1)
	d.blobs.bytesRead.Add(n)
	if rec != nil {
		*rec = blobRead{handle: h, bytes: n, err: err}
	}
	return dst, err
}

// prefetchBlob asks the system to start reading the record the encoded
// handle enc locates (vfs.Prefetch); a handle that does not decode or a
// file that does not open is left to the read that follows to report.
func (d *DB) prefetchBlob(enc []byte) {
	h, ok := blob.DecodeHandle(enc)
	if !ok {
		return
	}
	if bf, err := d.blobFile(h.FileNum); err == nil {
		_ = vfs.Prefetch(bf.f, int64(h.Offset), int64(blob.RecordLen(h)))
		bf.release()
	}
}

// blobRead is what one blob read did, for Explain.
type blobRead struct {
	handle blob.Handle
	bytes  uint64
	err    error
}

// createOutput creates file num of type t (a table or blob file) for job,
// reports it with reason, and returns it as a compaction output: Finish
// syncs and closes it, Abort closes it if need be and removes it.
func (d *DB) createOutput(job int, t manifest.FileType, num uint64, reason string) (*compaction.Output, error) {
	path := manifest.MakeFilepath(d.fs, d.dirname, t, num)
	f, err := d.fs.Create(path)
	if err != nil {
		return nil, err
	}
	info := TableCreateInfo{JobID: job, Reason: reason, Path: path, FileNum: num}
	if t == manifest.FileTypeBlob {
		d.events.blobCreated(info)
	} else {
		d.events.tableCreated(info)
	}
	closed := false
	return &compaction.Output{
		FileNum: num,
		W:       f,
		Finish: func() error {
			closed = true
			if err := f.Sync(); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		},
		Abort: func() {
			if !closed {
				f.Close()
			}
			d.removeFile(job, t, num)
		},
	}, nil
}

// blobSink separates a flush's large values into a blob file, created and
// numbered (num) on the first.
type blobSink struct {
	d       *DB
	job     int
	reason  string
	minSize int
	num     uint64
	out     *compaction.Output
	w       *blob.Writer
	refs    uint64 // the value bytes written, the table's reference
	enc     []byte
}

// separate returns the entry to write to the table for (k, value): value
// itself, or, for a value of at least minSize, its handle in the blob file
// with the kind KindSetBlob.
func (s *blobSink) separate(k base.InternalKey, value []byte) (base.InternalKey, []byte, error) {
	if s.minSize < 0 || k.Kind() != base.KindSet || len(value) < s.minSize {
		return k, value, nil
	}
	if s.w == nil {
		s.num = s.d.allocFileNum()
		out, err := s.d.createOutput(s.job, manifest.FileTypeBlob, s.num, s.reason)
		if err != nil {
			return k, nil, err
		}
		s.out, s.w = out, blob.NewWriter(out.W)
	}
	off, err := s.w.Add(value)
	if err != nil {
		return k, nil, err
	}
	s.refs += uint64(len(value))
	s.enc = blob.AppendHandle(s.enc[:0], blob.Handle{FileNum: s.num, Offset: off, Length: uint64(len(value))})
	k.Trailer = base.MakeTrailer(k.SeqNum(), base.KindSetBlob)
	return k, s.enc, nil
}

// finish completes the blob file, if any, syncs and closes it, and returns
// its metadata, and the table's reference to it.
func (s *blobSink) finish() (*manifest.BlobFileMetadata, []manifest.BlobRef, error) {
	if s.w == nil {
		return nil, nil, nil
	}
	props, err := s.w.Finish()
	if err == nil {
		err = s.out.Finish()
	}
	if err != nil {
		return nil, nil, err
	}
	s.d.blobs.bytesWritten.Add(props.Size)
	meta := &manifest.BlobFileMetadata{FileNum: s.num, Size: props.Size, Values: props.Values, ValueBytes: props.ValueBytes}
	return meta, []manifest.BlobRef{{FileNum: s.num, Bytes: s.refs}}, nil
}

// abort removes the blob file, if one was created.
func (s *blobSink) abort() {
	if s.out != nil {
		s.out.Abort()
	}
}

// obsoleteBlobsLocked closes and, while the DB is open and writable,
// deletes the blob files of v, a version that lost its last reference,
// that no live version lists. d.mu is held.
func (d *DB) obsoleteBlobsLocked(v *version) {
	for _, b := range v.Blobs {
		live := false
		for lv := range d.mu.versions {
			if _, ok := lv.BlobFile(b.FileNum); ok {
				live = true
				break
			}
		}
		if live {
			continue
		}
		d.closeBlob(b.FileNum)
		if !d.mu.closed && !d.opts.ReadOnly {
			d.removeFile(0, manifest.FileTypeBlob, b.FileNum)
		}
	}
}

// LiveBlobFile describes a blob file of the DB's current version.
type LiveBlobFile struct {
	FileNum uint64
	// Size is the file's length; ValueBytes the bytes of the values it
	// holds, LiveBytes those the tables still reference (the rest are
	// dead, to be reclaimed at ValueSeparation.DeadShare).
	Size, ValueBytes, LiveBytes uint64
}

// DeadShare is the share of the file's value bytes no table references.
func (b LiveBlobFile) DeadShare() float64 {
	return manifest.BlobFile{BlobFileMetadata: &manifest.BlobFileMetadata{ValueBytes: b.ValueBytes}, LiveBytes: b.LiveBytes}.DeadShare()
}

// BlobFiles returns the blob files of the DB's current version, by file
// number. After Close it returns ErrClosed.
func (d *DB) BlobFiles() ([]LiveBlobFile, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.mu.closed {
		return nil, ErrClosed
	}
	var out []LiveBlobFile
	for _, b := range d.mu.current.Blobs {
		out = append(out, LiveBlobFile{FileNum: b.FileNum, Size: b.Size, ValueBytes: b.ValueBytes, LiveBytes: b.LiveBytes})
	}
	return out, nil
}
