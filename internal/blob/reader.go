package blob

import (
	"bufio"
	"encoding/binary"
	"hash/crc32"
	"io"
	"slices"
	"sync"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/compress"
)

// Reader reads the values of one blob file, of any format version up to
// FormatVersion. It is safe for concurrent use if its io.ReaderAt is (a
// vfs.File is).
type Reader struct {
	r     io.ReaderAt
	name  string
	props Properties
	// end is where the records end and the footer starts.
	end uint64
}

// Open checks the footer of the blob file of size bytes that r reads and
// returns its Reader; name is the file's name for errors.
func Open(r io.ReaderAt, size int64, name string) (*Reader, error) {
	if size < FooterLen {
		return nil, base.Corruptf(name, 0, "blob file of %d bytes, shorter than its %d-byte footer", size, FooterLen)
	}
	end := uint64(size) - FooterLen
	var f [FooterLen]byte
	if _, err := r.ReadAt(f[:], int64(end)); err != nil {
		return nil, readError(name, int64(end), err)
	}
	off := int64(end)
	v := binary.LittleEndian.Uint32(f[16:])
	switch {
	case string(f[24:]) != Magic:
		return nil, base.Corruptf(name, off, "bad magic %q", f[24:])
	case binary.LittleEndian.Uint32(f[20:]) != crc32.Checksum(f[:20], castagnoli):
		return nil, base.Corruptf(name, off, "footer checksum mismatch")
	case v < formatVersion1 || v > FormatVersion:
		return nil, base.Corruptf(name, off, "format version %d, this reader reads %d to %d", v, formatVersion1, FormatVersion)
	}
	p := Properties{
		Values:     binary.LittleEndian.Uint64(f[0:]),
		ValueBytes: binary.LittleEndian.Uint64(f[8:]),
		Size:       uint64(size),
		Version:    v,
	}
	// n records of b stored bytes take b + lo·n to b + hi·n bytes; the
	// counts are compared first so that nothing below overflows.
	lo, hi := recordOverhead(v)
	if p.Values > end || p.ValueBytes > end || end < p.ValueBytes+lo*p.Values || end-p.ValueBytes > hi*p.Values {
		return nil, base.Corruptf(name, off, "footer's %d values of %d bytes do not fill the %d bytes of records", p.Values, p.ValueBytes, end)
	}
	return &Reader{r: r, name: name, props: p, end: end}, nil
}

// readError turns a failed read into the Reader's error: a read past the
// end of the file is corruption (the footer or a handle promised bytes
// that are not there), any other failure is the file system's.
func readError(name string, off int64, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return base.Corruptf(name, off, "file ends within the record or footer")
	}
	return err
}

// Properties describes the file, as its footer does.
func (r *Reader) Properties() Properties { return r.props }

// Name is the file's name, as given to Open.
func (r *Reader) Name() string { return r.name }

// RecordLen is the number of bytes a read of the value stored in n bytes
// reads: its record.
func (r *Reader) RecordLen(n uint64) uint64 { return uint64(recordHeaderLen(r.props.Version, n)) + n }

// records are the buffers ReadValue and ReadStored read records into.
var records = sync.Pool{New: func() any { return new([]byte) }}

// readRecord reads and checks the record at off that stores n bytes,
// into a buffer from records, and returns the buffer (for records.Put),
// the stored bytes and their compression. A handle whose record is not
// within the records, a record whose length is not n, a checksum that does
// not hold and an unknown compression are corruption.
func (r *Reader) readRecord(off, n uint64) (*[]byte, []byte, compress.Codec, error) {
	if err := r.checkHandle(off, n); err != nil {
		return nil, nil, 0, err
	}
	buf := records.Get().(*[]byte)
	recLen := int(r.RecordLen(n))
	if cap(*buf) < recLen {
		*buf = make([]byte, recLen)
	}
	rec := (*buf)[:recLen]
	if _, err := r.r.ReadAt(rec, int64(off)); err != nil {
		records.Put(buf)
		return nil, nil, 0, readError(r.name, int64(off), err)
	}
	stored, c, err := r.checkRecord(off, rec, n, false)
	if err != nil {
		records.Put(buf)
		return nil, nil, 0, err
	}
	return buf, stored, c, nil
}

// ReadValue reads the value at off stored in n bytes, appended to dst and
// decompressed if need be, and checks it, as readRecord does; a compressed
// value that does not decode is corruption too.
func (r *Reader) ReadValue(dst []byte, off, n uint64) ([]byte, error) {
	buf, stored, c, err := r.readRecord(off, n)
	if err != nil {
		return dst, err
	}
	defer records.Put(buf)
	if c == compress.None {
		return append(dst, stored...), nil // stored is buf's, back to the pool
	}
	return r.decode(dst, off, c, stored)
}

// ReadStored reads the value at off stored in n bytes as it is stored,
// appended to dst, and its compression, for Writer.AddStored to copy; it
// checks the record as ReadValue does, but does not decompress it.
func (r *Reader) ReadStored(dst []byte, off, n uint64) ([]byte, compress.Codec, error) {
	buf, stored, c, err := r.readRecord(off, n)
	if err != nil {
		return dst, 0, err
	}
	defer records.Put(buf)
	return append(dst, stored...), c, nil
}

// decode returns the value of the record at off, stored as c: stored
// itself if c is none, else decompressed and appended to dst. On an error
// it returns dst as given.
func (r *Reader) decode(dst []byte, off uint64, c compress.Codec, stored []byte) ([]byte, error) {
	v, err := valueDecoder.Decode(dst, stored, c)
	if err != nil {
		return dst, base.Corruptf(r.name, int64(off), "record's %s value does not decode: %v", c, err)
	}
	return v, nil
}

// checkHandle checks that the record at off that stores n bytes is within
// the records.
func (r *Reader) checkHandle(off, n uint64) error {
	if off > r.end || n > r.end || uint64(recordHeaderLen(r.props.Version, n))+n > r.end-off {
		return base.Corruptf(r.name, int64(off), "handle of %d bytes at %d is past the records' end %d", n, off, r.end)
	}
	return nil
}

// checkRecord checks rec, the record at off said to store n bytes: its
// length, its checksum and its compression; and returns its stored bytes
// and their compression. A padding record (version 3) passes only if
// padding is set, as its compression.
func (r *Reader) checkRecord(off uint64, rec []byte, n uint64, padding bool) ([]byte, compress.Codec, error) {
	got, k := binary.Uvarint(rec[crcLen:])
	hdr := crcLen + k + compressionLen(r.props.Version)
	if k <= 0 || got != n || hdr+int(n) != len(rec) {
		return nil, 0, base.Corruptf(r.name, int64(off), "record's length does not match the handle's %d", n)
	}
	if binary.LittleEndian.Uint32(rec) != crc32.Checksum(rec[crcLen:], castagnoli) {
		return nil, 0, base.Corruptf(r.name, int64(off), "record checksum mismatch")
	}
	c := compress.None
	if r.props.Version >= formatVersion2 {
		c = compress.Codec(rec[hdr-1])
		if padding && r.props.Version >= formatVersion3 && c == paddingCodec {
			if len(rec) > maxPadding || slices.ContainsFunc(rec[hdr:], func(b byte) bool { return b != 0 }) {
				return nil, 0, base.Corruptf(r.name, int64(off), "padding of %d bytes is not %d bytes of zeros at most", len(rec), maxPadding)
			}
		} else if !c.Known() {
			return nil, 0, base.Corruptf(r.name, int64(off), "record of unknown compression %d", uint8(c))
		}
	}
	return rec[hdr:], c, nil
}

// Record is a record as Scan reads it.
type Record struct {
	// Offset is the record's first byte; Length the bytes it stores the
	// value in, and Compression how: with the file's number, its Handle.
	Offset, Length uint64
	Compression    compress.Codec
	// Value is the value, decompressed.
	Value []byte
}

// Scan reads every record in order and calls fn with it (its Value valid
// only during the call), stopping at fn's first error. It checks each
// record, as ReadValue does, and that the records end where the footer
// says, in number and bytes. It checks padding records too, and skips
// them.
func (r *Reader) Scan(fn func(Record) error) error {
	br := bufio.NewReaderSize(io.NewSectionReader(r.r, 0, int64(r.end)), 64<<10)
	var off, values, valueBytes uint64
	var buf, value []byte
	for off < r.end {
		var crc [crcLen]byte
		if _, err := io.ReadFull(br, crc[:]); err != nil {
			return readError(r.name, int64(off), err)
		}
		n, err := binary.ReadUvarint(br)
		if err != nil || n > r.end-off {
			return base.Corruptf(r.name, int64(off), "record length unreadable or past the records' end")
		}
		recLen := r.RecordLen(n)
		if recLen > r.end-off {
			return base.Corruptf(r.name, int64(off), "record of %d bytes past the records' end %d", n, r.end)
		}
		buf = binary.AppendUvarint(append(buf[:0], crc[:]...), n)
		rest := len(buf)
		buf = append(buf, make([]byte, recLen-uint64(rest))...)
		if _, err := io.ReadFull(br, buf[rest:]); err != nil {
			return readError(r.name, int64(off), err)
		}
		stored, c, err := r.checkRecord(off, buf, n, true)
		if err != nil {
			return err
		}
		if c == paddingCodec {
			off += recLen
			continue
		}
		v, err := r.decode(value[:0], off, c, stored)
		if err != nil {
			return err
		}
		if c != compress.None {
			value = v // a stored v is buf's, which the next record reuses
		}
		if err := fn(Record{Offset: off, Length: n, Compression: c, Value: v}); err != nil {
			return err
		}
		off += recLen
		values++
		valueBytes += n
	}
	if values != r.props.Values || valueBytes != r.props.ValueBytes {
		return base.Corruptf(r.name, int64(r.end), "footer says %d values of %d bytes, the records hold %d of %d",
			r.props.Values, r.props.ValueBytes, values, valueBytes)
	}
	return nil
}
