package record

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/bloomkv/bloomkv/internal/base"
)

// Reader replays the records of a log in the order they were written. It
// reads one block at a time, so a log of any size needs only a block of
// buffer plus the largest record; only the decision about a damaged chunk
// reads further ahead, to the end of the file (see the package doc).
// A Reader is not safe for concurrent use.
type Reader struct {
	r    io.Reader
	file string

	// buf[:n] holds the current block, which starts at file offset
	// blockOff; pos is where the next chunk header is. eof reports that r
	// is exhausted, so buf holds the last block.
	// INVARIANT: n < BlockSize only if eof: a short block is the last one.
	buf      []byte
	n        int
	pos      int
	blockOff int64
	eof      bool

	// INVARIANT: end only grows, and only when Next returns a record, so
	// everything before it is intact records and trailers.
	rec    []byte // reassembles FIRST..LAST records
	recOff int64  // offset of the record Next returned last
	end    int64  // offset just past the record Next returned last

	err  error // sticky: io.EOF, a corruption or a read error
	torn bool

	// intact reports that some chunk passed its checksum. Until one has,
	// damage can only be at offset 0, and cut and zero describe it: cut,
	// that the damaged chunk's header is plausible and the file ends
	// inside the chunk; zero, that every byte of the file is zero. notALog
	// is what finish concludes from them (see NotALog).
	intact, cut, zero, notALog bool
}

// NewReader returns a Reader of the log read from r, starting at offset 0.
// fileName names the log in corruption errors.
func NewReader(r io.Reader, fileName string) *Reader {
	return &Reader{r: r, file: fileName, buf: make([]byte, BlockSize)}
}

// Next returns the next record. At the end of the log it returns io.EOF,
// also when the log ends in a torn tail (see TornTail). If the log is
// damaged before its end it returns a *base.CorruptionError wrapping
// base.ErrCorruption, and a failure of the underlying reader is returned
// wrapped. After any error, every later call returns the same error.
//
// The record is valid until the next call to Next; copy it to keep it.
func (r *Reader) Next() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	inRecord := false
	var start int64 // offset of the record's FIRST chunk
	for {
		if r.n-r.pos < HeaderSize {
			// A block trailer, or the end of the data.
			if r.eof {
				return nil, r.finish()
			}
			if err := r.readBlock(); err != nil {
				return nil, r.fail(err)
			}
			continue
		}
		h := r.buf[r.pos:r.n]
		length := int(binary.LittleEndian.Uint16(h[4:6]))
		t := h[6]
		off := r.blockOff + int64(r.pos)
		end := r.pos + HeaderSize + length
		switch {
		case t == 0:
			if binary.LittleEndian.Uint32(h[0:4]) == 0 && length == 0 {
				return nil, r.damaged(off, r.pos+1, "zeroed chunk header")
			}
			return nil, r.damaged(off, r.pos+1, "reserved chunk type 0")
		case t > maxChunk:
			return nil, r.damaged(off, r.pos+1, "unknown chunk type %d", t)
		case end > r.n && lengthFlipped(h, length) >= 0:
			return nil, r.lengthDamaged(off, t, length, lengthFlipped(h, length))
		case end > BlockSize:
			return nil, r.damaged(off, r.pos+1, "%s chunk length %d crosses the block boundary", chunkName(t), length)
		case end > r.n:
			// Only the last block can be short, so this is the end of the
			// file.
			r.cut = true
			return nil, r.damaged(off, end, "%s chunk length %d runs past the end of the file", chunkName(t), length)
		}
		if got, want := binary.LittleEndian.Uint32(h[0:4]), chunkCRC(h[6:HeaderSize+length]); got != want {
			if n := lengthFlipped(h, length); n >= 0 {
				return nil, r.lengthDamaged(off, t, length, n)
			}
			return nil, r.damaged(off, end, "%s chunk checksum mismatch: stored %#08x, computed %#08x", chunkName(t), got, want)
		}
		payload := h[HeaderSize : HeaderSize+length : HeaderSize+length]
		r.pos = end
		r.intact = true

		// The chunk is valid. A chunk out of sequence therefore always means
		// corruption: it is itself intact data after the damage.
		switch t {
		case fullChunk:
			if inRecord {
				return nil, r.outOfSequence(off, t, start)
			}
			r.recOff, r.end = off, r.blockOff+int64(end)
			return payload, nil
		case firstChunk:
			if inRecord {
				return nil, r.outOfSequence(off, t, start)
			}
			inRecord, start = true, off
			r.rec = append(r.rec[:0], payload...)
		case middleChunk, lastChunk:
			if !inRecord {
				return nil, r.fail(base.Corruptf(r.file, off, "%s chunk without a FIRST chunk before it", chunkName(t)))
			}
			r.rec = append(r.rec, payload...)
			if t == lastChunk {
				r.recOff, r.end = start, r.blockOff+int64(end)
				return r.rec[:len(r.rec):len(r.rec)], nil
			}
		}
	}
}

// Offset returns the offset of the record Next returned last: the file
// offset of its first chunk, as Writer.WriteRecord reported it.
func (r *Reader) Offset() int64 {
	return r.recOff
}

// TornTail reports whether the log ended in a torn tail: bytes after the
// last intact record that do not form an intact record. offset is where the
// intact log ends, the length to truncate the file to. It is meaningful once
// Next has returned io.EOF; ok is false before that, and when the file ends
// exactly at the end of its last record.
func (r *Reader) TornTail() (offset int64, ok bool) {
	return r.end, r.torn
}

// NotALog reports, once Next has returned io.EOF, that the file shows no
// sign of being a log: not one chunk of it is intact, and it is neither all
// zeros (space preallocated and never written) nor shorter than a chunk
// header, nor a first chunk with a plausible header (type 1–4, a length
// within the block) cut short by the end of the file. Those are the shapes
// the torn first write of a log takes when the disk keeps a prefix of what
// it was given, or only zeros. Random bytes, or a file in another format,
// read as not a log; so does a file whose first chunk is whole but fails
// its checksum, which is damage or a write whose later pages never reached
// the disk, and cannot be told from random bytes with a plausible header.
// It is false before Next returns io.EOF.
//
// Next itself reports such a file as a torn tail at offset 0, and recovery
// drops it as the torn tail of the newest WAL: a file system may leave
// whatever its disk held in space a crash kept it from writing, so a log's
// torn first write can look like this, and refusing it would leave a DB
// that cannot be opened after a crash in its first write. A tool that
// examines a file with no crash to explain it (bloomkv inspect) reports it
// as corruption instead.
func (r *Reader) NotALog() bool {
	return r.notALog
}

func (r *Reader) readBlock() error {
	r.blockOff += int64(r.n)
	n, err := io.ReadFull(r.r, r.buf)
	r.n, r.pos = n, 0
	switch err {
	case nil:
		return nil
	case io.EOF, io.ErrUnexpectedEOF:
		r.eof = true
		return nil
	}
	return fmt.Errorf("wal: reading %s at offset %d: %w", r.file, r.blockOff+int64(n), err)
}

// finish ends a log that has been read to its end.
func (r *Reader) finish() error {
	r.torn = r.blockOff+int64(r.n) > r.end
	// Without an intact chunk, damage was met at offset 0, and Next read
	// the whole file looking for valid data after it; a file shorter than
	// a header never reached damaged at all.
	r.notALog = r.torn && !r.intact && r.blockOff+int64(r.n) >= HeaderSize && !r.cut && !r.zero
	r.err = io.EOF
	return r.err
}

func (r *Reader) fail(err error) error {
	r.err = err
	return err
}

func (r *Reader) outOfSequence(off int64, t byte, start int64) error {
	return r.fail(base.Corruptf(r.file, off,
		"%s chunk where the record begun at offset %d should continue with MIDDLE or LAST", chunkName(t), start))
}

// damaged decides what the damaged chunk at off is: the torn tail, if no
// valid chunk starts at or after position from of the current block, or
// corruption otherwise.
func (r *Reader) damaged(off int64, from int, format string, args ...any) error {
	// Without an intact chunk the damage is at offset 0, in the first block,
	// and the search reads every later block: together, the whole file.
	r.zero = !r.intact && isZero(r.buf[:r.n])
	for {
		if p, ok := findChunk(r.buf[:r.n], from); ok {
			format += "; a valid chunk follows at offset %d"
			args = append(args, r.blockOff+int64(p))
			return r.fail(base.Corruptf(r.file, off, format, args...))
		}
		if r.eof {
			return r.finish()
		}
		if err := r.readBlock(); err != nil {
			return r.fail(err)
		}
		r.zero = r.zero && isZero(r.buf[:r.n])
		from = 0
	}
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// findChunk returns the position of the first valid chunk in block at or
// after from. block is one block of the log, so a chunk must end within it.
//
// It tries every position: after damage, nothing says where the next chunk
// header is, except that one starts the next block.
func findChunk(block []byte, from int) (int, bool) {
	for p := from; p+HeaderSize <= len(block); p++ {
		t := block[p+6]
		if t == 0 || t > maxChunk {
			continue // cheap rejection, and all of a zeroed region
		}
		end := p + HeaderSize + int(binary.LittleEndian.Uint16(block[p+4:p+6]))
		if end > len(block) {
			continue
		}
		if binary.LittleEndian.Uint32(block[p:p+4]) == chunkCRC(block[p+6:end]) {
			return p, true
		}
	}
	return 0, false
}

// lengthDamaged handles a chunk whose stored length has one bit flipped
// (the length is not under the CRC) and is valid with its true length n:
// the search for valid data after it starts at its true end. Started at the
// end the flipped length claims, which may lie far past the data, it would
// find nothing, and a damaged chunk in the middle of a log would pass for a
// torn tail, silently dropping every later record.
func (r *Reader) lengthDamaged(off int64, t byte, length, n int) error {
	r.intact = true // at its true length, the chunk passes its checksum
	return r.damaged(off, r.pos+HeaderSize+n, "%s chunk length %d is damaged: the chunk is intact with length %d", chunkName(t), length, n)
}

// lengthFlipped returns n if the chunk at the start of h (the rest of its
// block), whose stored length is length and which is not valid as stored, is
// a valid chunk with length n, which differs from length in one bit: the
// signature of a flipped bit in the length field. A crash never produces it:
// a torn write leaves the header as written. It returns -1 otherwise.
func lengthFlipped(h []byte, length int) int {
	for b := range 16 {
		n := length ^ 1<<b
		if end := HeaderSize + n; end <= len(h) && binary.LittleEndian.Uint32(h[0:4]) == chunkCRC(h[6:end]) {
			return n
		}
	}
	return -1
}
