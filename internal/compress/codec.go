package compress

import "fmt"

// Codec is how a block is stored. Its values are the bytes the formats
// write (a table's block trailer, a blob record's compression byte), so
// they never change.
type Codec uint8

// The codecs.
const (
	None   Codec = 0
	Snappy Codec = 1
	Zstd   Codec = 2
)

// Known reports whether c is a codec this version reads: a byte past Zstd
// is a newer writer's, or damage.
func (c Codec) Known() bool { return c <= Zstd }

// String returns the codec's name, as the tools print it: "none",
// "snappy", "zstd", or "compression(N)" for an unknown byte N.
func (c Codec) String() string {
	switch c {
	case None:
		return "none"
	case Snappy:
		return "snappy"
	case Zstd:
		return "zstd"
	}
	return fmt.Sprintf("compression(%d)", uint8(c))
}
