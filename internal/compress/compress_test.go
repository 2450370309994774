package compress

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/race"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

func TestCodecNames(t *testing.T) {
	for _, tc := range []struct {
		c     Codec
		name  string
		known bool
	}{
		{None, "none", true},
		{Snappy, "snappy", true},
		{Zstd, "zstd", true},
		{3, "compression(3)", false},
		{255, "compression(255)", false},
	} {
		if got := tc.c.String(); got != tc.name || tc.c.Known() != tc.known {
			t.Errorf("Codec(%d): %q, known %v; want %q, %v", uint8(tc.c), got, tc.c.Known(), tc.name, tc.known)
		}
	}
	// The values are the formats' bytes.
	if None != 0 || Snappy != 1 || Zstd != 2 {
		t.Errorf("codec bytes %d %d %d, want 0 1 2", None, Snappy, Zstd)
	}
}

// inputs are blocks from empty to 64 KiB, from all one byte to all random
// (a share of their bytes random, the rest a pattern): some shrink by far
// more than an eighth, some by less, some not at all.
func inputs() [][]byte {
	rng := rand.New(rand.NewPCG(7, 7))
	out := [][]byte{nil, {}, {'x'}, []byte("abcd"), bytes.Repeat([]byte{0}, 5000)}
	for _, n := range []int{10, 100, 1000, 4096, 65536} {
		for _, share := range []float64{0, 0.3, 0.6, 0.8, 0.9, 1} {
			v := make([]byte, n)
			for j := range v {
				if rng.Float64() < share {
					v[j] = byte(rng.Uint32())
				} else {
					v[j] = "compress "[j%9]
				}
			}
			out = append(out, v)
		}
	}
	return out
}

// oracleEncode is how src is stored under c, computed with s2's snappy
// encoder and zs, a zstd encoder of the test's own: the compressor's
// output if it saves at least len/8 (rounded down) of a src not empty, src
// otherwise.
func oracleEncode(c Codec, zs *zstd.Encoder, src []byte) ([]byte, Codec) {
	var out []byte
	switch c {
	case Snappy:
		out = s2.EncodeSnappy(nil, src)
	case Zstd:
		out = zs.EncodeAll(src, nil)
	default:
		return src, None
	}
	if len(src) == 0 || len(out) > len(src)-len(src)/8 {
		return src, None
	}
	return out, c
}

// TestEncode checks every codec, with and without zstd's checksum, on
// inputs of every size and compressibility against oracleEncode: the same
// bytes and codec, a zstd frame's checksum flag as asked, the result
// decoding to the input, and scratch used when it is large enough.
func TestEncode(t *testing.T) {
	for _, checksum := range []bool{false, true} {
		e := NewEncoder(checksum)
		zs, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(checksum))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []Codec{None, Snappy, Zstd, 3} {
			kept := map[Codec]int{}
			for i, src := range inputs() {
				stored, used, buf := e.Encode(c, src, nil)
				want, wantCodec := oracleEncode(c, zs, src)
				if used != wantCodec || !bytes.Equal(stored, want) {
					t.Fatalf("%v (checksum %v) input %d of %d bytes: stored %d bytes as %v, want %d as %v",
						c, checksum, i, len(src), len(stored), used, len(want), wantCodec)
				}
				kept[used]++
				if used == None && len(src) > 0 && &stored[0] != &src[0] {
					t.Fatalf("%v input %d: stored as given, but copied", c, i)
				}
				if used == Zstd {
					// The frame header descriptor's bit 2: zstd's checksum.
					if got := stored[4]&0x04 != 0; got != checksum {
						t.Fatalf("input %d: zstd frame checksum %v, want %v", i, got, checksum)
					}
				}
				// buf is the compressor's output, for the next call:
				// given back, it is written into rather than a new one.
				if c == Snappy || c == Zstd {
					scratch := buf[:cap(buf)]
					if cap(scratch) < s2.MaxEncodedLen(len(src)) {
						scratch = make([]byte, s2.MaxEncodedLen(len(src))+64)
					}
					again, againCodec, buf2 := e.Encode(c, src, scratch)
					if againCodec != used || !bytes.Equal(again, stored) || len(buf2) == 0 && len(src) > 0 || len(buf2) > 0 && &buf2[0] != &scratch[0] {
						t.Fatalf("%v input %d: encoding into scratch differs or does not use it", c, i)
					}
				}
			}
			if c == Snappy || c == Zstd {
				if kept[c] == 0 || kept[None] == 0 {
					t.Fatalf("%v: stored %v; want inputs both compressed and not", c, kept)
				}
			}
		}
	}
}

// TestDecode round-trips every input under every codec through one
// Decoder, whichever checksum the zstd frames carry: a stored block comes
// back as src itself, a compressed one appended to dst, in dst's memory
// when it has room, without allocating.
func TestDecode(t *testing.T) {
	d := NewDecoder(1 << 20)
	for _, checksum := range []bool{false, true} {
		e := NewEncoder(checksum)
		for _, c := range []Codec{None, Snappy, Zstd} {
			for i, src := range inputs() {
				stored, used, _ := e.Encode(c, src, nil)
				got, err := d.Decode([]byte("prefix"), stored, used)
				switch {
				case err != nil:
					t.Fatalf("%v input %d: %v", c, i, err)
				case used == None && (len(got) != len(src) || len(src) > 0 && &got[0] != &stored[0]):
					t.Fatalf("%v input %d: a stored block is not returned as it is", c, i)
				case used != None && !bytes.Equal(got, append([]byte("prefix"), src...)):
					t.Fatalf("%v input %d: decodes to something else", c, i)
				}
				if used == None {
					continue
				}
				dst := make([]byte, 0, len(src)+64)
				var out []byte
				decode := func() { out, _ = d.Decode(dst, stored, used) }
				decode()
				if !bytes.Equal(out, src) || len(src) > 0 && &out[0] != &dst[:1][0] {
					t.Fatalf("%v input %d: decoded with room, not into dst", c, i)
				}
				// Allocations are counted in the plain run only (see
				// package race).
				if allocs := testing.AllocsPerRun(10, decode); allocs != 0 && !race.Enabled {
					t.Fatalf("%v input %d: decoding into room allocated %v times", c, i, allocs)
				}
			}
		}
	}
}

// TestDecodeBound checks that a Decoder refuses a block past its bound,
// whether the block claims its size (snappy's header, a zstd frame
// content size) or not (a zstd frame written as a stream), and accepts
// one at the bound. (The bound is past zstd's least window, 1 KiB, which
// a Decoder's bound limits too.)
func TestDecodeBound(t *testing.T) {
	const bound = 100_000
	d := NewDecoder(bound)
	at, past := bytes.Repeat([]byte("a"), bound), bytes.Repeat([]byte("a"), bound+1)
	e := NewEncoder(true)
	streamed := func(v []byte) []byte {
		var buf bytes.Buffer
		w, err := zstd.NewWriter(&buf, zstd.WithWindowSize(64<<10))
		if err != nil {
			t.Fatal(err)
		}
		// A block flushed before the rest is written: the frame's
		// header goes out not knowing the size.
		if _, err := w.Write(v[:10]); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(v[10:]); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if h := new(zstd.Header); h.Decode(buf.Bytes()) != nil || h.HasFCS {
			t.Fatal("the streamed frame claims its size")
		}
		return buf.Bytes()
	}
	encoded := func(c Codec, v []byte) []byte {
		stored, used, _ := e.Encode(c, v, nil)
		if used != c {
			t.Fatalf("%v: stored as %v", c, used)
		}
		return stored
	}
	for _, tc := range []struct {
		name   string
		c      Codec
		src    []byte
		want   []byte
		reason string // in the error; "" for none
	}{
		{"snappy at the bound", Snappy, encoded(Snappy, at), at, ""},
		{"snappy past the bound", Snappy, encoded(Snappy, past), nil, "snappy claims 100001 bytes, more than 100000"},
		{"zstd at the bound", Zstd, encoded(Zstd, at), at, ""},
		{"zstd past the bound", Zstd, encoded(Zstd, past), nil, "zstd claims 100001 bytes, more than 100000"},
		{"zstd stream at the bound", Zstd, streamed(at), at, ""},
		{"zstd stream past the bound", Zstd, streamed(past), nil, "exceeds"},
		{"snappy garbage", Snappy, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, nil, "corrupt"},
		{"zstd garbage", Zstd, []byte("not a zstd frame"), nil, "magic"},
		{"truncated zstd", Zstd, encoded(Zstd, at)[:8], nil, "EOF"},
		{"unknown codec", 3, []byte("abc"), nil, "unknown compression 3"},
	} {
		got, err := d.Decode(nil, tc.src, tc.c)
		if tc.reason == "" {
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Errorf("%s: %v (differs: %v)", tc.name, err, err == nil)
			}
			continue
		}
		if err == nil || got != nil || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("%s: %d bytes, %v; want an error with %q", tc.name, len(got), err, tc.reason)
		}
	}
}
