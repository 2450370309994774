//go:build unix

package vfs

import (
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeAndMap writes data to the OS file name, opens it and maps it; the
// mapping and the file are closed when the test ends.
func writeAndMap(t *testing.T, name string, data []byte) (File, *Mapping) {
	t.Helper()
	must(t, os.WriteFile(name, data, 0o644))
	f, err := Default.Open(name)
	must(t, err)
	t.Cleanup(func() { f.Close() })
	m, err := Map(f)
	must(t, err)
	t.Cleanup(func() { m.Close() })
	return f, m
}

// TestMapReadAt checks a Mapping's ReadAt against the file's own ReadAt,
// the oracle: the same bytes, counts and io.EOF at and past the end, for
// reads at random offsets and lengths and at the edges.
func TestMapReadAt(t *testing.T) {
	name := filepath.Join(t.TempDir(), "000001.sst")
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 3*4096+123)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	f, m := writeAndMap(t, name, data)
	if m.Size() != int64(len(data)) {
		t.Fatalf("Size %d, want %d", m.Size(), len(data))
	}
	type read struct {
		off int64
		n   int
	}
	size := int64(len(data))
	reads := []read{{0, 0}, {0, 1}, {0, len(data)}, {4095, 2}, {size - 1, 1}, {size - 1, 2}, {size, 0}, {size, 1}, {size + 10, 4}, {0, len(data) + 1}, {size + 10, 0}}
	for range 200 {
		reads = append(reads, read{rng.Int64N(size + 100), rng.IntN(9000)})
	}
	for _, r := range reads {
		want := make([]byte, r.n)
		wantN, wantErr := f.ReadAt(want, r.off)
		got := make([]byte, r.n)
		gotN, gotErr := m.ReadAt(got, r.off)
		if gotN != wantN || (gotErr == nil) != (wantErr == nil) || !errors.Is(gotErr, wantErr) || string(got[:gotN]) != string(want[:wantN]) {
			t.Errorf("ReadAt(%d bytes, %d) = %d, %v; the file's ReadAt %d, %v (or the bytes differ)", r.n, r.off, gotN, gotErr, wantN, wantErr)
		}
	}
	if _, err := m.ReadAt(make([]byte, 1), -1); err == nil {
		t.Error("ReadAt at offset -1: no error")
	}
}

// TestMapFaultIsAnError truncates a mapped file beneath its mapping: a read
// of the pages gone faults (SIGBUS), which ReadAt returns as
// ErrMappedFault naming the file and offset, and the process goes on.
func TestMapFaultIsAnError(t *testing.T) {
	name := filepath.Join(t.TempDir(), "000002.sst")
	_, m := writeAndMap(t, name, make([]byte, 4*4096))
	must(t, os.Truncate(name, 4096))
	if _, err := m.ReadAt(make([]byte, 10), 10); err != nil {
		t.Fatalf("read of the page kept: %v", err)
	}
	n, err := m.ReadAt(make([]byte, 100), 3*4096)
	if n != 0 || !errors.Is(err, ErrMappedFault) {
		t.Fatalf("read of a page truncated away = %d, %v; want 0, ErrMappedFault", n, err)
	}
	if want := name + " at offset 12288"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %q", err, want)
	}
}

// TestMapNotMappable checks the files Map refuses with ErrNotMappable: an
// empty OS file, and the files of the other FSs, whose reads must go
// through ReadAt to be counted, failed or kept in memory.
func TestMapNotMappable(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	must(t, os.WriteFile(empty, nil, 0o644))
	full := filepath.Join(dir, "full")
	must(t, os.WriteFile(full, []byte("bloomkv"), 0o644))
	mem := NewMem()
	writeFile(t, mem, "/full", "bloomkv", true)
	for _, tc := range []struct {
		name string
		fs   FS
		path string
	}{
		{"empty OS file", Default, empty},
		{"MemFS", mem, "/full"},
		{"Counting", NewCounting(Default, nil), full},
		{"Injecting", NewInjecting(Default, nil), full},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := tc.fs.Open(tc.path)
			must(t, err)
			defer f.Close()
			if m, err := Map(f); !errors.Is(err, ErrNotMappable) {
				if m != nil {
					m.Close()
				}
				t.Errorf("Map: %v, want ErrNotMappable", err)
			}
		})
	}
}

var _ io.ReaderAt = (*Mapping)(nil)
