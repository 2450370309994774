package ribbon

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
)

// FormatVersion is the version of the serialized Ribbon filter format this package
// writes, and the one it reads.
const FormatVersion = formatVersion

// The serialized format; the package doc draws it.
const (
	magic         = "RIBF"
	formatVersion = 1
	// kindStandard128 is the only kind: a Standard Ribbon filter of
	// 128-bit coefficient rows.
	kindStandard128 = 1
	headerLen       = 48
	checksumLen     = 4
	// Offsets of the header's fields.
	offVersion       = 4
	offKind          = 5
	offBits          = 6
	offReserved1     = 7
	offSeed          = 8
	offSlots         = 16
	offKeys          = 24
	offPayloadLength = 32
	offReserved2     = 40
	offHeaderCRC     = 44
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

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
	start := len(dst)
	dst = append(dst, magic...)
	dst = append(dst, formatVersion, kindStandard128, byte(h.r), 0)
	dst = binary.LittleEndian.AppendUint64(dst, h.seed)
	dst = binary.LittleEndian.AppendUint64(dst, h.slots)
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
	if b[offKind] != kindStandard128 {
		return header{}, corruptAt(offKind, "kind %d, want %d (Standard Ribbon, 128-bit rows)", b[offKind], kindStandard128)
	}
	if r := int(b[offBits]); !validBits(r) {
		return header{}, corruptAt(offBits, "result width %d bits, outside [%d, %d]", r, MinBits, MaxBits)
	}
	if b[offReserved1] != 0 {
		return header{}, corruptAt(offReserved1, "reserved byte is %#x, not 0", b[offReserved1])
	}
	h := header{
		r:     uint64(b[offBits]),
		seed:  binary.LittleEndian.Uint64(b[offSeed:]),
		slots: binary.LittleEndian.Uint64(b[offSlots:]),
		keys:  binary.LittleEndian.Uint64(b[offKeys:]),
	}
	if h.slots < minSlots || h.slots > maxSlots || h.slots%64 != 0 {
		return header{}, corruptAt(offSlots, "%d slots, not a multiple of 64 in [%d, %d]", h.slots, minSlots, uint64(maxSlots))
	}
	if h.keys == 0 || h.keys > h.slots {
		return header{}, corruptAt(offKeys, "%d keys in %d slots, want 1 to %d", h.keys, h.slots, h.slots)
	}
	if got, want := binary.LittleEndian.Uint64(b[offPayloadLength:]), 8*h.payloadWords(); got != want {
		return header{}, corruptAt(offPayloadLength, "payload length %d, want %d for %d slots of %d bits", got, want, h.slots, h.r)
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
	// At most 2^37 bytes for 2^32 slots of 32 bits: no overflow.
	size := encodedSize(h.slots, h.r)
	if uint64(len(data)) != size {
		return header{}, nil, corruptf("%d bytes, want %d for %d slots of %d bits", len(data), size, h.slots, h.r)
	}
	end := uint64(len(data)) - checksumLen
	payload := data[headerLen:end]
	if got, want := binary.LittleEndian.Uint32(data[end:]), crc32.Checksum(payload, castagnoli); got != want {
		return header{}, nil, corruptAt(end, "payload checksum %#08x, but the payload sums to %#08x", got, want)
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
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli)), nil
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
