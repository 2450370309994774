package ribbon

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/bloomkv/bloomkv/internal/filterframe"
)

// FormatVersion is the version of the serialized Ribbon filter format this package
// writes, and the one it reads.
const FormatVersion = formatVersion

// The serialized format; the package doc draws it. The frame's fields
// are package filterframe's; the layout word holds the slots.
const (
	magic         = "RIBF"
	formatVersion = 1
	// kindStandard128 is the only kind: a Standard Ribbon filter of
	// 128-bit coefficient rows.
	kindStandard128 = 1
	headerLen       = filterframe.HeaderLen
	checksumLen     = filterframe.ChecksumLen
	// Offsets of the header's fields.
	offHeaderCRC     = filterframe.OffHeaderCRC
	offSlots         = filterframe.OffLayout
	offKeys          = filterframe.OffKeys
	offPayloadLength = filterframe.OffPayloadLength
)

var frame = &filterframe.Format{
	Magic:         magic,
	Version:       formatVersion,
	Kind:          kindStandard128,
	KindName:      "Standard Ribbon, 128-bit rows",
	BitsName:      "result width",
	MinBits:       MinBits,
	MaxBits:       MaxBits,
	ErrCorruption: ErrCorruption,
}

// header is the fixed-size start of a serialized filter.
type header struct {
	r     uint64 // result bits
	seed  uint64
	slots uint64
	keys  uint64
}

func (h header) payloadWords() uint64 { return payloadWords(h.slots, h.r) }

func (f *Filter) header() header {
	return header{r: f.r, seed: f.seed, slots: f.slots, keys: f.keys}
}

func (h header) appendTo(dst []byte) []byte {
	return frame.AppendHeader(dst, filterframe.Header{
		Bits: h.r, Seed: h.seed, Layout: h.slots, Keys: h.keys, PayloadLength: 8 * h.payloadWords(),
	})
}

// parseHeader decodes and validates a header: every field, and every value
// derived from them, before anything is read past the header or allocated.
func parseHeader(b []byte) (header, error) {
	fh, err := frame.ParseHeader(b)
	if err != nil {
		return header{}, err
	}
	h := header{r: fh.Bits, seed: fh.Seed, slots: fh.Layout, keys: fh.Keys}
	if h.slots < minSlots || h.slots > maxSlots || h.slots%64 != 0 {
		return header{}, frame.CorruptAt(offSlots, "%d slots, not a multiple of 64 in [%d, %d]", h.slots, minSlots, uint64(maxSlots))
	}
	if h.keys == 0 || h.keys > h.slots {
		return header{}, frame.CorruptAt(offKeys, "%d keys in %d slots, want 1 to %d", h.keys, h.slots, h.slots)
	}
	if got, want := fh.PayloadLength, 8*h.payloadWords(); got != want {
		return header{}, frame.CorruptAt(offPayloadLength, "payload length %d, want %d for %d slots of %d bits", got, want, h.slots, h.r)
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
	// At most 2^37 bytes for 2^32 slots of 32 bits: no overflow.
	payload, err := frame.Payload(data, encodedSize(h.slots, h.r), h.slots, h.r)
	if err != nil {
		return header{}, nil, err
	}
	return h, payload, nil
}

// MarshalBinary encodes the filter in the format the package doc draws. A
// zero Filter has no encoding: it returns an error wrapping ErrEmpty.
func (f *Filter) MarshalBinary() ([]byte, error) {
	return f.AppendBinary(make([]byte, 0, encodedSize(f.slots, f.r)))
}

// AppendBinary appends the encoding MarshalBinary returns to dst.
func (f *Filter) AppendBinary(dst []byte) ([]byte, error) {
	if f.keys == 0 {
		return dst, fmt.Errorf("%w: a zero Filter has no encoding", ErrEmpty)
	}
	dst = slices.Grow(dst, headerLen+8*len(f.words)+checksumLen)
	dst = f.header().appendTo(dst)
	start := len(dst)
	for _, w := range f.words {
		dst = binary.LittleEndian.AppendUint64(dst, w)
	}
	return binary.LittleEndian.AppendUint32(dst, filterframe.Checksum(dst[start:])), nil
}

// UnmarshalBinary replaces f with the filter encoded in data, keeping its
// solution on the heap. Damaged or truncated input returns an error
// wrapping ErrCorruption and leaves f as it was.
func (f *Filter) UnmarshalBinary(data []byte) error { return f.UnmarshalBinaryInto(data, nil) }

// UnmarshalBinaryInto is UnmarshalBinary keeping the filter's solution in
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
	for i := range words {
		words[i] = binary.LittleEndian.Uint64(payload[8*i:])
	}
	*f = Filter{
		words: words,
		seed:  h.seed,
		slots: h.slots,
		r:     h.r,
		keys:  h.keys,
	}
	return nil
}
