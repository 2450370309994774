package record

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
)

// readNotALog reads log to its end and returns the torn tail, NotALog and
// the end (the error Next stopped with).
func readNotALog(t *testing.T, log []byte) (torn, notALog bool, err error) {
	t.Helper()
	rd := NewReader(bytes.NewReader(log), logFile)
	for {
		if _, err = rd.Next(); err != nil {
			break
		}
		if rd.NotALog() {
			t.Fatal("NotALog before the end of the log")
		}
	}
	_, torn = rd.TornTail()
	return torn, rd.NotALog(), err
}

// TestNotALog pins which files without an intact chunk NotALog calls not a
// log: random bytes named as a log read as a torn tail at offset 0, which
// bloomkv inspect would report as a healthy log. The torn first write of
// a real log — cut short by the end of the file, or zeros — must not be
// called so, nor may any log with an intact chunk, whatever its tail. Next
// and TornTail are unchanged: each case reads as a torn tail (or a clean
// end) exactly as before.
func TestNotALog(t *testing.T) {
	one := writeLog(t, sized(21, 3000))                             // one record, one FULL chunk
	big := writeLog(t, sized(22, BlockSize+5000))                   // one record, FIRST and LAST
	three := writeLog(t, sized(23, 100, 2000, 50))                  // a valid log
	garbage := randRecord(rand.New(rand.NewPCG(9, 9)), 3*BlockSize) // first header of type 0x8b: implausible
	if typ := garbage[6]; typ >= 1 && typ <= maxChunk {
		t.Fatalf("the garbage's first header has plausible type %d; pick another seed", typ)
	}
	flip := func(b []byte, at int) []byte {
		b = slices.Clone(b)
		b[at] ^= 0x10
		return b
	}
	cat := func(parts ...[]byte) []byte { return slices.Concat(parts...) }
	for _, tc := range []struct {
		name          string
		log           []byte
		torn, notALog bool
	}{
		{"empty", nil, false, false},
		{"random bytes", garbage[:4096], true, true},
		{"random bytes over blocks", garbage, true, true},
		{"random bytes shorter than a header", garbage[:5], true, false},
		{"zeros, preallocated", make([]byte, 2*BlockSize+100), true, false},
		{"zeros then random bytes", cat(make([]byte, 100), garbage[:1000]), true, true},
		{"first record cut in its header", one.log[:HeaderSize-2], true, false},
		{"first record cut in its payload", one.log[:1000], true, false},
		{"first record cut one byte short", one.log[:len(one.log)-1], true, false},
		{"first record's FIRST chunk intact, LAST cut", big.log[:BlockSize+100], true, false},
		{"first chunk whole, bad checksum", flip(one.log, HeaderSize+500), true, true},
		{"first chunk whole, bad type", flip(one.log, 6), true, true},
		{"first chunk, one bit of its length flipped", flip(one.log, 4), true, false},
		{"valid log", three.log, false, false},
		{"valid log, zeros after", cat(three.log, make([]byte, 3000)), true, false},
		{"valid log, random bytes after", cat(three.log, garbage[:3000]), true, false},
		{"valid log, last record cut", three.log[:len(three.log)-10], true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			torn, notALog, err := readNotALog(t, tc.log)
			if err != io.EOF || torn != tc.torn || notALog != tc.notALog {
				t.Fatalf("end %v, torn %v, NotALog %v; want io.EOF, torn %v, NotALog %v", err, torn, notALog, tc.torn, tc.notALog)
			}
		})
	}
}

// TestNotALogRandomFiles checks NotALog on random files of many sizes
// against the rule worked out from the bytes alone: a random file is not a
// log unless its first header could start a chunk (type 1–4, a length
// within the block) that the end of the file cuts short, or the file is
// shorter than a header. A CRC that matches by chance (2^−32 per try) is
// not expected in these few hundred files.
func TestNotALogRandomFiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 41))
	plausible := 0
	for i := range 400 {
		size := rng.IntN(3 * BlockSize)
		if i%4 == 0 {
			size = rng.IntN(64)
		}
		log := randRecord(rng, size)
		if i%3 == 0 && size >= HeaderSize {
			log[6] = byte(1 + rng.IntN(maxChunk)) // a plausible type, to exercise the cut rule
		}
		want := true
		if size < HeaderSize {
			want = false
		} else if typ, end := log[6], HeaderSize+int(binary.LittleEndian.Uint16(log[4:6])); typ >= 1 && typ <= maxChunk && end <= BlockSize && end > size {
			want = false
			plausible++
		}
		torn, notALog, err := readNotALog(t, log)
		if err != io.EOF || torn != (size > 0) || notALog != want {
			t.Fatalf("file %d of %d bytes: end %v, torn %v, NotALog %v; want io.EOF, torn %v, NotALog %v",
				i, size, err, torn, notALog, size > 0, want)
		}
	}
	if plausible == 0 {
		t.Fatal("no random file had a first chunk cut short: the cut rule went untested")
	}
}
