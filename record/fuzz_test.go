package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
)

// modelRead is a second, deliberately plain reading of the format: the whole
// log in memory, offsets from 0, no block buffer. FuzzReader checks the
// streaming Reader against it. The outcome is "eof", "torn" or "corrupt".
func modelRead(log []byte) (recs [][]byte, offs []int64, outcome string, at int64) {
	validAt := func(p int) (end int, ok bool) {
		limit := min(len(log), (p/BlockSize+1)*BlockSize)
		if p+HeaderSize > limit {
			return 0, false
		}
		t := log[p+6]
		end = p + HeaderSize + int(binary.LittleEndian.Uint16(log[p+4:]))
		if t < 1 || t > 4 || end > limit {
			return 0, false
		}
		return end, binary.LittleEndian.Uint32(log[p:]) == chunkCRC(log[p+6:end])
	}
	anyValidFrom := func(p int) bool {
		for ; p < len(log); p++ {
			if _, ok := validAt(p); ok {
				return true
			}
		}
		return false
	}
	lastEnd := 0
	stop := func() (string, int64) {
		if len(log) > lastEnd {
			return "torn", int64(lastEnd)
		}
		return "eof", 0
	}
	var cur []byte
	start := -1
	for p := 0; ; {
		if left := BlockSize - p%BlockSize; left < HeaderSize {
			p += left
		}
		if p+HeaderSize > len(log) {
			outcome, at = stop()
			return
		}
		end, ok := validAt(p)
		if !ok {
			t := log[p+6]
			from := p + HeaderSize + int(binary.LittleEndian.Uint16(log[p+4:]))
			if t < 1 || t > 4 || from > (p/BlockSize+1)*BlockSize {
				from = p + 1
			}
			if anyValidFrom(from) {
				return recs, offs, "corrupt", int64(p)
			}
			outcome, at = stop()
			return
		}
		t, payload := log[p+6], log[p+HeaderSize:end]
		switch {
		case t == fullChunk && start < 0:
			recs, offs, lastEnd = append(recs, payload), append(offs, int64(p)), end
		case t == firstChunk && start < 0:
			start, cur = p, slices.Clone(payload)
		case (t == middleChunk || t == lastChunk) && start >= 0:
			cur = append(cur, payload...)
			if t == lastChunk {
				recs, offs, lastEnd = append(recs, cur), append(offs, int64(start)), end
				start = -1
			}
		default:
			return recs, offs, "corrupt", int64(p)
		}
		p = end
	}
}

// fuzzRecords builds the records a fuzz input's seed stands for: a few, of
// sizes that stress the block structure, totalling at most a few blocks.
func fuzzRecords(seed uint64) [][]byte {
	rng := rand.New(rand.NewPCG(seed, seed>>32))
	var recs [][]byte
	total := 0
	for range 1 + rng.IntN(12) {
		var n int
		switch rng.IntN(4) {
		case 0:
			n = rng.IntN(20)
		case 1:
			n = rng.IntN(3000)
		case 2:
			n = BlockSize - 30 + rng.IntN(60)
		default:
			n = rng.IntN(2 * BlockSize)
		}
		if total+n > 5*BlockSize/2 {
			break
		}
		total += n
		recs = append(recs, randRecord(rng, n))
	}
	return recs
}

// mutate applies edits to log, four bytes each: a 24-bit position (modulo
// the log's length) and a mask to XOR in, where a zero mask cuts the log
// there. It returns the mutated log and the first damaged offset.
func mutate(log, edits []byte) ([]byte, int) {
	log = slices.Clone(log)
	first := len(log)
	for ; len(edits) >= 4 && len(log) > 0; edits = edits[4:] {
		p := int(edits[0]) | int(edits[1])<<8 | int(edits[2])<<16
		p %= len(log)
		if edits[3] == 0 {
			log = log[:p]
		} else {
			log[p] ^= edits[3]
		}
		first = min(first, p)
	}
	return log, first
}

// FuzzReader feeds the Reader two inputs per case: raw bytes, checked
// against modelRead; and a log written by the Writer, then mutated, where
// every record read must be one the Writer wrote at that offset.
func FuzzReader(f *testing.F) {
	// Raw seeds stay small: the fuzzer mutates and minimizes them byte by
	// byte, and the seeded logs cover the block structure.
	valid := writeLog(f, sized(1, 0, 5, 40, 1, 200)).log
	f.Add([]byte{}, uint64(0), []byte{})
	f.Add(valid, uint64(1), []byte{})
	f.Add(valid[:len(valid)/2], uint64(2), []byte{0x10, 0x00, 0x00, 0x00})
	f.Add(make([]byte, 100), uint64(3), []byte{0xff, 0xff, 0x00, 0x01})
	f.Add(append(slices.Clone(valid), 1, 2, 3), uint64(4), []byte{0x00, 0x80, 0x00, 0x04, 0x07, 0x00, 0x00, 0x00})
	f.Add(bytes.Repeat([]byte{0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01}, 40), uint64(5), []byte{0x06, 0x00, 0x00, 0x03})
	f.Add(valid[7:], uint64(6), []byte{0x05, 0x80, 0x00, 0x00})

	f.Fuzz(func(t *testing.T, raw []byte, seed uint64, edits []byte) {
		// Arbitrary bytes: the Reader and the model agree.
		checkModel(t, "raw", raw, fuzzRead(t, raw))

		// A log the Writer wrote, mutated.
		wl := writeLog(t, fuzzRecords(seed))
		log, first := mutate(wl.log, edits)
		res := fuzzRead(t, log)
		checkModel(t, "mutated", log, res)
		byOffset := make(map[int64][]byte)
		for i, off := range wl.offsets {
			byOffset[off] = wl.records[i]
		}
		for i, r := range res.records {
			w, ok := byOffset[res.offsets[i]]
			if !ok || !bytes.Equal(r, w) {
				t.Fatalf("mutated: record %d at offset %d is not a record the writer wrote there", i, res.offsets[i])
			}
		}
		// Damage cannot hide the records that end before it.
		if n := wl.completeBefore(int64(first)); len(res.records) < n {
			t.Fatalf("mutated: read %d records, but %d end before the first damage at %d", len(res.records), n, first)
		}
		if len(log) == len(wl.log) && first == len(log) {
			if res.err != io.EOF || res.torn || len(res.records) != len(wl.records) {
				t.Fatalf("unmutated: %d of %d records, end %v, torn %v", len(res.records), len(wl.records), res.err, res.torn)
			}
		}
		if bytes.Equal(log, wl.log[:len(log)]) && res.err != io.EOF {
			t.Fatalf("truncated only: end %v, want io.EOF", res.err)
		}
	})
}

func checkModel(t *testing.T, what string, log []byte, res readResult) {
	recs, offs, outcome, at := modelRead(log)
	if len(res.records) != len(recs) {
		t.Fatalf("%s: reader returned %d records, model %d", what, len(res.records), len(recs))
	}
	for i := range recs {
		if !bytes.Equal(res.records[i], recs[i]) || res.offsets[i] != offs[i] {
			t.Fatalf("%s: record %d differs from the model's", what, i)
		}
	}
	if got, gotAt := outcomeOf(t, res); got != outcome || gotAt != at {
		t.Fatalf("%s: reader ends %s at %d (%v), model %s at %d", what, got, gotAt, res.err, outcome, at)
	}
}

// fuzzRead reads log to its end, failing if the Reader returns more records
// than the log could hold (each takes a header), which would mean a loop.
func fuzzRead(t *testing.T, log []byte) readResult {
	rd := NewReader(bytes.NewReader(log), logFile)
	var res readResult
	for {
		rec, err := rd.Next()
		if err != nil {
			res.err = err
			break
		}
		if len(res.records) > len(log)/HeaderSize {
			t.Fatalf("%d records from %d bytes", len(res.records), len(log))
		}
		if n := len(res.offsets); n > 0 && rd.Offset() <= res.offsets[n-1] {
			t.Fatalf("record offsets go backwards: %d after %d", rd.Offset(), res.offsets[n-1])
		}
		res.records = append(res.records, slices.Clone(rec))
		res.offsets = append(res.offsets, rd.Offset())
	}
	if _, err := rd.Next(); err != res.err {
		t.Fatalf("after the end: %v, want the sticky %v", err, res.err)
	}
	res.tornOff, res.torn = rd.TornTail()
	return res
}

func outcomeOf(t *testing.T, res readResult) (string, int64) {
	var ce *base.CorruptionError
	switch {
	case res.err == io.EOF && res.torn:
		return "torn", res.tornOff
	case res.err == io.EOF:
		return "eof", 0
	case errors.As(res.err, &ce) && errors.Is(res.err, base.ErrCorruption) && ce.File == logFile:
		return "corrupt", ce.Offset
	}
	t.Fatalf("unexpected end: %v", res.err)
	return "", 0
}
