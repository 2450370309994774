package blob

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/bloomkv/bloomkv/internal/compress"
	"github.com/bloomkv/bloomkv/internal/golden"
)

// goldenValues are the values of the golden blob files: of lengths from 0
// to 5000 (with 1- and 2-byte length uvarints), a tenth of their bytes
// random and the rest a pattern, which compress but for the shortest; then
// the same lengths all random, which do not.
func goldenValues() [][]byte {
	rng := rand.New(rand.NewPCG(57, 57))
	var values [][]byte
	for _, share := range []int{10, 1} {
		for _, n := range []int{0, 1, 100, 127, 128, 1000, 5000} {
			v := make([]byte, n)
			for j := range v {
				v[j] = 'a' + byte(j%7)
				if j%share == 0 {
					v[j] = byte(rng.Uint32())
				}
			}
			values = append(values, v)
		}
	}
	return values
}

// TestGoldenFiles pins the bytes the writer produces: the same values
// written with each compression are byte for byte the files in
// testdata/golden-*.blob, which read back every value. A zstd record is a
// frame without zstd's content checksum (the record's covers it), and a
// value that does not shrink by an eighth is stored as given: each file
// with a compression has both kinds of record. A new version of the
// compression library that encodes differently fails here; rewrite the
// files (go test -run TestGoldenFiles -update) only after checking that
// the old ones still read.
func TestGoldenFiles(t *testing.T) {
	values := goldenValues()
	for _, c := range compressions {
		t.Run(c.String(), func(t *testing.T) {
			file, handles := writeFile(t, values, c)
			path := filepath.Join("testdata", "golden-"+c.String()+".blob")
			golden.Check(t, path, file)
			r, err := Open(bytes.NewReader(file), int64(len(file)), "000007.blob")
			if err != nil {
				t.Fatal(err)
			}
			stored := map[compress.Codec]int{}
			for i, h := range handles {
				if got, err := r.ReadValue(nil, h.Offset, h.Length); err != nil || !bytes.Equal(got, values[i]) {
					t.Fatalf("%s: value %d: %v (differs: %v)", path, i, err, err == nil)
				}
				s, sc, err := r.ReadStored(nil, h.Offset, h.Length)
				if err != nil {
					t.Fatal(err)
				}
				stored[sc]++
				// The frame header descriptor's bit 2: zstd's checksum.
				if sc == compress.Zstd && s[4]&0x04 != 0 {
					t.Fatalf("%s: the zstd record at %d has a content checksum", path, h.Offset)
				}
			}
			if c != compress.None && (stored[c] == 0 || stored[compress.None] == 0) {
				t.Fatalf("%s: records stored as %v; want some %v and some none", path, stored, c)
			}
		})
	}
}
