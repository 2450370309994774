package sstable

import (
	"fmt"
	"sync"

	"github.com/bloomkv/bloomkv/rangefilter"
)

// A table's range filter: the second filter seam, beside the point
// filter's (filter.go). It answers "might the table hold a user key in
// [lo, hi)?" so that a short scan skips the table without reading its
// index or data, as a point lookup skips it on its point filter's "no".

// RangeFilterFamily is the algorithm of a table's range filter, recorded
// in its properties (bloomkv.rangefilter.family) so that the reader picks
// the decoder by it.
type RangeFilterFamily uint8

// The range-filter families.
const (
	// NoRangeFilter: the table has no range filter; every scan whose
	// bounds overlap its key range reads it.
	NoRangeFilter RangeFilterFamily = 0
	// GrafiteFamily is package rangefilter's Grafite filter over an
	// order-preserving mapping of the keys: a false-positive rate of at
	// most ℓ/2^(B−2) for an empty range of ℓ keys at B bits per key.
	GrafiteFamily RangeFilterFamily = 1
)

// String returns the family's name as tools print it: "none", "grafite".
func (f RangeFilterFamily) String() string {
	switch f {
	case NoRangeFilter:
		return "none"
	case GrafiteFamily:
		return "grafite"
	}
	return fmt.Sprintf("rangefilter(%d)", uint8(f))
}

// RangeFilter is a table's decoded range filter, held in memory for the
// table's life. MayContainRange is asked by every scan with both bounds
// whose range overlaps the table's keys: a false answer is never wrong
// (the filter is built from every distinct user key of the table, point
// tombstones included), a true one is wrong at most at the filter's
// false-positive rate. It allocates nothing. *rangefilter.Filter is the
// built-in one.
type RangeFilter interface {
	MayContainRange(lo, hi []byte) bool
	Keys() uint64        // distinct user keys the filter was built from
	SizeBytes() int      // bytes of the filter's encoding
	BitsPerKey() float64 // encoding bits per key, everything counted
}

// checkRangeFilterBits is WriterOptions.RangeFilterBits' rule: 0 (none),
// or rangefilter's range.
func checkRangeFilterBits(bits float64) error {
	if bits == 0 {
		return nil
	}
	return rangefilter.CheckBitsPerKey(bits)
}

// rangeFilterBuilders recycles range-filter builders from one table to the
// next: a builder keeps every key of its table until Finish, and its
// buffers are as large as the table's keys.
var rangeFilterBuilders sync.Pool

// newRangeFilterBuilder returns a pooled builder of bits bits per key
// (valid: checked by NewWriter).
func newRangeFilterBuilder(bits float64) *rangefilter.Builder {
	if b, ok := rangeFilterBuilders.Get().(*rangefilter.Builder); ok {
		b.Reset()
		if b.SetBitsPerKey(bits) == nil {
			return b
		}
	}
	b, err := rangefilter.NewBuilder(bits)
	if err != nil {
		panic(err) // NewWriter checked bits
	}
	return b
}

// addRangeKey adds a new user key of the table to its range filter.
func (w *Writer) addRangeKey(userKey []byte) {
	if w.rangeFilter == nil || w.err != nil {
		return
	}
	if err := w.rangeFilter.Add(userKey); err != nil {
		w.err = fmt.Errorf("sstable: range filter: %w", err)
	}
}

// writeRangeFilter writes the range-filter block, if the writer builds
// one and the table has keys, just before the properties, and records it
// there; it reports whether it wrote one. The builder goes back to the
// pool.
func (w *Writer) writeRangeFilter() bool {
	b := w.rangeFilter
	if b == nil {
		return false
	}
	w.rangeFilter = nil
	defer rangeFilterBuilders.Put(b)
	if b.Keys() == 0 || w.err != nil {
		return false
	}
	encoded, err := b.Finish()
	if err != nil {
		w.err = fmt.Errorf("sstable: range filter: %w", err)
		return false
	}
	p := &w.props
	p.RangeFilterFamily = GrafiteFamily
	p.RangeFilterBlock = w.writeBlock(encoded, NoCompression)
	p.RangeFilterKeys = uint64(b.Keys())
	p.RangeFilterBitsPer = 8 * float64(len(encoded)) / float64(b.Keys())
	return true
}

// openRangeFilter reads, checks and pins the range-filter block of a table
// of format version 3 whose properties name one, just before the
// properties; a table of an earlier version has none.
func (r *Reader) openRangeFilter(f footer) error {
	h, p := r.props.RangeFilterBlock, &r.props
	if f.version < formatVersion3 {
		if h.Length != 0 || p.RangeFilterFamily != NoRangeFilter {
			return r.corrupt(int64(f.properties.Offset), "properties block: a range filter in a table of format version %d", f.version)
		}
		return nil
	}
	if h.Length == 0 && p.RangeFilterFamily == NoRangeFilter {
		return nil // version 3 for its aligned blocks (checkFeatures)
	}
	if h.Length == 0 {
		return r.corrupt(int64(f.properties.Offset), "properties block: a range-filter family but no range-filter block")
	}
	if p.RangeFilterFamily != GrafiteFamily {
		return r.corrupt(int64(f.properties.Offset), "properties block: unknown range-filter family %d", uint8(p.RangeFilterFamily))
	}
	// After the index, or after the range-deletion block if there is one,
	// and just before the properties, as Finish writes it.
	start := f.index.Offset + f.index.Length + blockTrailerLen
	if rd := p.RangeDelBlock; rd.Length > 0 {
		start = rd.Offset + rd.Length + blockTrailerLen
	}
	if h.Offset != start || h.Offset+h.Length+blockTrailerLen != f.properties.Offset {
		return r.corrupt(int64(f.properties.Offset), "properties block: range-filter block [%d, +%d) is not just before the properties", h.Offset, h.Length)
	}
	block, err := r.readBlock(h, "range filter")
	if err != nil {
		return err
	}
	pinned := r.pin(len(block))
	copy(pinned, block)
	rf, err := rangefilter.Decode(pinned)
	if err != nil {
		return r.corrupt(int64(h.Offset), "range filter block: %v", err)
	}
	if rf.Keys() != p.RangeFilterKeys {
		return r.corrupt(int64(h.Offset), "range filter block holds %d keys, the properties say %d", rf.Keys(), p.RangeFilterKeys)
	}
	r.rangeFilter = rf
	return nil
}

// rangeDelsEnd returns where the range-deletion block of a table must end:
// at its range-filter block, or else at its properties.
func (r *Reader) rangeDelsEnd(f footer) uint64 {
	if h := r.props.RangeFilterBlock; h.Length > 0 {
		return h.Offset
	}
	return f.properties.Offset
}

// hasRangeDelBlock reports whether a table of footer f with properties p
// must have a range-deletion block: always at version 2, never at 1, and
// at 3 (which a range filter decides) when the properties name one.
func (f footer) hasRangeDelBlock(p *Properties) bool {
	switch f.version {
	case formatVersion1:
		return false
	case formatVersion2:
		return true
	}
	return p.RangeDels != 0 || p.RangeDelBlock.Length != 0
}

// RangeFilter returns the table's range filter, nil if it has none.
func (r *Reader) RangeFilter() RangeFilter {
	if r.rangeFilter == nil {
		return nil
	}
	return r.rangeFilter
}

// MayContainRange reports whether the table may hold a user key in the
// half-open range [lo, hi): false only when its range filter rules every
// such key out (and for an empty range, hi ≤ lo); true for a table without
// a range filter. It is in memory: it reads nothing and allocates nothing.
// lo and hi must not be nil: a scan without both bounds has no range to
// ask about.
func (r *Reader) MayContainRange(lo, hi []byte) bool {
	if r.rangeFilter == nil {
		return true
	}
	return r.rangeFilter.MayContainRange(lo, hi)
}

// rangeFilterProperties are the range filter's properties, which
// propertyCodecs lists with the others. A table without a range filter
// leaves them out (noRangeFilter), so that its properties block is what it
// was before range filters.
var rangeFilterProperties = func() []propertyCodec {
	codecs := []propertyCodec{
		uintProperty("bloomkv.rangefilter.keys", func(p *Properties) *uint64 { return &p.RangeFilterKeys }),
		float64Property("bloomkv.rangefilter.bits.per.key", func(p *Properties) *float64 { return &p.RangeFilterBitsPer }),
		{
			name:   "bloomkv.rangefilter.family",
			encode: func(p *Properties) []byte { return []byte{byte(p.RangeFilterFamily)} },
			decode: func(p *Properties, v []byte) bool {
				if len(v) != 1 {
					return false
				}
				p.RangeFilterFamily = RangeFilterFamily(v[0])
				return true
			},
		},
		{
			name:   "bloomkv.rangefilter.block",
			encode: func(p *Properties) []byte { return p.RangeFilterBlock.appendVarint(nil) },
			decode: func(p *Properties, v []byte) bool {
				h, ok := decodeHandle(v)
				p.RangeFilterBlock = h
				return ok
			},
		},
	}
	for i := range codecs {
		codecs[i].omit = noRangeFilter
	}
	return codecs
}()

// noRangeFilter reports whether the table p describes has no range filter.
func noRangeFilter(p *Properties) bool { return p.RangeFilterBlock.Length == 0 }

// rangeFilterString renders the range-filter line of Properties.String;
// empty for a table without one, whose properties print as before range
// filters.
func (p *Properties) rangeFilterString() string {
	if p.RangeFilterBlock.Length == 0 {
		return ""
	}
	return fmt.Sprintf("range filter: %v, %d bytes, %d keys, %.2f bits/key\n", p.RangeFilterFamily, p.RangeFilterBlock.Length, p.RangeFilterKeys, p.RangeFilterBitsPer)
}
