package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/iotest"

	"github.com/bloomkv/bloomkv/internal/base"
)

// logFile is the name readers in these tests report in corruption errors.
const logFile = "000042.log"

// chunk is one chunk for buildLog, which lays chunks out by the format's
// rules independently of Writer, so tests can also build logs the Writer
// never would (chunks out of sequence).
type chunk struct {
	t       byte
	payload []byte
}

// buildLog places chunks one after another, zero-filling a block tail
// shorter than a header, and returns the log and each chunk's offset.
func buildLog(chunks ...chunk) ([]byte, []int64) {
	var log []byte
	var offs []int64
	for _, c := range chunks {
		if left := BlockSize - len(log)%BlockSize; left < HeaderSize {
			log = append(log, make([]byte, left)...)
		}
		if len(log)%BlockSize+HeaderSize+len(c.payload) > BlockSize {
			panic("test chunk crosses a block boundary")
		}
		offs = append(offs, int64(len(log)))
		crc := crc32.Update(0, crc32.MakeTable(crc32.Castagnoli), []byte{c.t})
		crc = crc32.Update(crc, crc32.MakeTable(crc32.Castagnoli), c.payload)
		log = binary.LittleEndian.AppendUint32(log, (crc>>15|crc<<17)+0xa282ead8)
		log = binary.LittleEndian.AppendUint16(log, uint16(len(c.payload)))
		log = append(log, c.t)
		log = append(log, c.payload...)
	}
	return log, offs
}

// refChunks splits records into chunks as the format's rules say, given the
// log offset they start at: the oracle the Writer is checked against.
func refChunks(records [][]byte) []chunk {
	var out []chunk
	off := 0
	for _, r := range records {
		for first := true; ; first = false {
			if left := BlockSize - off%BlockSize; left < HeaderSize {
				off += left
			}
			n := min(len(r), BlockSize-off%BlockSize-HeaderSize)
			last := n == len(r)
			t := map[[2]bool]byte{{true, true}: fullChunk, {true, false}: firstChunk, {false, false}: middleChunk, {false, true}: lastChunk}[[2]bool{first, last}]
			out = append(out, chunk{t, r[:n]})
			off += HeaderSize + n
			r = r[n:]
			if last {
				break
			}
		}
	}
	return out
}

// written is a log made by the Writer, with what the Writer said about it.
type written struct {
	log     []byte
	records [][]byte
	offsets []int64 // from WriteRecord
	ends    []int64 // Size() after each record
}

func writeLog(t testing.TB, records [][]byte) written {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	wl := written{records: records}
	for _, r := range records {
		off, err := w.WriteRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		wl.offsets = append(wl.offsets, off)
		wl.ends = append(wl.ends, w.Size())
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	wl.log = buf.Bytes()
	return wl
}

// completeBefore is how many records end at or before offset cut.
func (wl written) completeBefore(cut int64) int {
	n, _ := slices.BinarySearch(wl.ends, cut+1)
	return n
}

// endOf is where the first n records end.
func (wl written) endOf(n int) int64 {
	if n == 0 {
		return 0
	}
	return wl.ends[n-1]
}

// readResult is everything a Reader said about a log.
type readResult struct {
	records [][]byte
	offsets []int64
	err     error // io.EOF at a clean end
	tornOff int64
	torn    bool
}

func readLog(t testing.TB, r io.Reader) readResult {
	t.Helper()
	rd := NewReader(r, logFile)
	var res readResult
	for i := 0; ; i++ {
		rec, err := rd.Next()
		if err != nil {
			res.err = err
			break
		}
		if i > 1<<20 {
			t.Fatal("reader does not stop")
		}
		res.records = append(res.records, slices.Clone(rec))
		res.offsets = append(res.offsets, rd.Offset())
	}
	if _, err := rd.Next(); err != res.err {
		t.Fatalf("second call after the end returned %v, want the sticky %v", err, res.err)
	}
	res.tornOff, res.torn = rd.TornTail()
	return res
}

// checkPrefix checks that res holds exactly the first n records of wl.
func checkPrefix(t testing.TB, res readResult, wl written, n int) {
	t.Helper()
	if len(res.records) != n {
		t.Fatalf("read %d records, want %d", len(res.records), n)
	}
	for i, r := range res.records {
		if !bytes.Equal(r, wl.records[i]) {
			t.Fatalf("record %d: read %d bytes that differ from the %d written", i, len(r), len(wl.records[i]))
		}
		if res.offsets[i] != wl.offsets[i] {
			t.Fatalf("record %d: reader offset %d, writer offset %d", i, res.offsets[i], wl.offsets[i])
		}
	}
}

func randRecord(rng *rand.Rand, n int) []byte {
	b := make([]byte, n+8)
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], rng.Uint64())
	}
	return b[:n:n]
}

func sized(seed uint64, sizes ...int) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	var recs [][]byte
	for _, n := range sizes {
		recs = append(recs, randRecord(rng, n))
	}
	return recs
}

// leaving returns the size of a record that, written at a block start,
// leaves exactly k bytes in the block.
func leaving(k int) int { return BlockSize - HeaderSize - k }

// unmaskCRC inverts maskCRC.
func unmaskCRC(m uint32) uint32 {
	c := m - maskDelta
	return c>>17 | c<<15
}

func TestCRC32C(t *testing.T) {
	// The check value of CRC-32C (iSCSI), from RFC 3720: it pins the
	// polynomial, which the IEEE table would get wrong.
	if got := crc32.Checksum([]byte("123456789"), crcTable); got != 0xe3069283 {
		t.Fatalf("CRC-32C check value = %#x, want 0xe3069283", got)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for range 1000 {
		c := rng.Uint32()
		if unmaskCRC(maskCRC(c)) != c {
			t.Fatalf("unmask(mask(%#x)) != %#x", c, c)
		}
	}
}

// TestGolden pins the format. The expected bytes and digests come from an
// independent script (bitwise CRC-32C, LevelDB's mask, LevelDB's chunking
// rules); a change here is a format change.
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name    string
		records [][]byte
		size    int64
		offsets []int64
		want    string // hex of the log, or its SHA-256
	}{
		{"hello and empty", [][]byte{[]byte("hello"), {}}, 19, []int64{0, 12},
			"0bb9575805000168656c6c6f052b2843000001"},
		{"package doc example", [][]byte{bytes.Repeat([]byte("a"), 1000), bytes.Repeat([]byte("b"), 40000), nil},
			41028, []int64{0, 1007, 41021},
			"2d8820b5da81f260d9a810fecba5debb7334a344dfb181b53c013afc53e57034"},
		{"empty FIRST chunk, trailer", [][]byte{
			bytes.Repeat([]byte("x"), leaving(7)), []byte("0123456789"),
			bytes.Repeat([]byte("y"), BlockSize-27), bytes.Repeat([]byte("z"), 70000)},
			135557, []int64{0, 32761, 32785, 65536},
			"ef0ba8789998449ab04f0b739fc7915858599f14cf8046be6915cd49384dc962"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wl := writeLog(t, tc.records)
			got := hex.EncodeToString(wl.log)
			if len(tc.want) == 64 && len(wl.log) != 32 {
				sum := sha256.Sum256(wl.log)
				got = hex.EncodeToString(sum[:])
			}
			if got != tc.want {
				t.Errorf("log = %s, want %s", got, tc.want)
			}
			if int64(len(wl.log)) != tc.size || !slices.Equal(wl.offsets, tc.offsets) {
				t.Errorf("size %d, offsets %v; want %d, %v", len(wl.log), wl.offsets, tc.size, tc.offsets)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var randomSizes []int
	for range 300 {
		switch rng.IntN(4) {
		case 0:
			randomSizes = append(randomSizes, rng.IntN(16))
		case 1:
			randomSizes = append(randomSizes, rng.IntN(2000))
		case 2:
			randomSizes = append(randomSizes, BlockSize-20+rng.IntN(40))
		default:
			randomSizes = append(randomSizes, rng.IntN(4*BlockSize))
		}
	}
	cases := []struct {
		name  string
		sizes []int
	}{
		{"none", nil},
		{"empty records", []int{0, 0, 0}},
		{"one byte", []int{1}},
		{"exactly a block", []int{leaving(0), leaving(0), 0}},
		{"block-sized payloads", []int{BlockSize, BlockSize, BlockSize - 1, BlockSize + 1}},
		{"several blocks", []int{5*BlockSize + 123, 3, 2 * BlockSize}},
		{"largest chunk", []int{BlockSize - HeaderSize, BlockSize - HeaderSize + 1}},
		{"random", randomSizes},
	}
	// A record that leaves k bytes in the block, then records that must
	// start after the trailer (k < 7) or in the same block (k >= 7).
	for k := 0; k <= 8; k++ {
		cases = append(cases, struct {
			name  string
			sizes []int
		}{fmt.Sprintf("leaves %d bytes", k), []int{leaving(k), 0, 10, leaving(k) - 17}})
		cases = append(cases, struct {
			name  string
			sizes []int
		}{fmt.Sprintf("spans then leaves %d bytes", k), []int{1000, BlockSize + leaving(k) - 1007, 50}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wl := writeLog(t, sized(uint64(len(tc.sizes)), tc.sizes...))
			want, chunkOffs := buildLog(refChunks(wl.records)...)
			if !bytes.Equal(wl.log, want) {
				t.Fatalf("writer output (%d bytes) differs from the reference layout (%d bytes)", len(wl.log), len(want))
			}
			// Each record starts at the offset of its first chunk.
			var firsts []int64
			for i, c := range refChunks(wl.records) {
				if c.t == fullChunk || c.t == firstChunk {
					firsts = append(firsts, chunkOffs[i])
				}
			}
			if !slices.Equal(wl.offsets, firsts) {
				t.Fatalf("WriteRecord offsets %v, want %v", wl.offsets, firsts)
			}
			for _, rd := range []struct {
				name string
				r    io.Reader
			}{
				{"whole", bytes.NewReader(wl.log)},
				{"one byte at a time", iotest.OneByteReader(bytes.NewReader(wl.log))},
			} {
				if rd.name != "whole" && len(wl.log) > 300_000 {
					continue
				}
				res := readLog(t, rd.r)
				if res.err != io.EOF || res.torn {
					t.Fatalf("%s: end: %v, torn %v at %d; want a clean io.EOF", rd.name, res.err, res.torn, res.tornOff)
				}
				checkPrefix(t, res, wl, len(wl.records))
			}
		})
	}
}

// TestTruncateEverywhere cuts a log at every byte offset, as a crash during
// the last writes may. The reader must return exactly the records that end
// before the cut and report a torn tail exactly when the cut is not at the
// end of a record.
func TestTruncateEverywhere(t *testing.T) {
	// A little over two blocks: small and empty records, a record spanning
	// blocks 0 and 1, a 3-byte trailer at the end of block 1.
	wl := writeLog(t, sized(9,
		0, 100, 1, 2000, BlockSize+500, 10, leaving(3)-2660, 300, 0, 13, 2000))
	if n := len(wl.log); n < 2*BlockSize || n > 3*BlockSize {
		t.Fatalf("log is %d bytes; the test wants it to reach a third block", n)
	}
	data := wl.log
	br := bytes.NewReader(nil)
	rd := NewReader(nil, logFile)
	for cut := 0; cut <= len(data); cut++ {
		br.Reset(data[:cut])
		*rd = Reader{r: br, file: logFile, buf: rd.buf, rec: rd.rec[:0]}
		n := 0
		for {
			rec, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("cut %d: after %d records: %v", cut, n, err)
			}
			if n >= len(wl.records) || !bytes.Equal(rec, wl.records[n]) || rd.Offset() != wl.offsets[n] {
				t.Fatalf("cut %d: record %d (offset %d) is not the record written there", cut, n, rd.Offset())
			}
			n++
		}
		want := wl.completeBefore(int64(cut))
		if n != want {
			t.Fatalf("cut %d: read %d records, want %d", cut, n, want)
		}
		off, torn := rd.TornTail()
		wantTorn := int64(cut) != wl.endOf(want)
		if torn != wantTorn || (torn && off != wl.endOf(want)) {
			t.Fatalf("cut %d: TornTail() = %d, %v; want %d, %v", cut, off, torn, wl.endOf(want), wantTorn)
		}
	}
}

func TestTail(t *testing.T) {
	wl := writeLog(t, sized(11, 10, 3000, BlockSize+100, 0, 700))
	n := len(wl.records)
	last := writeLog(t, sized(11, 10, 3000, BlockSize+100, 0, 700, 20000)) // one more record
	lastStart := last.offsets[n]
	garbage := randRecord(rand.New(rand.NewPCG(5, 5)), 3*BlockSize)
	flip := func(b []byte, at int64) []byte {
		b = slices.Clone(b)
		b[at] ^= 0x40
		return b
	}
	toBlockEnd := BlockSize - len(wl.log)%BlockSize
	cases := []struct {
		name string
		log  []byte
		n    int // records the reader must return
	}{
		{"empty file", nil, 0},
		{"zeros to the block end", append(slices.Clone(wl.log), make([]byte, toBlockEnd)...), n},
		{"zeros, preallocated", append(slices.Clone(wl.log), make([]byte, 3*BlockSize+17)...), n},
		{"zeros, a partial header", append(slices.Clone(wl.log), make([]byte, 5)...), n},
		{"garbage", append(slices.Clone(wl.log), garbage[:1000]...), n},
		{"garbage over blocks", append(slices.Clone(wl.log), garbage...), n},
		{"final record cut short", last.log[:len(last.log)-1], n},
		{"final record cut in its header", last.log[:lastStart+3], n},
		{"final record, bad checksum", flip(last.log, last.ends[n]-5), n},
		{"final record, bad checksum in the cut write", flip(last.log[:lastStart+3000], lastStart+2000), n},
		{"final record, bad length", flip(last.log, lastStart+5), n},
		{"final record, bad type", flip(last.log, lastStart+6), n},
		{"final record zeroed", append(slices.Clone(wl.log), make([]byte, len(last.log)-len(wl.log))...), n},
		{"final record then garbage", append(flip(last.log, lastStart+100), garbage[:500]...), n},
		{"zeros inside the last record", func() []byte {
			b := slices.Clone(last.log)
			clear(b[lastStart+1000 : lastStart+5000])
			return b
		}(), n},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := readLog(t, bytes.NewReader(tc.log))
			if res.err != io.EOF {
				t.Fatalf("end: %v, want io.EOF", res.err)
			}
			checkPrefix(t, res, last, tc.n)
			wantTorn := int64(len(tc.log)) != last.endOf(tc.n)
			if res.torn != wantTorn || res.tornOff != last.endOf(tc.n) {
				t.Fatalf("TornTail() = %d, %v; want %d, %v", res.tornOff, res.torn, last.endOf(tc.n), wantTorn)
			}
		})
	}
}

// TestCorruptionInMiddle damages one chunk, in every byte of it, with intact
// records after it: the reader must return the records before it and then
// an ErrCorruption naming the file and the chunk's offset.
func TestCorruptionInMiddle(t *testing.T) {
	// Records 0..2 in block 0; record 3 spans blocks 0..2 (FIRST, MIDDLE,
	// LAST); then more records in block 2 and 3.
	wl := writeLog(t, sized(13, 50, 200, 1000, 2*BlockSize+5000, 300, 0, 40000, 64))
	chunks := refChunks(wl.records)
	_, chunkOffs := buildLog(chunks...)
	targets := []struct {
		name    string
		chunk   int // index in chunks
		records int // records before the damage
	}{
		{"FULL chunk", 1, 1},
		{"FIRST chunk", 3, 3},
		{"MIDDLE chunk", 4, 3},
		{"LAST chunk", 5, 3},
		{"empty FULL chunk", 7, 5},
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			off := chunkOffs[tg.chunk]
			size := HeaderSize + len(chunks[tg.chunk].payload)
			// Every header byte, and every payload byte of small chunks or a
			// sample of large ones.
			next := func(i int) int {
				if i < HeaderSize || size < 2000 {
					return i + 1
				}
				return i + 97
			}
			// One copy of the log, each flip undone after its read (the
			// reader copies the records it returns).
			log := slices.Clone(wl.log)
			for i := 0; i < size; i = next(i) {
				for _, x := range []byte{0x01, 0x80, 0xff} {
					log[off+int64(i)] ^= x
					res := readLog(t, bytes.NewReader(log))
					log[off+int64(i)] ^= x
					checkPrefix(t, res, wl, tg.records)
					var ce *base.CorruptionError
					if !errors.Is(res.err, base.ErrCorruption) || !errors.As(res.err, &ce) {
						t.Fatalf("byte %d ^ %#x: end %v, want corruption", i, x, res.err)
					}
					if ce.File != logFile || ce.Offset != off {
						t.Fatalf("byte %d ^ %#x: %v; want file %s, offset %d", i, x, res.err, logFile, off)
					}
					if res.torn {
						t.Fatalf("byte %d ^ %#x: corruption also reported as a torn tail", i, x)
					}
				}
			}
		})
	}
}

// TestChunkSequence feeds chunk sequences the Writer never produces.
func TestChunkSequence(t *testing.T) {
	p := func(s string) []byte { return []byte(s) }
	big := bytes.Repeat([]byte("m"), BlockSize-HeaderSize)
	cases := []struct {
		name    string
		chunks  []chunk
		records []string
		errAt   int // index of the chunk the corruption is reported at; -1: clean end
		torn    bool
	}{
		{"FULL", []chunk{{fullChunk, p("a")}}, []string{"a"}, -1, false},
		{"FIRST MIDDLE LAST", []chunk{{firstChunk, p("a")}, {middleChunk, p("b")}, {lastChunk, p("c")}}, []string{"abc"}, -1, false},
		{"empty pieces", []chunk{{firstChunk, nil}, {middleChunk, nil}, {lastChunk, nil}}, []string{""}, -1, false},
		{"FIRST then FULL", []chunk{{fullChunk, p("a")}, {firstChunk, p("b")}, {fullChunk, p("c")}}, []string{"a"}, 2, false},
		{"FIRST then FIRST", []chunk{{firstChunk, p("b")}, {firstChunk, p("c")}, {lastChunk, p("d")}}, nil, 1, false},
		{"MIDDLE alone", []chunk{{fullChunk, p("a")}, {middleChunk, p("b")}, {fullChunk, p("c")}}, []string{"a"}, 1, false},
		{"LAST alone", []chunk{{lastChunk, p("b")}}, nil, 0, false},
		{"FIRST at the end", []chunk{{fullChunk, p("a")}, {firstChunk, p("b")}}, []string{"a"}, -1, true},
		{"FIRST MIDDLE at the end", []chunk{{fullChunk, p("a")}, {firstChunk, big[:BlockSize-8-HeaderSize]}, {middleChunk, big}}, []string{"a"}, -1, true},
		{"record over blocks", []chunk{{firstChunk, big}, {middleChunk, big}, {lastChunk, p("z")}}, []string{string(big) + string(big) + "z"}, -1, false},
		{"unknown type", []chunk{{fullChunk, p("a")}, {9, p("b")}, {fullChunk, p("c")}}, []string{"a"}, 1, false},
		{"unknown type at the end", []chunk{{fullChunk, p("a")}, {9, p("b")}}, []string{"a"}, -1, true},
		{"type 0", []chunk{{fullChunk, p("a")}, {0, p("b")}, {fullChunk, p("c")}}, []string{"a"}, 1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			log, offs := buildLog(tc.chunks...)
			res := readLog(t, bytes.NewReader(log))
			var got []string
			for _, r := range res.records {
				got = append(got, string(r))
			}
			if !slices.Equal(got, tc.records) {
				t.Fatalf("records %q, want %q", got, tc.records)
			}
			if tc.errAt < 0 {
				if res.err != io.EOF || res.torn != tc.torn {
					t.Fatalf("end %v, torn %v; want io.EOF, torn %v", res.err, res.torn, tc.torn)
				}
				return
			}
			var ce *base.CorruptionError
			if !errors.As(res.err, &ce) || !errors.Is(res.err, base.ErrCorruption) || ce.Offset != offs[tc.errAt] {
				t.Fatalf("end %v, want corruption at offset %d", res.err, offs[tc.errAt])
			}
		})
	}
}

func TestReadError(t *testing.T) {
	wl := writeLog(t, sized(17, 100, BlockSize, 100))
	boom := errors.New("disk on fire")
	res := readLog(t, io.MultiReader(bytes.NewReader(wl.log[:BlockSize+10]), iotest.ErrReader(boom)))
	if !errors.Is(res.err, boom) || errors.Is(res.err, base.ErrCorruption) || res.torn {
		t.Fatalf("end %v, torn %v; want the read error, not corruption", res.err, res.torn)
	}
	checkPrefix(t, res, wl, 1)
}

// TestRecordCapacity checks that appending to a returned record cannot
// overwrite the next chunk in the reader's buffer.
func TestRecordCapacity(t *testing.T) {
	wl := writeLog(t, sized(19, 10, 10))
	rd := NewReader(bytes.NewReader(wl.log), logFile)
	rec, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	_ = append(rec, bytes.Repeat([]byte{0xee}, 100)...)
	if rec, err = rd.Next(); err != nil || !bytes.Equal(rec, wl.records[1]) {
		t.Fatalf("second record %x, %v; want %x", rec, err, wl.records[1])
	}
}

// TestTornRecordHoldingALog pins why the search for valid data starts after
// a damaged chunk's payload when its header is plausible: the payload of the
// torn record is itself a log, full of valid chunk images, and the tail must
// still read as torn, not as corruption.
func TestTornRecordHoldingALog(t *testing.T) {
	inner := writeLog(t, sized(29, 10, 20, 30)).log
	payload := append(randRecord(rand.New(rand.NewPCG(29, 29)), 500), inner...)
	wl := writeLog(t, [][]byte{[]byte("before"), payload})
	start := wl.offsets[1]
	for _, tc := range []struct {
		name string
		log  []byte
	}{
		{"cut after the images", wl.log[:len(wl.log)-3]},
		{"bad checksum before the images", func() []byte {
			b := slices.Clone(wl.log)
			b[start+HeaderSize+100] ^= 1
			return b
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := readLog(t, bytes.NewReader(tc.log))
			if res.err != io.EOF || !res.torn || res.tornOff != wl.ends[0] {
				t.Fatalf("end %v, TornTail() = %d, %v; want io.EOF, %d, true", res.err, res.tornOff, res.torn, wl.ends[0])
			}
			checkPrefix(t, res, wl, 1)
		})
	}
}
