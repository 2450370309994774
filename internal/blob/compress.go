package blob

import (
	"fmt"
	"slices"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
)

var (
	// zstdEncoder writes frames without zstd's own checksum: the record's
	// covers them.
	zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(false))
		if err != nil {
			panic(err) // only invalid options fail, and these are constant
		}
		return e
	})
	zstdDecoder = sync.OnceValue(func() *zstd.Decoder {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(MaxValueLen))
		if err != nil {
			panic(err)
		}
		return d
	})
)

// compress returns the bytes to store for value and how they are stored:
// compressed with c when that saves at least an eighth (len(value)/8,
// rounded down, as the tables' blocks decide), as given otherwise, and
// an empty value as given. The compressor writes into scratch when it is large enough;
// the buffer it wrote into is returned, kept or not, for the next value.
func compress(c Compression, value, scratch []byte) (stored []byte, used Compression, buf []byte) {
	var out []byte
	switch c {
	case SnappyCompression:
		// s2's snappy encoder, as the tables' blocks use: snappy's format,
		// faster than snappy.Encode.
		out = s2.EncodeSnappy(scratch[:cap(scratch)], value)
	case ZstdCompression:
		out = zstdEncoder().EncodeAll(value, scratch[:0])
	default:
		return value, NoCompression, scratch
	}
	if len(value) == 0 || len(out) > len(value)-len(value)/8 {
		return value, NoCompression, out
	}
	return out, c, out
}

// decompress appends to dst the value stored as c and returns the
// extended slice. A value that claims more than MaxValueLen bytes, and
// stored bytes that do not decode, are errors.
func decompress(dst []byte, c Compression, stored []byte) ([]byte, error) {
	switch c {
	case NoCompression:
		return append(dst, stored...), nil
	case SnappyCompression:
		n, err := snappy.DecodedLen(stored)
		if err != nil {
			return dst, err
		}
		if n > MaxValueLen {
			return dst, fmt.Errorf("snappy value claims %d bytes, more than %d", n, MaxValueLen)
		}
		dst = slices.Grow(dst, n)
		v, err := snappy.Decode(dst[len(dst):len(dst)+n], stored)
		if err != nil {
			return dst, err
		}
		return dst[:len(dst)+len(v)], nil
	case ZstdCompression:
		var h zstd.Header
		if err := h.Decode(stored); err != nil {
			return dst, err
		}
		if h.HasFCS {
			if h.FrameContentSize > MaxValueLen {
				return dst, fmt.Errorf("zstd value claims %d bytes, more than %d", h.FrameContentSize, MaxValueLen)
			}
			dst = slices.Grow(dst, int(h.FrameContentSize))
		}
		return zstdDecoder().DecodeAll(stored, dst)
	}
	return dst, fmt.Errorf("unknown compression %d", uint8(c))
}
