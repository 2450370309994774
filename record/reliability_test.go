package record

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

// TestFlippedLengthIsCorruption is the regression test of a bug the DB's
// bit-flip test (TestCorruptionBitFlips) found: a flipped bit in the length
// of a chunk in the middle of a log, which the CRC does not cover, made the
// chunk look as if it ran past the end of the file, or fail its checksum
// with a wrong end, and the search for valid data after it started at that
// wrong end, found nothing, and declared a torn tail: every later record,
// synced and acknowledged, was silently dropped. Every bit of the length of
// every record but the last must now give ErrCorruption; a flip in the last
// record's length still reads as a torn tail of that record alone.
func TestFlippedLengthIsCorruption(t *testing.T) {
	wl := writeLog(t, sized(41, 300, 120, 700, 50, 400, 90))
	for i, off := range wl.offsets {
		for bit := range 16 {
			b := slices.Clone(wl.log)
			b[off+4+int64(bit/8)] ^= 1 << (bit % 8)
			res := readLog(t, bytes.NewReader(b))
			last := i == len(wl.offsets)-1
			switch {
			case !last && !errors.Is(res.err, base.ErrCorruption):
				t.Errorf("record %d, length bit %d: end %v after %d records; want ErrCorruption", i, bit, res.err, len(res.records))
			case last && (res.err != io.EOF || len(res.records) != i):
				t.Errorf("last record, length bit %d: end %v after %d records; want io.EOF after %d", bit, res.err, len(res.records), i)
			}
		}
	}
}
