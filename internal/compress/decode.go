package compress

import (
	"fmt"
	"slices"
	"sync"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
)

// Decoder decompresses blocks of at most a bound. Make one with
// NewDecoder; it is safe for concurrent use.
type Decoder struct {
	bound int
	zstd  func() *zstd.Decoder
}

// NewDecoder returns a Decoder of blocks that decode to at most bound
// bytes: a block that claims more (snappy's header, zstd's frame content
// size) is an error before anything is allocated for it, a zstd frame
// that does not claim its size stops decoding at bound, and one whose
// window is past bound is an error (bound is then at least zstd's least
// window, 1 KiB, for its frames to read). Its zstd state is made at its
// first zstd block.
func NewDecoder(bound int) *Decoder {
	return &Decoder{bound: bound, zstd: sync.OnceValue(func() *zstd.Decoder {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(uint64(bound)))
		if err != nil {
			panic(err) // only invalid options fail, and these are constant
		}
		return d
	})}
}

// Decode returns the contents of src, a block stored with c. A stored
// block (None) is src itself, not copied: the caller copies it when it
// must outlive src. A compressed one is appended to dst, in dst's memory
// when it has room. A block that does not decode, claims more than the
// Decoder's bound, or has an unknown codec is an error, with nil.
func (d *Decoder) Decode(dst, src []byte, c Codec) ([]byte, error) {
	switch c {
	case None:
		return src, nil
	case Snappy:
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return nil, err
		}
		if n > d.bound {
			return nil, fmt.Errorf("snappy claims %d bytes, more than %d", n, d.bound)
		}
		dst = slices.Grow(dst, n)
		v, err := snappy.Decode(dst[len(dst):len(dst)+n], src)
		if err != nil {
			return nil, err
		}
		return dst[:len(dst)+len(v)], nil
	case Zstd:
		var h zstd.Header
		if err := h.Decode(src); err != nil {
			return nil, err
		}
		if h.HasFCS && h.FrameContentSize > uint64(d.bound) {
			return nil, fmt.Errorf("zstd claims %d bytes, more than %d", h.FrameContentSize, d.bound)
		}
		out, err := d.zstd().DecodeAll(src, dst)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown compression %d", uint8(c))
}
