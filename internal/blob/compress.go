package blob

import "github.com/bloomkv/bloomkv/internal/compress"

var (
	// valueEncoder writes zstd frames without zstd's own checksum: the
	// record's covers them.
	valueEncoder = compress.NewEncoder(false)
	// valueDecoder refuses a value that claims or decodes to more than
	// MaxValueLen bytes.
	valueDecoder = compress.NewDecoder(MaxValueLen)
)
