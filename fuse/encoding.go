package fuse

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/bloomkv/bloomkv/internal/filterframe"
)

// FormatVersion is the version of the serialized fuse filter format this package
// writes, and the one it reads.
const FormatVersion = formatVersion

// The serialized format; the package doc draws it. The frame's fields
// are package filterframe's; the layout word holds the segment length
// (bytes 16–19) and the segment count (bytes 20–23).
const (
	magic         = "FUSF"
	formatVersion = 1
	// kindBinaryFuse3 is the only kind: a 3-wise binary fuse filter.
	kindBinaryFuse3 = 1
	headerLen       = filterframe.HeaderLen
	checksumLen     = filterframe.ChecksumLen
	// Offsets of the header's fields.
	offHeaderCRC     = filterframe.OffHeaderCRC
	offSegmentLength = filterframe.OffLayout
	offSegmentCount  = filterframe.OffLayout + 4
	offKeys          = filterframe.OffKeys
	offPayloadLength = filterframe.OffPayloadLength
)

var frame = &filterframe.Format{
	Magic:         magic,
	Version:       formatVersion,
	Kind:          kindBinaryFuse3,
	KindName:      "3-wise binary fuse",
	BitsName:      "fingerprint width",
	MinBits:       MinBits,
	MaxBits:       MaxBits,
	ErrCorruption: ErrCorruption,
}

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
	return frame.AppendHeader(dst, filterframe.Header{
		Bits: h.w, Seed: h.seed, Layout: h.segLen | h.segCount<<32, Keys: h.keys, PayloadLength: 8 * h.payloadWords(),
	})
}

// parseHeader decodes and validates a header: every field, and every value
// derived from them, before anything is read past the header or allocated.
func parseHeader(b []byte) (header, error) {
	fh, err := frame.ParseHeader(b)
	if err != nil {
		return header{}, err
	}
	h := header{w: fh.Bits, seed: fh.Seed, segLen: fh.Layout & (1<<32 - 1), segCount: fh.Layout >> 32, keys: fh.Keys}
	if h.segLen == 0 || h.segLen&(h.segLen-1) != 0 || h.segLen > maxSegmentLength {
		return header{}, frame.CorruptAt(offSegmentLength, "segment length %d, not a power of two in [1, %d]", h.segLen, maxSegmentLength)
	}
	// Both are below 2^32: the product cannot overflow.
	if h.segCount == 0 || h.slots() > maxSlots {
		return header{}, frame.CorruptAt(offSegmentCount, "%d segments of %d slots: (segments+2)·length must be in [%d, %d]",
			h.segCount, h.segLen, 3*h.segLen, uint64(maxSlots))
	}
	if h.keys == 0 || h.keys > h.slots() {
		return header{}, frame.CorruptAt(offKeys, "%d keys in %d slots, want 1 to %d", h.keys, h.slots(), h.slots())
	}
	if got, want := fh.PayloadLength, 8*h.payloadWords(); got != want {
		return header{}, frame.CorruptAt(offPayloadLength, "payload length %d, want %d for %d slots of %d bits", got, want, h.slots(), h.w)
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
	payload, err := frame.Payload(data, encodedSize(h.slots(), h.w), h.slots(), h.w)
	if err != nil {
		return header{}, nil, err
	}
	// Encoding writes 0 to every bit after the last slot: the bits left in
	// the last word that holds slots, and the padding word after it.
	used := h.slots() * h.w
	last := (used - 1) / 64 // the last word holding slots
	r := used - 64*last     // its bits that do, 1 to 64 (a shift by 64 gives 0)
	if spare := binary.LittleEndian.Uint64(payload[8*last:]) >> r; spare != 0 {
		return header{}, nil, frame.CorruptAt(headerLen+8*last, "the %d bits after the last slot are %#x, not 0", 64-r, spare)
	}
	if pad := binary.LittleEndian.Uint64(payload[len(payload)-8:]); pad != 0 {
		return header{}, nil, frame.CorruptAt(headerLen+uint64(len(payload))-8, "padding word is %#x, not 0", pad)
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
	return binary.LittleEndian.AppendUint32(dst, filterframe.Checksum(payload)), nil
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
