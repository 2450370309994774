package bloom

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sync/atomic"
)

// Kind names the kind of filter a serialized filter holds. Its values are
// part of the serialized format.
type Kind uint8

// The kinds of filter.
const (
	KindClassic  Kind = 1
	KindBlocked  Kind = 2
	KindCounting Kind = 3
)

func (k Kind) String() string {
	switch k {
	case KindClassic:
		return "classic"
	case KindBlocked:
		return "blocked"
	case KindCounting:
		return "counting"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// The serialized format; the package doc draws it. Version 2 differs from
// version 1 only in byte 7, which holds a counting filter's counter width;
// it is written for counting filters of 8- or 16-bit counters, and version
// 1 for every other filter, so that each filter has one encoding and the
// filters version 1 could express are written as they always were.
const (
	magic         = "BLMF"
	formatVersion = 1 // classic, blocked, and counting of 4-bit counters
	widthVersion  = 2 // counting of 8- or 16-bit counters
	headerLen     = 36
	checksumLen   = 4
)

// FormatVersion is the newest version of the serialized filter format
// this package writes and reads; it reads every version from 1 up to it.
const FormatVersion = widthVersion

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header is the fixed-size start of a serialized filter.
type header struct {
	kind Kind
	k    int    // probes per item
	m    uint64 // bits (classic, blocked) or counters (counting)
	n    uint64 // items: sized for (classic, counting) or added (blocked)
	// counterBits is a counting filter's counter width, 4, 8 or 16; 0 for
	// the other kinds.
	counterBits int
}

// payloadWords is the number of 64-bit words of the filter's payload.
func (h header) payloadWords() uint64 { return payloadWords(h.kind, h.m, h.counterBits) }

// payloadWords is the number of 64-bit words of a filter of kind and size
// m: m bits (classic, blocked) or m counters of counterBits bits
// (counting).
func payloadWords(kind Kind, m uint64, counterBits int) uint64 {
	if kind == KindCounting {
		perWord := uint64(64 / counterBits)
		return (m + perWord - 1) / perWord
	}
	return (m + 63) / 64
}

// versionAndWidth returns the header's bytes 4 and 7: the format version,
// and 0 or, in version 2, the counter width.
func (h header) versionAndWidth() (byte, byte) {
	if h.kind == KindCounting && h.counterBits != DefaultCounterBits {
		return widthVersion, byte(h.counterBits)
	}
	return formatVersion, 0
}

func (h header) appendTo(dst []byte) []byte {
	start := len(dst)
	version, width := h.versionAndWidth()
	dst = append(dst, magic...)
	dst = append(dst, version, byte(h.kind), byte(h.k), width)
	dst = binary.LittleEndian.AppendUint64(dst, h.m)
	dst = binary.LittleEndian.AppendUint64(dst, h.n)
	dst = binary.LittleEndian.AppendUint64(dst, h.payloadWords()*8)
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// parseHeader decodes and validates a header, so that nothing is allocated
// for a payload whose size a damaged header made up, nor for one larger
// than a platform whose largest int is maxInt can hold (a filter encoded on
// a 64-bit platform may be too large for a 32-bit one).
func parseHeader(b []byte, want Kind, maxInt uint64) (header, error) {
	if len(b) < headerLen {
		return header{}, corruptf("%d bytes, shorter than the %d-byte header", len(b), headerLen)
	}
	if string(b[:4]) != magic {
		return header{}, corruptf("bad magic %q", b[:4])
	}
	if sum := binary.LittleEndian.Uint32(b[32:]); sum != crc32.Checksum(b[:32], castagnoli) {
		return header{}, corruptf("header checksum mismatch")
	}
	if b[4] != formatVersion && b[4] != widthVersion {
		return header{}, corruptf("format version %d, this package reads %d and %d", b[4], formatVersion, widthVersion)
	}
	h := header{
		kind: Kind(b[5]),
		k:    int(b[6]),
		m:    binary.LittleEndian.Uint64(b[8:]),
		n:    binary.LittleEndian.Uint64(b[16:]),
	}
	if h.kind != want {
		return header{}, corruptf("holds a %v filter, not a %v filter", h.kind, want)
	}
	switch {
	case b[4] == formatVersion && b[7] != 0:
		return header{}, corruptf("reserved byte is %#x, not 0", b[7])
	case b[4] == widthVersion && h.kind != KindCounting:
		return header{}, corruptf("format version %d encodes only counting filters, not a %v filter", widthVersion, h.kind)
	case b[4] == widthVersion && (b[7] != 8 && b[7] != 16):
		return header{}, corruptf("counter width %d bits in format version %d, want 8 or 16", b[7], widthVersion)
	case h.kind == KindCounting && b[4] == formatVersion:
		h.counterBits = DefaultCounterBits
	case h.kind == KindCounting:
		h.counterBits = int(b[7])
	}
	maxK := MaxProbes
	if h.kind == KindBlocked {
		maxK = MaxBlockedProbes
		if h.m%blockBits != 0 {
			return header{}, corruptf("blocked filter of %d bits, not a multiple of %d", h.m, blockBits)
		}
	}
	if h.k < 1 || h.k > maxK {
		return header{}, corruptf("%d probes, outside [1, %d]", h.k, maxK)
	}
	if h.m < 1 || h.m > MaxBits {
		return header{}, corruptf("size %d outside [1, %d]", h.m, uint64(MaxBits))
	}
	if got := binary.LittleEndian.Uint64(b[24:]); got != h.payloadWords()*8 {
		return header{}, corruptf("payload length %d, want %d for size %d", got, h.payloadWords()*8, h.m)
	}
	if why := tooLarge(h.payloadWords(), maxInt); why != "" {
		return header{}, corruptf("%v filter of size %d: %s", h.kind, h.m, why)
	}
	return h, nil
}

// encode writes the header, the words (big-endian, read atomically so that
// concurrent adders are safe) and the payload checksum to w.
func encode(w io.Writer, h header, words []uint64) (int64, error) {
	var buf [4096]byte
	n, err := w.Write(h.appendTo(buf[:0]))
	total := int64(n)
	if err != nil {
		return total, err
	}
	crc := uint32(0)
	for len(words) > 0 {
		chunk := buf[:0]
		for len(words) > 0 && len(chunk) < len(buf) {
			chunk = binary.BigEndian.AppendUint64(chunk, atomic.LoadUint64(&words[0]))
			words = words[1:]
		}
		crc = crc32.Update(crc, castagnoli, chunk)
		n, err = w.Write(chunk)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	n, err = w.Write(binary.LittleEndian.AppendUint32(buf[:0], crc))
	return total + int64(n), err
}

// marshal is encode into a byte slice of the exact size.
func marshal(h header, words []uint64) []byte {
	out := &sliceWriter{b: make([]byte, 0, headerLen+len(words)*8+checksumLen)}
	encode(out, h, words) // a sliceWriter never fails
	return out.b
}

type sliceWriter struct{ b []byte }

func (s *sliceWriter) Write(p []byte) (int, error) { s.b = append(s.b, p...); return len(p), nil }

// decode parses a whole serialized filter of kind want.
func decode(data []byte, want Kind) (header, []uint64, error) {
	return decodeInto(data, want, alignedWords)
}

// decodeInto is decode storing the words in alloc(n), called once the
// header and length are checked.
func decodeInto(data []byte, want Kind, alloc func(n int) []uint64) (header, []uint64, error) {
	h, err := parseHeader(data, want, platformMaxInt)
	if err != nil {
		return header{}, nil, err
	}
	size := headerLen + h.payloadWords()*8 + checksumLen
	if uint64(len(data)) != size {
		return header{}, nil, corruptf("%d bytes, want %d for a %v filter of size %d", len(data), size, h.kind, h.m)
	}
	words, err := decodePayload(data[headerLen:], h, alloc)
	return h, words, err
}

// readFrom reads one serialized filter of kind want from r, reading no byte
// past its end. It grows its buffer as data arrives, so a stream cut short
// fails before the full claimed size is allocated.
func readFrom(r io.Reader, want Kind) (header, []uint64, int64, error) {
	var hb [headerLen]byte
	n, err := io.ReadFull(r, hb[:])
	if err != nil {
		return header{}, nil, int64(n), truncated(err)
	}
	h, err := parseHeader(hb[:], want, platformMaxInt)
	if err != nil {
		return header{}, nil, int64(n), err
	}
	rest := h.payloadWords()*8 + checksumLen
	const chunk = 1 << 20
	buf := make([]byte, 0, min(rest, chunk))
	for uint64(len(buf)) < rest {
		step := min(rest-uint64(len(buf)), max(chunk, uint64(len(buf))))
		buf = append(buf, make([]byte, step)...)
		got, err := io.ReadFull(r, buf[uint64(len(buf))-step:])
		n += got
		if err != nil {
			return header{}, nil, int64(n), truncated(err)
		}
	}
	words, err := decodePayload(buf, h, alignedWords)
	return h, words, int64(n), err
}

func truncated(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return corruptf("truncated")
	}
	return err
}

// decodePayload checks the payload's checksum and converts it to words laid
// out on a cache-line boundary.
func decodePayload(b []byte, h header, alloc func(n int) []uint64) ([]uint64, error) {
	payload := b[:h.payloadWords()*8]
	want := binary.LittleEndian.Uint32(b[len(payload):])
	if got := crc32.Checksum(payload, castagnoli); got != want {
		return nil, corruptf("payload checksum %#08x, want %#08x", got, want)
	}
	words := alloc(int(h.payloadWords()))
	if len(words) != int(h.payloadWords()) {
		return nil, &ArgumentError{Arg: "alloc", Value: len(words), Reason: fmt.Sprintf("returned that many words, want %d", h.payloadWords())}
	}
	for i := range words {
		words[i] = binary.BigEndian.Uint64(payload[i*8:])
	}
	return words, nil
}
