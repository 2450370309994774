// Package filterframe writes and checks the frame that the serialized
// filters of packages fuse and ribbon share: a 48-byte header, the
// payload of 64-bit words, and a checksum of the payload.
//
//	offset  size  field
//	     0     4  magic, the family's ("FUSF", "RIBF")
//	     4     1  format version
//	     5     1  kind
//	     6     1  width: bits per slot (fingerprint or result bits)
//	     7     1  reserved, 0
//	     8     8  seed
//	    16     8  layout, the family's (see its package doc)
//	    24     8  keys
//	    32     8  payload length in bytes
//	    40     4  reserved, 0
//	    44     4  CRC-32C (Castagnoli) of bytes 0–43
//	    48     P  payload
//	  48+P     4  CRC-32C of the payload
//
// Integers are little-endian. A Format checks what the frame alone can
// tell — the length, the magic, both checksums, the version, the kind, the
// width's range, the reserved bytes — and leaves the layout, the keys and
// the payload length, which only the family can check, to the family.
package filterframe

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// The frame's sizes, and the offsets of the fields a family checks itself.
const (
	HeaderLen        = 48
	ChecksumLen      = 4
	OffVersion       = 4
	OffKind          = 5
	OffBits          = 6
	OffReserved1     = 7
	OffSeed          = 8
	OffLayout        = 16
	OffKeys          = 24
	OffPayloadLength = 32
	OffReserved2     = 40
	OffHeaderCRC     = 44
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum returns the CRC-32C both of the frame's checksums are.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Format is one family's frame.
type Format struct {
	Magic    string // 4 bytes
	Version  byte
	Kind     byte
	KindName string // for errors, e.g. "3-wise binary fuse"
	// BitsName names the width in errors, e.g. "fingerprint width".
	BitsName         string
	MinBits, MaxBits int
	// ErrCorruption is wrapped by every error the bytes themselves cause.
	ErrCorruption error
}

// Header is a frame's header, without the fields every frame fixes.
type Header struct {
	Bits          uint64
	Seed          uint64
	Layout        uint64 // bytes 16–23, the family's
	Keys          uint64
	PayloadLength uint64 // bytes
}

// AppendHeader appends h, with its checksum, to dst.
func (f *Format) AppendHeader(dst []byte, h Header) []byte {
	start := len(dst)
	dst = append(dst, f.Magic...)
	dst = append(dst, f.Version, f.Kind, byte(h.Bits), 0)
	dst = binary.LittleEndian.AppendUint64(dst, h.Seed)
	dst = binary.LittleEndian.AppendUint64(dst, h.Layout)
	dst = binary.LittleEndian.AppendUint64(dst, h.Keys)
	dst = binary.LittleEndian.AppendUint64(dst, h.PayloadLength)
	dst = binary.LittleEndian.AppendUint32(dst, 0)
	return binary.LittleEndian.AppendUint32(dst, Checksum(dst[start:]))
}

// ParseHeader decodes the header at the start of b and checks what the
// frame alone can tell, before the family checks its layout, keys and
// payload length against each other.
func (f *Format) ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderLen {
		return Header{}, f.Corruptf("%d bytes, shorter than the %d-byte header", len(b), HeaderLen)
	}
	if string(b[:4]) != f.Magic {
		return Header{}, f.CorruptAt(0, "magic %q, want %q", b[:4], f.Magic)
	}
	if got, want := binary.LittleEndian.Uint32(b[OffHeaderCRC:]), Checksum(b[:OffHeaderCRC]); got != want {
		return Header{}, f.CorruptAt(OffHeaderCRC, "header checksum %#08x, but bytes 0–%d sum to %#08x", got, OffHeaderCRC-1, want)
	}
	if b[OffVersion] != f.Version {
		return Header{}, f.CorruptAt(OffVersion, "format version %d, this package reads %d", b[OffVersion], f.Version)
	}
	if b[OffKind] != f.Kind {
		return Header{}, f.CorruptAt(OffKind, "kind %d, want %d (%s)", b[OffKind], f.Kind, f.KindName)
	}
	if w := int(b[OffBits]); w < f.MinBits || w > f.MaxBits {
		return Header{}, f.CorruptAt(OffBits, "%s %d bits, outside [%d, %d]", f.BitsName, w, f.MinBits, f.MaxBits)
	}
	if b[OffReserved1] != 0 {
		return Header{}, f.CorruptAt(OffReserved1, "reserved byte is %#x, not 0", b[OffReserved1])
	}
	if r := binary.LittleEndian.Uint32(b[OffReserved2:]); r != 0 {
		return Header{}, f.CorruptAt(OffReserved2, "reserved bytes are %#08x, not 0", r)
	}
	return Header{
		Bits:          uint64(b[OffBits]),
		Seed:          binary.LittleEndian.Uint64(b[OffSeed:]),
		Layout:        binary.LittleEndian.Uint64(b[OffLayout:]),
		Keys:          binary.LittleEndian.Uint64(b[OffKeys:]),
		PayloadLength: binary.LittleEndian.Uint64(b[OffPayloadLength:]),
	}, nil
}

// Payload checks that data, whose header says it holds slots of bits each
// in size bytes, is that long and that its payload matches its checksum,
// and returns the payload, a subslice of data.
func (f *Format) Payload(data []byte, size, slots, bits uint64) ([]byte, error) {
	if uint64(len(data)) != size {
		return nil, f.Corruptf("%d bytes, want %d for %d slots of %d bits", len(data), size, slots, bits)
	}
	end := uint64(len(data)) - ChecksumLen
	payload := data[HeaderLen:end]
	if got, want := binary.LittleEndian.Uint32(data[end:]), Checksum(payload); got != want {
		return nil, f.CorruptAt(end, "payload checksum %#08x, but the payload sums to %#08x", got, want)
	}
	return payload, nil
}

// CorruptAt is the error for a damaged encoding whose fault lies at byte
// offset off of the serialized filter.
func (f *Format) CorruptAt(off uint64, format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", f.ErrCorruption, off, fmt.Sprintf(format, args...))
}

// Corruptf is the error for a damaged encoding whose fault has no one place.
func (f *Format) Corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", f.ErrCorruption, fmt.Sprintf(format, args...))
}
