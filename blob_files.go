package bloomkv

import (
	"fmt"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/blob"
	"github.com/bloomkv/bloomkv/internal/compaction"
	"github.com/bloomkv/bloomkv/internal/compress"
	"github.com/bloomkv/bloomkv/internal/manifest"
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

// blobFiles are the DB's blob files being read. Each one's Reader is made
// on its first read (or by Open, which checks every file's footer) and
// kept until the file is obsolete; its file handle is the table cache's
// (tableFile), so that blob files and tables share Options.MaxOpenFiles,
// the least recently read of either closed first and reopened when read.
type blobFiles struct {
	// open maps a file number to its blobFile. A read loads it with no
	// lock; mu serializes the writers, which copy it.
	open atomic.Pointer[map[uint64]*blobFile]
	mu   sync.Mutex
	// Counters for Metrics.
	bytesRead, reads, bytesWritten atomic.Uint64
}

// blobFile is a blob file being read, number num.
type blobFile struct {
	num uint64
	f   *tableFile
	r   *blob.Reader
}

// blobFile returns blob file num, making its Reader if it has none. The
// caller holds a version listing it, so it is not obsolete.
//
// INVARIANT: a blobFile leaves open only when closed (closeBlob), once no
// version lists it, so no read can be using it.
func (d *DB) blobFile(num uint64) (*blobFile, error) {
	b := &d.blobs
	if bf := b.current()[num]; bf != nil {
		return bf, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if bf := b.current()[num]; bf != nil { // made meanwhile
		return bf, nil
	}
	path := manifest.MakeFilepath(d.fs, d.dirname, manifest.FileTypeBlob, num)
	f := d.tableCache.newFile(path)
	info, err := d.fs.Stat(path)
	var r *blob.Reader
	if err != nil {
		err = f.openError(err)
	} else {
		r, err = blob.Open(f, info.Size(), path)
	}
	if err != nil {
		f.close()
		return nil, fmt.Errorf("bloomkv: blob file: %w", err)
	}
	bf := &blobFile{num: num, f: f, r: r}
	b.store(num, bf)
	return bf, nil
}

// current is the map of the open blob files, nil if none: not to be
// modified.
func (b *blobFiles) current() map[uint64]*blobFile {
	if m := b.open.Load(); m != nil {
		return *m
	}
	return nil
}

// store publishes a copy of the map with num mapped to bf, or removed if
// bf is nil. b.mu is held.
func (b *blobFiles) store(num uint64, bf *blobFile) {
	m := maps.Clone(b.current())
	if m == nil {
		m = map[uint64]*blobFile{}
	}
	if bf != nil {
		m[num] = bf
	} else {
		delete(m, num)
	}
	b.open.Store(&m)
}

// keepBlobsOpenLocked opens, at Close, every blob file the versions that
// readers still hold list, and keeps each open outside the table cache
// (tableFile.keepOpen): an Iterator left open reads them, as DB.Close
// promises, whatever the cache's capacity, and an Open after Close may
// delete them under their open handles. A file that does not open now is
// opened again by the read that needs it, which reports what stops it.
// d.mu is held.
func (d *DB) keepBlobsOpenLocked() {
	for v := range d.mu.versions {
		for _, b := range v.Blobs {
			if bf, err := d.blobFile(b.FileNum); err == nil {
				_ = bf.f.keepOpen()
			}
		}
	}
}

// closeBlob closes blob file num if it is open. Its version is gone: no
// reader can ask for it.
func (d *DB) closeBlob(num uint64) {
	b := &d.blobs
	b.mu.Lock()
	bf := b.current()[num]
	if bf != nil {
		b.store(num, nil)
	}
	b.mu.Unlock()
	if bf != nil {
		bf.f.close()
	}
}

// closeBlobs closes every open blob file: a failed Open's.
func (d *DB) closeBlobs() {
	b := &d.blobs
	b.mu.Lock()
	m := b.current()
	b.open.Store(nil)
	b.mu.Unlock()
	for _, bf := range m {
		bf.f.close()
	}
}

// readBlob appends to dst the value the encoded handle enc locates, read
// from its blob file and checked, and counts the read. rec, if not nil,
// gets the handle and the bytes read.
func (d *DB) readBlob(dst, enc []byte, rec *blobRead) ([]byte, error) {
	h, err := decodeBlobHandle(enc)
	if err != nil {
		return dst, err
	}
	return d.readBlobAt(dst, h, rec)
}

// decodeBlobHandle decodes the handle of a table's entry of kind
// KindSetBlob.
func decodeBlobHandle(enc []byte) (blob.Handle, error) {
	h, ok := blob.DecodeHandle(enc)
	if !ok {
		return h, fmt.Errorf("%w: malformed blob handle %x", ErrCorruption, enc)
	}
	return h, nil
}

// readBlobAt is readBlob of a decoded handle.
func (d *DB) readBlobAt(dst []byte, h blob.Handle, rec *blobRead) ([]byte, error) {
	bf, err := d.blobFile(h.FileNum)
	if err != nil {
		return dst, err
	}
	dst, err = bf.r.ReadValue(dst, h.Offset, h.Length)
	n := bf.r.RecordLen(h.Length)
	d.blobs.reads.Add(1)
	d.blobs.bytesRead.Add(n)
	if rec != nil {
		*rec = blobRead{handle: h, bytes: n, err: err}
	}
	return dst, err
}

// readBlobAhead is readBlob for a forward scan: s gives the value's blob
// file and its read-ahead, whose buffers the value is returned in, valid
// until that read-ahead's next read (blob.Reader.ReadValueAhead).
func (d *DB) readBlobAhead(enc []byte, s *blobReadaheadSet) ([]byte, error) {
	h, err := decodeBlobHandle(enc)
	if err != nil {
		return nil, err
	}
	bf, ra, err := s.get(d, h.FileNum)
	if err != nil {
		return nil, err
	}
	v, err := bf.r.ReadValueAhead(h.Offset, h.Length, ra)
	d.blobs.reads.Add(1)
	d.blobs.bytesRead.Add(bf.r.RecordLen(h.Length))
	return v, err
}

// readBlobStored appends to dst the value h locates as its blob file
// stores it, checked but not decompressed, and its compression, for a
// relocation to copy (blob.Writer.AddStored); it counts the read.
func (d *DB) readBlobStored(dst []byte, h blob.Handle) ([]byte, compress.Codec, error) {
	bf, err := d.blobFile(h.FileNum)
	if err != nil {
		return dst, 0, err
	}
	dst, c, err := bf.r.ReadStored(dst, h.Offset, h.Length)
	d.blobs.reads.Add(1)
	d.blobs.bytesRead.Add(bf.r.RecordLen(h.Length))
	return dst, c, err
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
		_ = bf.f.Prefetch(int64(h.Offset), int64(bf.r.RecordLen(h.Length)))
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
// syncs and closes it, Abort closes it if need be and hands it to the
// deleter.
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
			d.deleteObsolete(job, t, num)
		},
	}, nil
}

// blobCompression is the compression of the blob files a DB writes: c,
// its Options.Compression, that of the tables below the base level, where
// the values would otherwise end up.
func blobCompression(c Compression) compress.Codec {
	switch c {
	case SnappyCompression:
		return compress.Snappy
	case ZstdCompression:
		return compress.Zstd
	}
	return compress.None
}

// blobSink separates a flush's large values into a blob file, created and
// numbered (num) on the first, each compressed with compression where
// that saves an eighth of it.
type blobSink struct {
	d           *DB
	job         int
	reason      string
	minSize     int
	compression compress.Codec
	num         uint64
	out         *compaction.Output
	w           *blob.Writer
	refs        uint64 // the stored value bytes written, the table's reference
	enc         []byte
}

// separate returns the entry to write to the table for (k, value): value
// itself, or, for a value of at least minSize, its handle in the blob file
// with the kind KindSetBlob — KindSetBlobTTL, the handle after the
// expiry, for a KindSetTTL, whose value's size is that after its expiry.
func (s *blobSink) separate(k base.InternalKey, value []byte) (base.InternalKey, []byte, error) {
	entry, expiry := value, []byte(nil)
	if k.Kind() == base.KindSetTTL {
		expiry, value = value[:base.ExpiryLen], value[base.ExpiryLen:]
	}
	if s.minSize < 0 || k.Kind().WithoutExpiry() != base.KindSet || len(value) < s.minSize {
		return k, entry, nil
	}
	if s.w == nil {
		s.num = s.d.allocFileNum()
		out, err := s.d.createOutput(s.job, manifest.FileTypeBlob, s.num, s.reason)
		if err != nil {
			return k, nil, err
		}
		s.out, s.w = out, blob.NewWriter(out.W, s.compression)
	}
	off, n, err := s.w.Add(value)
	if err != nil {
		return k, nil, err
	}
	s.refs += n
	s.enc = blob.AppendHandle(append(s.enc[:0], expiry...), blob.Handle{FileNum: s.num, Offset: off, Length: n})
	kind := base.KindSetBlob
	if expiry != nil {
		kind = base.KindSetBlobTTL
	}
	k.Trailer = base.MakeTrailer(k.SeqNum(), kind)
	return k, s.enc, nil
}

// finish completes the blob file, if any, and returns its metadata and
// the table's reference to it, and wait, which returns once the file is
// synced and closed, with the error of the completion, the sync or the
// close. The sync runs while the caller finishes and syncs the table: a
// flush waits for one sync, not two in turn. The caller calls wait before
// anything else of the sink, and before it uses the metadata.
func (s *blobSink) finish() (meta *manifest.BlobFileMetadata, refs []manifest.BlobRef, wait func() error) {
	if s.w == nil {
		return nil, nil, func() error { return nil }
	}
	props, err := s.w.Finish()
	if err != nil {
		return nil, nil, func() error { return err }
	}
	done := make(chan error, 1)
	go func() { done <- s.out.Finish() }()
	meta = &manifest.BlobFileMetadata{FileNum: s.num, Size: props.Size, Values: props.Values, ValueBytes: props.ValueBytes}
	return meta, []manifest.BlobRef{{FileNum: s.num, Bytes: s.refs}}, func() error {
		if err := <-done; err != nil {
			return err
		}
		s.d.blobs.bytesWritten.Add(props.Size)
		return nil
	}
}

// abort removes the blob file, if one was created.
func (s *blobSink) abort() {
	if s.out != nil {
		s.out.Abort()
	}
}

// obsoleteBlobsLocked closes and, while the DB is open and writable,
// hands to the deleter the blob files of v, a version that lost its last reference,
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
			d.deleteObsolete(0, manifest.FileTypeBlob, b.FileNum)
		}
	}
}

// LiveBlobFile describes a blob file of the DB's current version.
type LiveBlobFile struct {
	FileNum uint64
	// Size is the file's length; ValueBytes the bytes of the values it
	// holds as stored (compressed or not: see ValueSeparation), LiveBytes
	// those the tables still reference (the rest are dead, to be reclaimed
	// at ValueSeparation.DeadShare).
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
