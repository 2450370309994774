package bloom

import (
	"encoding"
	"io"
)

// Filter is the behaviour every filter of this package shares.
type Filter interface {
	// Add inserts item.
	Add(item []byte)
	// AddHash inserts the item whose Hash is h.
	AddHash(h uint64)
	// MayContain reports whether item may have been added; false is certain.
	MayContain(item []byte) bool
	// MayContainHash is MayContain for the item whose Hash is h.
	MayContainHash(h uint64) bool
	// SizeBytes returns the memory the filter's bits or counters occupy.
	SizeBytes() int
	// LoadFactor returns the fraction of bits set (classic, blocked) or of
	// counters non-zero (counting): about 1 − e^(−kn/m) after n distinct
	// items, and the false-positive rate is roughly its k-th power. It reads
	// the whole filter, so it costs time in proportion to its size.
	LoadFactor() float64

	encoding.BinaryMarshaler
	io.WriterTo
}

var (
	_ Filter = (*Classic)(nil)
	_ Filter = (*Blocked)(nil)
	_ Filter = (*Counting)(nil)
)

// Unmarshal decodes a serialized filter of any kind: a *Classic, *Blocked or
// *Counting. Errors wrap ErrCorrupt.
func Unmarshal(data []byte) (Filter, error) {
	if len(data) < headerLen {
		return nil, corruptf("%d bytes, shorter than the %d-byte header", len(data), headerLen)
	}
	if string(data[:4]) != magic {
		return nil, corruptf("bad magic %q", data[:4])
	}
	var f interface {
		Filter
		encoding.BinaryUnmarshaler
	}
	switch Kind(data[5]) {
	case KindClassic:
		f = new(Classic)
	case KindBlocked:
		f = new(Blocked)
	case KindCounting:
		f = new(Counting)
	default:
		return nil, corruptf("unknown filter kind %d", data[5])
	}
	if err := f.UnmarshalBinary(data); err != nil {
		return nil, err
	}
	return f, nil
}
