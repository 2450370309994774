package blob

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"

	"github.com/bloomkv/bloomkv/internal/compress"
)

// Writer writes a blob file of format version 3, or 2 if it needs no
// padding (the oldest version that holds it): Add each value, then
// Finish. It buffers its writes; Finish flushes them. The
// caller syncs and closes the file.
type Writer struct {
	w           *bufio.Writer
	compression compress.Codec
	off         uint64
	values      uint64
	valueBytes  uint64
	hdr         [crcLen + binary.MaxVarintLen64 + 1]byte
	padding     []byte
	// padded is set once a padding record is written: the file is of
	// version 3, else of version 2, the oldest that holds it.
	padded  bool
	scratch []byte
	err     error
	done    bool
}

// NewWriter returns a Writer of a blob file to w that compresses each
// value with c where that saves at least an eighth of it.
func NewWriter(w io.Writer, c compress.Codec) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), compression: c}
}

// errFinished is Add's and Finish's error after Finish.
var errFinished = errors.New("blob: writer already finished")

// Add appends value, compressed if that pays, as the next record and
// returns its offset and stored length, which with the file's number make
// its Handle. Once a write fails, every later call returns the same error.
func (w *Writer) Add(value []byte) (off, length uint64, err error) {
	if w.done {
		return 0, 0, errFinished
	}
	stored, c, scratch := valueEncoder.Encode(w.compression, value, w.scratch)
	w.scratch = scratch
	off, err = w.AddStored(stored, c)
	return off, uint64(len(stored)), err
}

// AddStored appends a record of stored bytes stored as c — as
// Reader.ReadStored returns them — and returns its offset: a value moved
// from one blob file to another is copied as it is stored, neither
// decompressed nor compressed again.
func (w *Writer) AddStored(stored []byte, c compress.Codec) (uint64, error) {
	if w.done {
		return 0, errFinished
	}
	if w.err != nil {
		return 0, w.err
	}
	hdr := appendRecordHeader(w.hdr[:0], stored, byte(c))
	if pad := paddingBefore(w.off, uint64(len(hdr)+len(stored))); pad > 0 {
		w.padding = appendPadding(w.padding[:0], pad)
		if _, w.err = w.w.Write(w.padding); w.err != nil {
			return 0, w.err
		}
		w.off += pad
		w.padded = true
	}
	if _, w.err = w.w.Write(hdr); w.err != nil {
		return 0, w.err
	}
	if _, w.err = w.w.Write(stored); w.err != nil {
		return 0, w.err
	}
	off := w.off
	w.off += uint64(len(hdr) + len(stored))
	w.values++
	w.valueBytes += uint64(len(stored))
	return off, nil
}

// Size is the number of bytes written so far, records and padding.
func (w *Writer) Size() uint64 { return w.off }

// Finish writes the footer, flushes, and describes the file.
func (w *Writer) Finish() (Properties, error) {
	if w.done {
		return Properties{}, errFinished
	}
	w.done = true
	if w.err != nil {
		return Properties{}, w.err
	}
	version := uint32(formatVersion2)
	if w.padded {
		version = formatVersion3
	}
	footer := appendFooter(make([]byte, 0, FooterLen), w.values, w.valueBytes, version)
	if _, err := w.w.Write(footer); err != nil {
		return Properties{}, err
	}
	if err := w.w.Flush(); err != nil {
		return Properties{}, err
	}
	return Properties{Values: w.values, ValueBytes: w.valueBytes, Size: w.off + FooterLen, Version: version}, nil
}
