package record

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// failingFile accepts limit bytes, then fails every write; it can also fail
// syncs. It records what reached it.
type failingFile struct {
	bytes.Buffer
	limit    int
	short    bool // fail by writing less without an error
	syncErr  error
	syncs    int
	writeErr error
}

func (f *failingFile) Write(p []byte) (int, error) {
	room := f.limit - f.Len()
	if len(p) <= room {
		return f.Buffer.Write(p)
	}
	f.Buffer.Write(p[:max(room, 0)])
	if f.short {
		return max(room, 0), nil
	}
	return max(room, 0), f.writeErr
}

func (f *failingFile) Sync() error {
	f.syncs++
	return f.syncErr
}

func TestWriterStickyError(t *testing.T) {
	errDisk := errors.New("no space left on device")
	for _, tc := range []struct {
		name string
		file *failingFile
		want error
	}{
		{"write error", &failingFile{limit: 40000, writeErr: errDisk}, errDisk},
		{"short write", &failingFile{limit: 40000, short: true}, io.ErrShortWrite},
	} {
		for _, c := range writerConstructors {
			t.Run(tc.name+"/"+c.name, func(t *testing.T) {
				file := *tc.file
				testWriterStickyError(t, c.new(&file), &file, tc.want)
			})
		}
	}
}

// writerConstructors are the two Writers, which must write the same log
// and fail alike.
var writerConstructors = []struct {
	name string
	new  func(io.Writer) *Writer
}{
	{"foreground", NewWriter},
	{"background", NewBackgroundWriter},
}

func testWriterStickyError(t *testing.T, w *Writer, file *failingFile, want error) {
	t.Helper()
	rec := bytes.Repeat([]byte("r"), 3000)
	var err error
	for i := 0; err == nil; i++ {
		if i > 100 {
			t.Fatal("the destination never failed")
		}
		if _, err = w.WriteRecord(rec); err == nil {
			err = w.Flush()
		}
	}
	if !errors.Is(err, want) {
		t.Fatalf("first failure %v, want %v", err, want)
	}
	before := file.Len()
	size := w.Size()
	if _, err2 := w.WriteRecord([]byte("after")); err2 != err {
		t.Fatalf("WriteRecord after the failure: %v, want the sticky %v", err2, err)
	}
	if err2 := w.Flush(); err2 != err {
		t.Fatalf("Flush after the failure: %v, want %v", err2, err)
	}
	if err2 := w.Sync(); err2 != err {
		t.Fatalf("Sync after the failure: %v, want %v", err2, err)
	}
	if w.err != err {
		t.Fatalf("the writer's sticky error is %v, want %v", w.err, err)
	}
	if file.Len() != before || w.Size() != size || file.syncs != 0 {
		t.Fatal("the writer touched the destination after failing")
	}
	// What reached the file is an intact prefix and a torn tail.
	res := readLog(t, bytes.NewReader(file.Bytes()))
	if res.err != io.EOF || !res.torn {
		t.Fatalf("reading the failed log: %v, torn %v; want io.EOF with a torn tail", res.err, res.torn)
	}
}

func TestWriterSync(t *testing.T) {
	f := &failingFile{limit: 1 << 30}
	w := NewWriter(f)
	if _, err := w.WriteRecord([]byte("durable")); err != nil {
		t.Fatal(err)
	}
	if f.Len() != 0 {
		t.Fatal("WriteRecord did not buffer")
	}
	if err := w.Sync(); err != nil || f.syncs != 1 || int64(f.Len()) != w.Size() {
		t.Fatalf("Sync: %v, %d syncs, %d bytes in the file; want nil, 1, %d", err, f.syncs, f.Len(), w.Size())
	}

	errSync := errors.New("fsync: input/output error")
	f.syncErr = errSync
	if err := w.Sync(); !errors.Is(err, errSync) {
		t.Fatalf("Sync = %v, want %v", err, errSync)
	}
	f.syncErr = nil
	if _, err := w.WriteRecord([]byte("x")); !errors.Is(err, errSync) {
		t.Fatalf("WriteRecord after a failed sync = %v, want the sticky %v", err, errSync)
	}
}

func TestWriterWithoutSync(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if _, err := w.WriteRecord([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); !errors.Is(err, ErrNoSync) || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Sync = %v, want ErrNoSync", err)
	}
	if int64(buf.Len()) != w.Size() {
		t.Fatal("Sync without a Syncer did not flush")
	}
	if _, err := w.WriteRecord([]byte("y")); err != nil {
		t.Fatalf("ErrNoSync became sticky: %v", err)
	}
}

func TestWriterAllocs(t *testing.T) {
	w := NewWriter(io.Discard)
	small := make([]byte, 100)
	big := make([]byte, 3*BlockSize)
	if n := testing.AllocsPerRun(100, func() {
		w.WriteRecord(small)
		w.WriteRecord(big)
		w.WriteRecord(nil)
		w.Flush()
	}); n != 0 {
		t.Fatalf("%v allocations per run, want 0", n)
	}
}

func TestReaderAllocs(t *testing.T) {
	wl := writeLog(t, sized(23, 100, 100, 3*BlockSize, 0, 100))
	br := bytes.NewReader(wl.log)
	rd := NewReader(br, logFile)
	read := func() {
		br.Reset(wl.log)
		*rd = Reader{r: br, file: logFile, buf: rd.buf, rec: rd.rec[:0]}
		for {
			if _, err := rd.Next(); err != nil {
				return
			}
		}
	}
	read() // grow the reassembly buffer
	if n := testing.AllocsPerRun(20, read); n != 0 {
		t.Fatalf("%v allocations per pass, want 0", n)
	}
}
