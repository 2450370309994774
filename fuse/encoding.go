package fuse

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
)

// FormatVersion is the version of the serialized fuse filter format this package
// writes, and the one it reads.
const FormatVersion = formatVersion

// The serialized format; the package doc draws it.
const (
	magic         = "FUSF"
	formatVersion = 1
	// kindBinaryFuse3 is the only kind: a 3-wise binary fuse filter.
	kindBinaryFuse3 = 1
	headerLen       = 48
	checksumLen     = 4
	// Offsets of the header's fields.
	offVersion       = 4
	offKind          = 5
	offBits          = 6
	offReserved1     = 7
	offSeed          = 8
	offSegmentLength = 16
	offSegmentCount  = 20
	offKeys          = 24
	offPayloadLength = 32
	offReserved2     = 40
	offHeaderCRC     = 44
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header is the fixed-size start of a serialized filter.
type header struct {
	w        uint64 // fingerprint bits
	seed     uint64
	segLen   uint64 // L
	segCount uint64 // S
	keys     uint64
}

func (h header) slots() uint64        { return (h.segCount + 2) * h.segLen }
func (h header) payloadWords() uint64 { return payloadWords(h.slots(), h.w) }

func (f *Filter) header() header {
	return header{w: f.w, seed: f.seed, segLen: f.segLen, segCount: f.segCountLen / f.segLen, keys: f.keys}
}

func (h header) appendTo(dst []byte) []byte {
	start := len(dst)
	dst = append(dst, magic...)
	dst = append(dst, formatVersion, kindBinaryFuse3, byte(h.w), 0)
	dst = binary.LittleEndian.AppendUint64(dst, h.seed)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.segLen))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.segCount))
	dst = binary.LittleEndian.AppendUint64(dst, h.keys)
	dst = binary.LittleEndian.AppendUint64(dst, 8*h.payloadWords())
	dst = binary.LittleEndian.AppendUint32(dst, 0)
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// parseHeader decodes and validates a header: every field, and every value
// derived from them, before anything is read past the header or allocated.
func parseHeader(b []byte) (header, error) {
	if len(b) < headerLen {
		return header{}, corruptf("%d bytes, shorter than the %d-byte header", len(b), headerLen)
	}
	if string(b[:4]) != magic {
		return header{}, corruptAt(0, "magic %q, want %q", b[:4], magic)
	}
	if got, want := binary.LittleEndian.Uint32(b[offHeaderCRC:]), crc32.Checksum(b[:offHeaderCRC], castagnoli); got != want {
		return header{}, corruptAt(offHeaderCRC, "header checksum %#08x, but bytes 0–%d sum to %#08x", got, offHeaderCRC-1, want)
	}
	if b[offVersion] != formatVersion {
		return header{}, corruptAt(offVersion, "format version %d, this package reads %d", b[offVersion], formatVersion)
	}
	if b[offKind] != kindBinaryFuse3 {
		return header{}, corruptAt(offKind, "kind %d, want %d (3-wise binary fuse)", b[offKind], kindBinaryFuse3)
	}
	if w := int(b[offBits]); !validBits(w) {
		return header{}, corruptAt(offBits, "fingerprint width %d bits, outside [%d, %d]", w, MinBits, MaxBits)
	}
	if b[offReserved1] != 0 {
		return header{}, corruptAt(offReserved1, "reserved byte is %#x, not 0", b[offReserved1])
	}
	h := header{
		w:        uint64(b[offBits]),
		seed:     binary.LittleEndian.Uint64(b[offSeed:]),
		segLen:   uint64(binary.LittleEndian.Uint32(b[offSegmentLength:])),
		segCount: uint64(binary.LittleEndian.Uint32(b[offSegmentCount:])),
		keys:     binary.LittleEndian.Uint64(b[offKeys:]),
	}
	if h.segLen == 0 || h.segLen&(h.segLen-1) != 0 || h.segLen > maxSegmentLength {
		return header{}, corruptAt(offSegmentLength, "segment length %d, not a power of two in [1, %d]", h.segLen, maxSegmentLength)
	}
	// Both are below 2^32: the product cannot overflow.
	if h.segCount == 0 || h.slots() > maxSlots {
		return header{}, corruptAt(offSegmentCount, "%d segments of %d slots: (segments+2)·length must be in [%d, %d]",
			h.segCount, h.segLen, 3*h.segLen, uint64(maxSlots))
	}
	if h.keys == 0 || h.keys > h.slots() {
		return header{}, corruptAt(offKeys, "%d keys in %d slots, want 1 to %d", h.keys, h.slots(), h.slots())
	}
	if got, want := binary.LittleEndian.Uint64(b[offPayloadLength:]), 8*h.payloadWords(); got != want {
		return header{}, corruptAt(offPayloadLength, "payload length %d, want %d for %d slots of %d bits", got, want, h.slots(), h.w)
	}
	if r := binary.LittleEndian.Uint32(b[offReserved2:]); r != 0 {
		return header{}, corruptAt(offReserved2, "reserved bytes are %#08x, not 0", r)
	}
	return h, nil
}

// decode validates a whole serialized filter and returns its header and
// payload, a subslice of data.
func decode(data []byte) (header, []byte, error) {
	h, err := parseHeader(data)
	if err != nil {
		return header{}, nil, err
	}
	// At most 2^35 bytes for 2^32−1 slots of 16 bits: no overflow.
	size := encodedSize(h.slots(), h.w)
	if uint64(len(data)) != size {
		return header{}, nil, corruptf("%d bytes, want %d for %d slots of %d bits", len(data), size, h.slots(), h.w)
	}
	end := uint64(len(data)) - checksumLen
	payload := data[headerLen:end]
	if got, want := binary.LittleEndian.Uint32(data[end:]), crc32.Checksum(payload, castagnoli); got != want {
		return header{}, nil, corruptAt(end, "payload checksum %#08x, but the payload sums to %#08x", got, want)
	}
	// Encoding writes 0 to every bit after the last slot: the bits left in
	// the last word that holds slots, and the padding word after it.
	used := h.slots() * h.w
	last := (used - 1) / 64 // the last word holding slots
	r := used - 64*last     // its bits that do, 1 to 64 (a shift by 64 gives 0)
	if spare := binary.LittleEndian.Uint64(payload[8*last:]) >> r; spare != 0 {
		return header{}, nil, corruptAt(headerLen+8*last, "the %d bits after the last slot are %#x, not 0", 64-r, spare)
	}
	if pad := binary.LittleEndian.Uint64(payload[len(payload)-8:]); pad != 0 {
		return header{}, nil, corruptAt(headerLen+uint64(len(payload))-8, "padding word is %#x, not 0", pad)
	}
	return h, payload, nil
}

// MarshalBinary encodes the filter in the format the package doc draws. A
// zero Filter has no encoding: it returns an error wrapping ErrEmpty.
func (f *Filter) MarshalBinary() ([]byte, error) {
	return f.AppendBinary(make([]byte, 0, encodedSize(f.Slots(), f.w)))
}

// AppendBinary appends the encoding MarshalBinary returns to dst.
func (f *Filter) AppendBinary(dst []byte) ([]byte, error) {
	if f.keys == 0 {
		return dst, fmt.Errorf("%w: a zero Filter has no encoding", ErrEmpty)
	}
	payload := wordBytes(f.words)
	dst = slices.Grow(dst, headerLen+len(payload)+checksumLen)
	dst = f.header().appendTo(dst)
	dst = append(dst, payload...)
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(payload, castagnoli)), nil
}

// UnmarshalBinary replaces f with the filter encoded in data, keeping its
// slots on the heap. Damaged or truncated input returns an error wrapping
// ErrCorruption and leaves f as it was.
func (f *Filter) UnmarshalBinary(data []byte) error { return f.UnmarshalBinaryInto(data, nil) }

// UnmarshalBinaryInto is UnmarshalBinary keeping the filter's slots in
// memory the caller provides, for a program that holds filters outside the
// Go heap, pinned, or in an arena. Once all of data is checked — header,
// size, checksums — alloc is called once with the number of 64-bit words
// of the payload (SizeBytes()/8) and must return a slice of exactly that
// length, whose contents are then overwritten; nothing else is allocated.
// The filter uses that memory for its life; freeing it is the caller's
// business, and f must not be used afterwards. A nil alloc allocates the
// words on the heap. A slice of the wrong length returns an
// *ArgumentError naming alloc.
func (f *Filter) UnmarshalBinaryInto(data []byte, alloc func(words int) []uint64) error {
	h, payload, err := decode(data)
	if err != nil {
		return err
	}
	n := len(payload) / 8
	var words []uint64
	if alloc == nil {
		words = make([]uint64, n)
	} else if words = alloc(n); len(words) != n {
		return &ArgumentError{Arg: "alloc", Value: len(words), Reason: fmt.Sprintf("returned that many words, want %d", n)}
	}
	copy(wordBytes(words), payload)
	*f = Filter{
		words:       words,
		seed:        h.seed,
		segLen:      h.segLen,
		segMask:     h.segLen - 1,
		segCountLen: h.segCount * h.segLen,
		w:           h.w,
		mask:        1<<h.w - 1,
		keys:        h.keys,
	}
	return nil
}
