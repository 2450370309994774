package blob

import (
	"bufio"
	"encoding/binary"
	"hash/crc32"
	"io"

	"github.com/bloomkv/bloomkv/internal/base"
)

// Reader reads the values of one blob file. It is safe for concurrent use
// if its io.ReaderAt is (a vfs.File is).
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
	switch {
	case string(f[24:]) != Magic:
		return nil, base.Corruptf(name, off, "bad magic %q", f[24:])
	case binary.LittleEndian.Uint32(f[20:]) != crc32.Checksum(f[:20], castagnoli):
		return nil, base.Corruptf(name, off, "footer checksum mismatch")
	case binary.LittleEndian.Uint32(f[16:]) != FormatVersion:
		return nil, base.Corruptf(name, off, "format version %d, want %d", binary.LittleEndian.Uint32(f[16:]), FormatVersion)
	}
	p := Properties{
		Values:     binary.LittleEndian.Uint64(f[0:]),
		ValueBytes: binary.LittleEndian.Uint64(f[8:]),
		Size:       uint64(size),
	}
	// n records of b bytes take b + 5n to b + 14n bytes; the values are
	// compared first so that nothing below overflows.
	if p.Values > end || p.ValueBytes > end || end < p.ValueBytes+minRecordOverhead*p.Values ||
		end-p.ValueBytes > maxRecordOverhead*p.Values {
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

// RecordLen is the number of bytes a read of h's value reads: its record.
func RecordLen(h Handle) uint64 { return uint64(recordHeaderLen(h.Length)) + h.Length }

// ReadValue reads the value at off of length n, appended to dst, and checks
// it. A handle whose record is not within the records, a record whose
// length is not n, and a checksum that does not hold are corruption.
func (r *Reader) ReadValue(dst []byte, off, n uint64) ([]byte, error) {
	hdr := uint64(recordHeaderLen(n))
	if off > r.end || n > r.end || hdr+n > r.end-off {
		return dst, badHandle(r, off, n)
	}
	start := len(dst)
	dst = append(dst, make([]byte, hdr+n)...)
	rec := dst[start:]
	if _, err := r.r.ReadAt(rec, int64(off)); err != nil {
		return dst[:start], readError(r.name, int64(off), err)
	}
	if err := checkRecord(r.name, off, rec, n); err != nil {
		return dst[:start], err
	}
	copy(rec, rec[hdr:])
	return dst[:start+int(n)], nil
}

// badHandle is the error of a handle of n bytes at off whose record is not
// within the records.
func badHandle(r *Reader, off, n uint64) error {
	return base.Corruptf(r.name, int64(off), "handle of %d bytes at %d is past the records' end %d", n, off, r.end)
}

// checkRecord checks rec, the record at off said to hold n bytes of value:
// its length and its checksum.
func checkRecord(name string, off uint64, rec []byte, n uint64) error {
	got, k := binary.Uvarint(rec[crcLen:])
	if k <= 0 || got != n || crcLen+k+int(n) != len(rec) {
		return base.Corruptf(name, int64(off), "record's length does not match the handle's %d", n)
	}
	if binary.LittleEndian.Uint32(rec) != crc32.Checksum(rec[crcLen:], castagnoli) {
		return base.Corruptf(name, int64(off), "record checksum mismatch")
	}
	return nil
}

// Scan reads every record in order and calls fn with its offset and value
// (valid only during the call), stopping at fn's first error. It checks
// each record, and that the records end where the footer says, in number
// and bytes.
func (r *Reader) Scan(fn func(off uint64, value []byte) error) error {
	br := bufio.NewReaderSize(io.NewSectionReader(r.r, 0, int64(r.end)), 64<<10)
	var off, values, valueBytes uint64
	var buf []byte
	for off < r.end {
		var crc [crcLen]byte
		if _, err := io.ReadFull(br, crc[:]); err != nil {
			return readError(r.name, int64(off), err)
		}
		n, err := binary.ReadUvarint(br)
		if err != nil || n > r.end-off {
			return base.Corruptf(r.name, int64(off), "record length unreadable or past the records' end")
		}
		hdr := uint64(recordHeaderLen(n))
		if hdr+n > r.end-off {
			return base.Corruptf(r.name, int64(off), "record of %d bytes past the records' end %d", n, r.end)
		}
		buf = binary.AppendUvarint(append(buf[:0], crc[:]...), n)
		vstart := len(buf)
		buf = append(buf, make([]byte, n)...)
		if _, err := io.ReadFull(br, buf[vstart:]); err != nil {
			return readError(r.name, int64(off), err)
		}
		if err := checkRecord(r.name, off, buf, n); err != nil {
			return err
		}
		if err := fn(off, buf[vstart:]); err != nil {
			return err
		}
		off += hdr + n
		values++
		valueBytes += n
	}
	if values != r.props.Values || valueBytes != r.props.ValueBytes {
		return base.Corruptf(r.name, int64(r.end), "footer says %d values of %d bytes, the records hold %d of %d",
			r.props.Values, r.props.ValueBytes, values, valueBytes)
	}
	return nil
}
