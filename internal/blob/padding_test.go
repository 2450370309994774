package blob

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/bloomkv/bloomkv/internal/compress"
	"github.com/bloomkv/bloomkv/internal/golden"
)

// TestPadding checks version 3's layout against its rule, worked out again
// from where each record's predecessor ended: a record of at most a page
// that would cross a page boundary starts at the boundary when that skips
// from minPadding to maxPadding bytes, and at its predecessor's end
// otherwise. Every value reads back, Scan skips the padding, and a bit
// flipped in a padding record is corruption to Scan.
func TestPadding(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range compressions {
		t.Run(c.String(), func(t *testing.T) {
			values := randomValues(rng, 120, 3000)
			file, handles := writeFile(t, values, c)
			r, err := Open(bytes.NewReader(file), int64(len(file)), "000007.blob")
			if err != nil {
				t.Fatal(err)
			}
			var end uint64 // where the previous record ended
			var padding []int
			crossed, crossable := 0, 0
			for i, h := range handles {
				recLen := r.RecordLen(h.Length)
				var want uint64
				if rest := pageSize - end%pageSize; end%pageSize+recLen > pageSize && recLen <= pageSize {
					crossable++
					if rest >= 6 && rest <= 1024 {
						want = rest
					}
				}
				if h.Offset != end+want {
					t.Fatalf("value %d (record of %d bytes) at %d after a record ending at %d, want %d",
						i, recLen, h.Offset, end, end+want)
				}
				for p := end; p < h.Offset; p++ {
					// Every byte of the padding's headers, every 11th of
					// its zeros (all of them take a minute).
					if p < end+minPadding+1 || p%11 == 0 {
						padding = append(padding, int(p))
					}
				}
				if recLen <= pageSize && h.Offset/pageSize != (h.Offset+recLen-1)/pageSize {
					crossed++
				}
				if got, err := r.ReadValue(nil, h.Offset, h.Length); err != nil || !bytes.Equal(got, values[i]) {
					t.Fatalf("value %d: %v (differs: %v)", i, err, err == nil)
				}
				end = h.Offset + recLen
			}
			if end != uint64(len(file)-FooterLen) {
				t.Fatalf("the records end at %d, the footer starts at %d", end, len(file)-FooterLen)
			}
			if len(padding) == 0 || crossed >= crossable {
				t.Fatalf("padding checked at %d bytes, %d of %d records crossing: want some padded", len(padding), crossed, crossable)
			}
			checkBitFlips(t, file, handles, values, padding)
		})
	}
}

// TestPadding134 writes the gap no one padding record fills: two fill it.
// The file is testdata/golden-padded.blob, a file of version 3, as is
// TestGoldenFiles' golden-snappy.blob; its golden-none.blob and
// golden-zstd.blob need no padding: version 2.
func TestPadding134(t *testing.T) {
	first := bytes.Repeat([]byte{'a'}, 3955) // a record of 4+2+1+3955 = 3962 bytes
	second := bytes.Repeat([]byte{'b'}, 1000)
	file, handles := writeFile(t, [][]byte{first, second}, compress.None)
	golden.Check(t, filepath.Join("testdata", "golden-padded.blob"), file)
	if handles[1].Offset != pageSize {
		t.Fatalf("the second record at %d, want %d", handles[1].Offset, pageSize)
	}
	// 3962: a padding record storing nothing (6 bytes); 3968: one storing
	// 122 zeros (128 bytes).
	for _, p := range []struct{ off, stored int }{{3962, 0}, {3968, 122}} {
		rec := file[p.off : p.off+minPadding+p.stored]
		if rec[4] != byte(p.stored) || rec[5] != paddingCodec || binary.LittleEndian.Uint32(rec) != crcOf(rec[crcLen:]) {
			t.Fatalf("padding record at %d: % x", p.off, rec[:minPadding])
		}
	}
	r, err := Open(bytes.NewReader(file), int64(len(file)), "000007.blob")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := r.Scan(func(rec Record) error {
		if want := [][]byte{first, second}[n]; rec.Offset != handles[n].Offset || !bytes.Equal(rec.Value, want) {
			t.Fatalf("Scan: record %d at %d differs", n, rec.Offset)
		}
		n++
		return nil
	}); err != nil || n != 2 {
		t.Fatalf("Scan: %d records, %v", n, err)
	}
}

// crcOf is CRC-32C, the test's own table.
func crcOf(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }
