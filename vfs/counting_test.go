package vfs

import (
	"bytes"
	"maps"
	"strings"
	"testing"
)

func TestDefaultClassify(t *testing.T) {
	tests := []struct{ name, want string }{
		{"000001.sst", KindTable},
		{"/db/000123.sst", KindTable},
		{"000001.log", KindWAL},
		{"db/000002.log", KindWAL},
		{"MANIFEST-000001", KindManifest},
		{"/db/MANIFEST-000042", KindManifest},
		{"CURRENT", KindOther},
		{"LOCK", KindOther},
		{"MANIFEST", KindOther},
		{"000001.sst.tmp", KindOther},
		{"sst", KindOther},
		{"/db/MANIFEST-1/000001", KindOther},
		{"/db/x.sst/CURRENT", KindOther},
		{"", KindOther},
	}
	for _, tt := range tests {
		if got := DefaultClassify(tt.name); got != tt.want {
			t.Errorf("DefaultClassify(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestCountingExact drives a known sequence of calls and compares the counts
// with the numbers worked out by hand from that sequence.
func TestCountingExact(t *testing.T) {
	mem := NewMem()
	must(t, mem.MkdirAll("db"))
	c := NewCounting(mem, nil)

	write := func(name string, syncs int, chunks ...string) {
		f, err := c.Create(name)
		must(t, err)
		for _, s := range chunks {
			if _, err := f.Write([]byte(s)); err != nil {
				t.Fatal(err)
			}
		}
		for range syncs {
			must(t, f.Sync())
		}
		must(t, f.Close())
	}
	write("db/000001.sst", 1, strings.Repeat("t", 60), strings.Repeat("t", 40))
	write("db/000002.log", 2, strings.Repeat("w", 10), strings.Repeat("w", 20))
	write("db/MANIFEST-000001", 1, "edits")
	write("db/CURRENT", 0, "MANIFEST-000001\n")

	sst, err := c.Open("db/000001.sst")
	must(t, err)
	buf := make([]byte, 100)
	sst.ReadAt(buf[:10], 0)                            // 10 bytes
	sst.ReadAt(buf[:10], 95)                           // 5 bytes and io.EOF
	sst.ReadAt(buf[:10], -1)                           // error, 0 bytes
	sst.Read(buf[:50])                                 // 50 bytes
	sst.Read(buf[:100])                                // the other 50
	sst.Read(buf[:1])                                  // io.EOF
	sst.Write([]byte("nope"))                          // read-only: fails, 0 bytes
	if _, err := c.Open("db/000009.sst"); err == nil { // missing, still an open
		t.Fatal("Open of a missing table succeeded")
	}
	wal, err := c.Open("db/000002.log")
	must(t, err)
	wal.Read(buf[:64]) // 30 bytes
	wal.Read(buf[:64]) // io.EOF

	want := map[string]Counts{
		KindTable:    {Creates: 1, Opens: 2, Reads: 3, ReadAts: 3, BytesRead: 115, Writes: 3, BytesWritten: 100, Syncs: 1},
		KindWAL:      {Creates: 1, Opens: 1, Reads: 2, BytesRead: 30, Writes: 2, BytesWritten: 30, Syncs: 2},
		KindManifest: {Creates: 1, Writes: 1, BytesWritten: 5, Syncs: 1},
		KindOther:    {Creates: 1, Writes: 1, BytesWritten: 16},
	}
	if got := c.Snapshot(); !maps.Equal(got, want) {
		t.Fatalf("Snapshot:\n got %+v\nwant %+v", got, want)
	}
	if got := c.Kind(KindTable).ReadCalls(); got != 6 {
		t.Errorf("table ReadCalls = %d, want 6", got)
	}
	if got := c.Kind("never-seen"); got != (Counts{}) {
		t.Errorf("Kind of an unseen kind = %+v, want zero", got)
	}

	c.Reset()
	zero := map[string]Counts{KindTable: {}, KindWAL: {}, KindManifest: {}, KindOther: {}}
	if got := c.Snapshot(); !maps.Equal(got, zero) {
		t.Fatalf("after Reset: %+v, want all zero", got)
	}
	// Files opened before Reset keep counting into the same counters.
	sst.ReadAt(buf[:4], 0)
	if got, want := c.Kind(KindTable), (Counts{ReadAts: 1, BytesRead: 4}); got != want {
		t.Fatalf("after Reset and one ReadAt: %+v, want %+v", got, want)
	}
	if got := c.Kind(KindWAL); got != (Counts{}) {
		t.Fatalf("wal after Reset: %+v, want zero", got)
	}
}

func TestCountingClassifierAndPassThrough(t *testing.T) {
	mem := NewMem()
	var classified []string
	c := NewCounting(mem, func(name string) string {
		classified = append(classified, name)
		return "all"
	})
	writeFile(t, c, "a.sst", "12345", true)
	writeFile(t, c, "b.log", "678", false)
	must(t, c.MkdirAll("d"))
	must(t, c.Rename("a.sst", "d/a.sst"))
	must(t, c.SyncDir("d"))
	if _, err := c.Stat("d/a.sst"); err != nil {
		t.Fatal(err)
	}
	names, err := c.List("/")
	must(t, err)
	if got := strings.Join(names, ","); got != "b.log,d" {
		t.Errorf("List through Counting = %q, want %q", got, "b.log,d")
	}
	// What went through Counting reached the wrapped FS.
	if got, _ := readFile(mem, "d/a.sst"); got != "12345" {
		t.Errorf("wrapped FS has %q, want %q", got, "12345")
	}
	must(t, c.Remove("b.log"))
	if _, err := mem.Stat("b.log"); errClass(err) != "notexist" {
		t.Errorf("Remove through Counting did not reach the wrapped FS: %v", err)
	}
	l, err := c.Lock("LOCK")
	must(t, err)
	if _, err := mem.Lock("LOCK"); errClass(err) != "locked" {
		t.Errorf("Lock through Counting did not lock the wrapped FS: %v", err)
	}
	l.Close()

	want := map[string]Counts{"all": {Creates: 2, Writes: 2, BytesWritten: 8, Syncs: 1}}
	if got := c.Snapshot(); !maps.Equal(got, want) {
		t.Errorf("Snapshot = %+v, want %+v", got, want)
	}
	if got := strings.Join(classified, ","); got != "a.sst,b.log" {
		t.Errorf("classifier saw %q, want the names of the created files", got)
	}
	if got := c.PathJoin("x", "y.sst"); got != "x/y.sst" || c.PathBase(got) != "y.sst" || c.PathDir(got) != "x" {
		t.Errorf("path helpers through Counting: %q %q %q", got, c.PathBase(got), c.PathDir(got))
	}
}

func TestWrappersOfNilFS(t *testing.T) {
	for name, fsys := range map[string]FS{
		"NewCounting":  NewCounting(nil, nil),
		"NewInjecting": NewInjecting(nil, nil),
	} {
		_, cerr := fsys.Create("a")
		_, oerr := fsys.Open("a")
		_, lerr := fsys.Lock("LOCK")
		_, listErr := fsys.List("/")
		_, serr := fsys.Stat("a")
		errs := []error{cerr, oerr, lerr, listErr, serr, fsys.Remove("a"), fsys.Rename("a", "b"), fsys.SyncDir("/"), fsys.MkdirAll("d")}
		for _, err := range errs {
			if err == nil || !strings.Contains(err.Error(), name+" was given a nil FS") {
				t.Errorf("%s(nil): got %v, want an error naming the nil FS", name, err)
			}
		}
		if j := fsys.PathJoin("a", "b"); j != "a/b" || fsys.PathBase(j) != "b" || fsys.PathDir(j) != "a" {
			t.Errorf("%s(nil): path helpers broken: %q", name, j)
		}
	}
}

func TestCountingFileContents(t *testing.T) {
	// Counting must not alter what passes through it.
	c := NewCounting(NewMem(), nil)
	payload := bytes.Repeat([]byte{0, 1, 2, 3, 255}, 300)
	writeFile(t, c, "x.sst", string(payload), true)
	f, err := c.Open("x.sst")
	must(t, err)
	defer f.Close()
	got := make([]byte, len(payload))
	if n, err := f.ReadAt(got, 0); n != len(payload) || err != nil {
		t.Fatalf("ReadAt = %d, %v", n, err)
	}
	if !bytes.Equal(got, payload) {
		t.Fatal("ReadAt through Counting returned different bytes")
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != int64(len(payload)) {
		t.Fatalf("Stat through Counting = %v, %v", fi, err)
	}
}
