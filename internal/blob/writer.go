package blob

import (
	"bufio"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
)

// Writer writes a blob file: Add each value, then Finish. It buffers its
// writes; Finish flushes them. The caller syncs and closes the file.
type Writer struct {
	w          *bufio.Writer
	off        uint64
	values     uint64
	valueBytes uint64
	hdr        [maxRecordOverhead]byte
	err        error
	done       bool
}

// NewWriter returns a Writer of a blob file to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriterSize(w, 64<<10)}
}

// errFinished is Add's and Finish's error after Finish.
var errFinished = errors.New("blob: writer already finished")

// Add appends value as the next record and returns its offset, which with
// the file's number and len(value) makes its Handle. Once a write fails,
// every later call returns the same error.
func (w *Writer) Add(value []byte) (uint64, error) {
	if w.done {
		return 0, errFinished
	}
	if w.err != nil {
		return 0, w.err
	}
	n := binary.PutUvarint(w.hdr[crcLen:], uint64(len(value)))
	crc := crc32.Update(crc32.Checksum(w.hdr[crcLen:crcLen+n], castagnoli), castagnoli, value)
	binary.LittleEndian.PutUint32(w.hdr[:crcLen], crc)
	if _, w.err = w.w.Write(w.hdr[:crcLen+n]); w.err != nil {
		return 0, w.err
	}
	if _, w.err = w.w.Write(value); w.err != nil {
		return 0, w.err
	}
	off := w.off
	w.off += uint64(crcLen + n + len(value))
	w.values++
	w.valueBytes += uint64(len(value))
	return off, nil
}

// Size is the number of bytes written so far, records only.
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
	footer := appendFooter(make([]byte, 0, FooterLen), w.values, w.valueBytes)
	if _, err := w.w.Write(footer); err != nil {
		return Properties{}, err
	}
	if err := w.w.Flush(); err != nil {
		return Properties{}, err
	}
	return Properties{Values: w.values, ValueBytes: w.valueBytes, Size: w.off + FooterLen}, nil
}
