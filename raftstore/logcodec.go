package raftstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/bloomkv/bloomkv"
)

// logFormat is the first byte of every encoded entry, the layout version.
const logFormat = 1

// appendLog appends the encoding of l (all but its Index, which is the key)
// to dst; see the package documentation for the layout.
func appendLog(dst []byte, l *raft.Log) []byte {
	dst = append(dst, logFormat)
	dst = binary.AppendUvarint(dst, l.Term)
	dst = append(dst, byte(l.Type))
	dst = binary.AppendUvarint(dst, uint64(len(l.Data)))
	dst = append(dst, l.Data...)
	dst = binary.AppendUvarint(dst, uint64(len(l.Extensions)))
	dst = append(dst, l.Extensions...)
	if l.AppendedAt.IsZero() {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	dst = binary.AppendVarint(dst, l.AppendedAt.Unix())
	return binary.AppendUvarint(dst, uint64(l.AppendedAt.Nanosecond()))
}

// decodeLog decodes the value stored at index into l. Data and Extensions are
// nil when empty, fresh slices otherwise; AppendedAt is in UTC, the zero time
// if it was zero.
func decodeLog(index uint64, v []byte, l *raft.Log) error {
	d := newDecoder(v)
	if format := d.byte(); d.err == nil && format != logFormat {
		return fmt.Errorf("raftstore: log %d: format %d, want %d: %w", index, format, logFormat, bloomkv.ErrCorruption)
	}
	out := raft.Log{Index: index}
	out.Term = d.uvarint()
	out.Type = raft.LogType(d.byte())
	out.Data = d.bytes()
	out.Extensions = d.bytes()
	if d.byte() == 1 {
		sec := d.varint()
		nsec := d.uvarint()
		if d.err == nil && nsec >= 1e9 {
			d.fail("nanoseconds")
		}
		out.AppendedAt = time.Unix(sec, int64(nsec)).UTC()
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return fmt.Errorf("raftstore: log %d: %w", index, d.err)
	}
	*l = out
	return nil
}

// decoder reads the fields of an encoded value; the first failure sticks.
type decoder struct {
	b    []byte
	size int // len(b) at the start, for the offsets of errors
	err  error
}

func newDecoder(b []byte) decoder { return decoder{b: b, size: len(b)} }

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("bad %s at byte %d: %w", what, d.size-len(d.b), bloomkv.ErrCorruption)
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail("length")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("varint")
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decoder) varint() int64 {
	x, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("varint")
		return 0
	}
	d.b = d.b[n:]
	return x
}

// bytes reads a length-prefixed byte string: nil when empty, else a copy.
func (d *decoder) bytes() []byte {
	if s := d.slice(); len(s) > 0 {
		return bytes.Clone(s)
	}
	return nil
}

// slice reads a length-prefixed byte string aliasing the input.
func (d *decoder) slice() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.fail("length")
		return nil
	}
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}
