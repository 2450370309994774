package rangefilter

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"math/bits"
)

// FormatVersion is the version of the serialized range filter format this package
// writes, and the one it reads.
const FormatVersion = formatVersion

// The serialized format; the package doc draws it.
const (
	magic         = "RNGF"
	formatVersion = 1
	headerLen     = 72
	checksumLen   = 4
	// Offsets of the header's fields.
	offVersion   = 4
	offLowBits   = 5
	offPositions = 6
	offSeed      = 8
	offKeys      = 16
	offValues    = 24
	offElements  = 32
	offUniverse  = 40
	offMin       = 48
	offSpan      = 56
	offPrefixLen = 64
	offHeaderCRC = 68
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func pad8(n uint64) uint64 { return (n + 7) &^ 7 }

// header is the fixed-size start of a serialized filter.
type header struct {
	lowBits   uint
	positions uint64
	seed      uint64
	keys      uint64 // distinct keys built from
	values    uint64 // distinct mapped values
	elements  uint64 // distinct hashes: the Elias–Fano set's size
	universe  uint64
	min, span uint64
	prefixLen uint64
}

func (h *header) buckets() uint64 { return (h.universe-1)>>h.lowBits + 1 }

// The body's sections, in order, and their lengths.
func (h *header) prefixSection() uint64 { return pad8(h.prefixLen) }
func (h *header) alphaSection() uint64  { return 32 * h.positions }
func (h *header) endsSection() uint64   { return 8 * ((h.positions + 63) / 64) }
func (h *header) bodyLen() uint64 {
	return h.prefixSection() + h.alphaSection() + h.endsSection() +
		lowLen(h.elements, h.lowBits) + highLen(h.elements, h.buckets()) + samplesLen(h.buckets())
}

// appendFilter appends the encoding of a built filter to dst.
func appendFilter(dst []byte, keys, values uint64, km *keyMap, f *intFilter) []byte {
	h := header{
		lowBits: f.ef.l, positions: uint64(km.p), seed: f.seed, keys: keys, values: values,
		elements: f.ef.m, universe: f.r, min: f.min, span: f.span, prefixLen: uint64(len(km.prefix)),
	}
	start := len(dst)
	dst = append(dst, magic...)
	dst = append(dst, formatVersion, byte(h.lowBits))
	dst = binary.LittleEndian.AppendUint16(dst, uint16(h.positions))
	for _, v := range []uint64{h.seed, h.keys, h.values, h.elements, h.universe, h.min, h.span} {
		dst = binary.LittleEndian.AppendUint64(dst, v)
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.prefixLen))
	dst = binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
	body := len(dst)
	dst = append(dst, km.prefix...)
	dst = append(dst, make([]byte, h.prefixSection()-h.prefixLen)...)
	dst = append(dst, km.alpha...)
	dst = append(dst, km.ends...)
	dst = append(dst, f.ef.low...)
	dst = append(dst, f.ef.high...)
	dst = append(dst, f.ef.samples...)
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[body:], castagnoli))
}

// parseHeader decodes and validates a header: every field, and every value
// derived from them, before anything past the header is read.
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
	u64 := func(off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
	h := header{
		lowBits:   uint(b[offLowBits]),
		positions: uint64(binary.LittleEndian.Uint16(b[offPositions:])),
		seed:      u64(offSeed),
		keys:      u64(offKeys),
		values:    u64(offValues),
		elements:  u64(offElements),
		universe:  u64(offUniverse),
		min:       u64(offMin),
		span:      u64(offSpan),
		prefixLen: uint64(binary.LittleEndian.Uint32(b[offPrefixLen:])),
	}
	switch {
	case h.positions > maxPositions:
		return header{}, corruptAt(offPositions, "%d positions, more than %d", h.positions, maxPositions)
	case h.keys == 0 || h.keys > MaxKeys:
		return header{}, corruptAt(offKeys, "%d keys, want 1 to %d", h.keys, MaxKeys)
	case h.values == 0 || h.values > h.keys:
		return header{}, corruptAt(offValues, "%d distinct values of %d keys", h.values, h.keys)
	case h.elements == 0 || h.elements > h.values:
		return header{}, corruptAt(offElements, "%d hashes of %d values", h.elements, h.values)
	case h.min > math.MaxUint64-h.span:
		return header{}, corruptAt(offSpan, "values %d to %d+%d, past 2^64", h.min, h.min, h.span)
	case h.span < h.values-1:
		return header{}, corruptAt(offSpan, "%d distinct values in a span of %d", h.values, h.span)
	case h.universe < h.values || h.universe > maxUniverse || h.universe-1 > h.span:
		return header{}, corruptAt(offUniverse, "universe %d, want %d to min(span+1, 2^63) for a span of %d", h.universe, h.values, h.span)
	case h.lowBits != lowBits(h.universe, h.elements):
		return header{}, corruptAt(offLowBits, "%d low bits, want %d for %d hashes below %d",
			h.lowBits, lowBits(h.universe, h.elements), h.elements, h.universe)
	}
	return h, nil
}

// decode validates a whole serialized filter and returns the view of it:
// the header, then every section, its padding and its structure, all
// before any query reads it. It allocates nothing.
func decode(data []byte, flt *Filter) error {
	h, err := parseHeader(data)
	if err != nil {
		return err
	}
	// Every length is below 2^40 for valid fields: no overflow.
	if want := headerLen + h.bodyLen() + checksumLen; uint64(len(data)) != want {
		return corruptf("%d bytes, want %d for these header fields", len(data), want)
	}
	end := uint64(len(data)) - checksumLen
	body := data[headerLen:end]
	if got, want := binary.LittleEndian.Uint32(data[end:]), crc32.Checksum(body, castagnoli); got != want {
		return corruptAt(end, "body checksum %#08x, but the body sums to %#08x", got, want)
	}
	off := uint64(headerLen)
	section := func(n uint64) []byte {
		s := data[off : off+n : off+n]
		off += n
		return s
	}
	prefix := section(h.prefixSection())
	for i := h.prefixLen; i < uint64(len(prefix)); i++ {
		if prefix[i] != 0 {
			return corruptAt(headerLen+i, "prefix padding byte is %#x, not 0", prefix[i])
		}
	}
	km := &flt.km
	*km = keyMap{prefix: prefix[:h.prefixLen], p: int(h.positions)}
	alphaOff := off
	km.alpha = section(h.alphaSection())
	endsOff := off
	km.ends = section(h.endsSection())
	if r := h.positions % 64; r != 0 {
		last := uint64(len(km.ends)/8 - 1)
		if extra := word(km.ends, last) >> r; extra != 0 {
			return corruptAt(endsOff+8*last, "end marks past the %d positions: %#x", h.positions, extra)
		}
	}
	for i := range km.p {
		r := km.end(i)
		for j := range uint64(4) {
			r += uint64(bits.OnesCount64(word(km.alpha, 4*uint64(i)+j)))
		}
		last, ok := growProduct(km.last, r)
		if !ok {
			return corruptAt(alphaOff+32*uint64(i), "position %d has %d symbols: the mapping's values pass 2^64 or it has none", i, r)
		}
		km.radix[i] = uint16(r)
		km.last = last
	}
	trailing := 0
	for trailing < km.p && km.radix[km.p-1-trailing] == 1 {
		trailing++
	}
	if trailing > maxTrailing {
		return corruptAt(alphaOff+32*uint64(km.p-trailing), "%d positions of one symbol at the end, more than %d", trailing, maxTrailing)
	}
	km.countBelow()
	if h.min+h.span > km.last {
		return corruptAt(offSpan, "values up to %d, the mapping's are at most %d", h.min+h.span, km.last)
	}
	f := &flt.f
	*f = intFilter{seed: h.seed, r: h.universe, min: h.min, span: h.span}
	e := &f.ef
	*e = eliasFano{l: h.lowBits, m: h.elements, buckets: h.buckets()}
	lowOff := off
	e.low = section(lowLen(e.m, e.l))
	highOff := off
	e.high = section(highLen(e.m, e.buckets))
	samplesOff := off
	e.samples = section(samplesLen(e.buckets))
	if err := checkEliasFano(e, lowOff, highOff, samplesOff); err != nil {
		return err
	}
	flt.keys, flt.values, flt.data = h.keys, h.values, data
	return nil
}

// checkEliasFano checks what the queries rely on (see eliasFano's
// INVARIANT); the offsets locate the sections for the errors.
func checkEliasFano(e *eliasFano, lowOff, highOff, samplesOff uint64) error {
	used := e.m * uint64(e.l)
	if w := used / 64; used%64 != 0 {
		if spare := word(e.low, w) >> (used % 64); spare != 0 {
			return corruptAt(lowOff+8*w, "the bits after the last low part are %#x, not 0", spare)
		}
	}
	for w := (used + 63) / 64; w < uint64(len(e.low)/8); w++ {
		if x := word(e.low, w); x != 0 {
			return corruptAt(lowOff+8*w, "low-bits padding word is %#x, not 0", x)
		}
	}
	n := e.m + e.buckets
	words := uint64(len(e.high) / 8)
	if r := n % 64; r != 0 {
		if spare := word(e.high, words-1) >> r; spare != 0 {
			return corruptAt(highOff+8*(words-1), "the bits after the high bits are %#x, not 0", spare)
		}
	}
	if e.highBit(n - 1) {
		return corruptAt(highOff+8*((n-1)/64), "the high bits end in a one, not the last bucket's end")
	}
	// Count the ones, and check each sample against the zero it names.
	ones, zeros := uint64(0), uint64(0)
	for w := range words {
		x := word(e.high, w)
		z := ^x
		if w == words-1 && n%64 != 0 {
			z &= 1<<(n%64) - 1
		}
		c := uint64(bits.OnesCount64(z))
		for next := (zeros + sampleRate - 1) / sampleRate * sampleRate; next < zeros+c; next += sampleRate {
			want := 64*w + selectInWord(z, next-zeros)
			j := next / sampleRate
			if got := uint64(binaryUint32(e.samples, j)); got != want {
				return corruptAt(samplesOff+4*j, "select sample %d is %d, zero number %d is at %d", j, got, next, want)
			}
		}
		zeros += c
		ones += uint64(bits.OnesCount64(x))
	}
	if ones != e.m {
		return corruptAt(highOff, "the high bits have %d ones for %d hashes", ones, e.m)
	}
	for j := (e.buckets + sampleRate - 1) / sampleRate; 4*j < uint64(len(e.samples)); j++ {
		if s := binaryUint32(e.samples, j); s != 0 {
			return corruptAt(samplesOff+4*j, "samples padding is %#x, not 0", s)
		}
	}
	return nil
}

func binaryUint32(b []byte, i uint64) uint32 { return binary.LittleEndian.Uint32(b[4*i:]) }
