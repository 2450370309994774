package raftstore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"strconv"
	"strings"

	"github.com/hashicorp/raft"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/vfs"
)

// snapshotMagic opens every snapshot stream; its last byte is the version.
const snapshotMagic = "bkvfsm\x00\x01"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// restoreBatchSize is the size at which Restore applies a batch of the
// stream's pairs.
const restoreBatchSize = 4 << 20

// fsmSnapshot is the FSM's raft.FSMSnapshot: a checkpoint of one state, in
// a directory of its own, which Persist opens read-only and Release
// removes.
type fsmSnapshot struct {
	path    string
	fs      vfs.FS
	opts    *bloomkv.Options // the state DB's, or nil
	applied uint64
	once    bool
}

// Persist writes the state to sink in the stream format of the package
// documentation and closes it, or cancels it on an error.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	err := s.persist(sink)
	if err != nil {
		return errors.Join(err, sink.Cancel())
	}
	return sink.Close()
}

// persist opens the checkpoint, checks that it is the state at the
// applied index the snapshot reports, and streams it.
func (s *fsmSnapshot) persist(sink io.Writer) error {
	var o bloomkv.Options
	if s.opts != nil {
		o = *s.opts
	}
	o.ReadOnly, o.ErrorIfExists, o.ErrorIfNotExists = true, false, false
	o.FS = s.fs
	db, err := bloomkv.Open(s.path, &o)
	if err != nil {
		return fmt.Errorf("raftstore: snapshot: opening its checkpoint: %w", err)
	}
	applied, err := readApplied(db)
	if err == nil && applied != s.applied {
		err = fmt.Errorf("raftstore: snapshot: checkpoint %s holds applied index %d, the snapshot reports %d", s.path, applied, s.applied)
	}
	if err == nil {
		err = s.write(sink, db)
	}
	return errors.Join(err, db.Close())
}

// write streams the state keys of db, the checkpoint, to sink.
func (s *fsmSnapshot) write(sink io.Writer, db *bloomkv.DB) error {
	crc := crc32.New(castagnoli)
	w := bufio.NewWriterSize(io.MultiWriter(sink, crc), 256<<10)
	var buf []byte
	buf = append(buf, snapshotMagic...)
	buf = binary.AppendUvarint(buf, s.applied)
	if _, err := w.Write(buf); err != nil {
		return err
	}
	it, err := db.NewIter(&bloomkv.IterOptions{LowerBound: statePrefix, UpperBound: stateUpper})
	if err != nil {
		return err
	}
	var count uint64
	for k, v := range it.All() {
		k = k[len(statePrefix):]
		buf = binary.AppendUvarint(buf[:0], uint64(len(k))+1)
		buf = append(buf, k...)
		buf = binary.AppendUvarint(buf, uint64(len(v)))
		if _, err := w.Write(buf); err != nil {
			_ = it.Close()
			return err
		}
		if _, err := w.Write(v); err != nil {
			_ = it.Close()
			return err
		}
		count++
	}
	if err := it.Close(); err != nil {
		return err
	}
	buf = append(buf[:0], 0)
	buf = binary.AppendUvarint(buf, count)
	if _, err := w.Write(buf); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	_, err = sink.Write(binary.BigEndian.AppendUint32(nil, crc.Sum32()))
	return err
}

// Release removes the checkpoint, once ownSnapshotDir proves it still
// holds nothing but a checkpoint's files. If that fails, or a crash comes
// first, the next OpenFSM removes it (or, if the directory now holds
// something else, refuses the FSM's directory untouched). raft's
// FSMSnapshot gives Release no error to return.
func (s *fsmSnapshot) Release() {
	if s.once {
		return
	}
	s.once = true
	if ownSnapshotDir(s.fs, s.path) == nil {
		_ = removeAll(s.fs, s.path)
	}
}

// snapshotName is the name of a Snapshot's checkpoint directory, n the
// FSM's count of snapshots since it opened (OpenFSM removes those a crash
// left, so the names start over).
func snapshotName(n int) string { return fmt.Sprintf("%s%06d", snapshotDirPrefix, n) }

// isSnapshotName reports whether name is one snapshotName makes.
func isSnapshotName(name string) bool {
	digits, ok := strings.CutPrefix(name, snapshotDirPrefix)
	n, err := strconv.Atoi(digits)
	return ok && err == nil && n > 0 && snapshotName(n) == name
}

// ownSnapshotDir returns nil if path, named as a snapshot's checkpoint
// directory, is provably one that Snapshot made (see ownDBDir): what
// DB.Checkpoint writes, or a crash left of it, which the FSM may remove.
// Otherwise the directory must stay untouched: the FSM never removes what
// it cannot prove is its own.
func ownSnapshotDir(fsys vfs.FS, path string) error {
	return ownDBDir(fsys, path, "a snapshot's checkpoint")
}

// crcReader reads a stream while summing the bytes it returns.
type crcReader struct {
	r   *bufio.Reader
	crc hash.Hash32
	one [1]byte
}

func (c *crcReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.one[0] = b
		c.crc.Write(c.one[:])
	}
	return b, err
}

func (c *crcReader) full(p []byte) error {
	_, err := io.ReadFull(c.r, p)
	c.crc.Write(p)
	return err
}

// failedReader remembers the first error of its reader other than io.EOF:
// a stream that could not be read, which is no proof that it is corrupt.
type failedReader struct {
	r   io.Reader
	err error
}

func (f *failedReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF && f.err == nil {
		f.err = err
	}
	return n, err
}

// readSnapshot loads a snapshot stream into db, an empty state DB, and
// returns the applied index it carries. The pairs go in unsynced batches;
// the last batch, with the applied index, is synced, which makes them all
// durable. It returns an error wrapping bloomkv.ErrCorruption, with the byte
// offset, for a stream that is not one Persist wrote; one that wraps the
// reader's error, with the offset, when r fails.
func readSnapshot(r io.Reader, db *bloomkv.DB) (uint64, error) {
	src := &failedReader{r: r}
	c := &crcReader{r: bufio.NewReaderSize(src, 256<<10), crc: crc32.New(castagnoli)}
	var offset int64
	bad := func(what string, err error) error {
		if src.err != nil {
			return fmt.Errorf("raftstore: snapshot stream: read failed near byte %d (%s): %w", offset, what, src.err)
		}
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return fmt.Errorf("raftstore: snapshot stream: %s near byte %d: %w (%w)", what, offset, bloomkv.ErrCorruption, err)
		}
		return fmt.Errorf("raftstore: snapshot stream: %s near byte %d: %w", what, offset, bloomkv.ErrCorruption)
	}
	uvarint := func() (uint64, error) {
		x, err := binary.ReadUvarint(c)
		offset += int64(binary.PutUvarint(make([]byte, binary.MaxVarintLen64), x))
		return x, err
	}
	magic := make([]byte, len(snapshotMagic))
	if err := c.full(magic); err != nil || string(magic) != snapshotMagic {
		return 0, bad("not a bloomkv FSM snapshot (magic)", err)
	}
	offset += int64(len(magic))
	applied, err := uvarint()
	if err != nil {
		return 0, bad("applied index", err)
	}
	b := bloomkv.NewBatch()
	var count uint64
	var kv []byte
	for {
		klen, err := uvarint()
		if err != nil {
			return 0, bad("key length", err)
		}
		if klen == 0 {
			break
		}
		klen--
		if klen > maxUserKey {
			return 0, bad(fmt.Sprintf("key length %d", klen), nil)
		}
		kv = append(append(kv[:0], statePrefix...), make([]byte, klen)...)
		if err := c.full(kv[len(statePrefix):]); err != nil {
			return 0, bad("key", err)
		}
		offset += int64(klen)
		vlen, err := uvarint()
		if err != nil {
			return 0, bad("value length", err)
		}
		if vlen > bloomkv.MaxValueSize {
			return 0, bad(fmt.Sprintf("value length %d", vlen), nil)
		}
		n := len(kv)
		kv = append(kv, make([]byte, vlen)...)
		if err := c.full(kv[n:]); err != nil {
			return 0, bad("value", err)
		}
		offset += int64(vlen)
		if b.Size()+len(kv)+32 > restoreBatchSize && b.Len() > 0 {
			if err := db.Apply(b, &bloomkv.WriteOptions{}); err != nil {
				return 0, err
			}
			b.Reset()
		}
		if err := b.Set(kv[:n], kv[n:]); err != nil {
			return 0, err
		}
		count++
	}
	want, err := uvarint()
	if err != nil {
		return 0, bad("count", err)
	}
	if want != count {
		return 0, bad(fmt.Sprintf("count %d, read %d pairs", want, count), nil)
	}
	sum := c.crc.Sum32()
	var trailer [4]byte
	if _, err := io.ReadFull(c.r, trailer[:]); err != nil {
		return 0, bad("checksum", err)
	}
	if got := binary.BigEndian.Uint32(trailer[:]); got != sum {
		return 0, bad(fmt.Sprintf("checksum %#08x, computed %#08x", got, sum), nil)
	}
	if _, err := c.r.ReadByte(); err != io.EOF {
		return 0, bad("bytes after the checksum", nil)
	}
	if err := b.Set(appliedKey, binary.BigEndian.AppendUint64(nil, applied)); err != nil {
		return 0, err
	}
	return applied, db.Apply(b, bloomkv.Sync)
}
