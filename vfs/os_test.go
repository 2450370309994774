package vfs

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestOSFilesAreRealFiles checks the OS FS against package os directly: what
// one writes, the other reads.
func TestOSFilesAreRealFiles(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "000001.log")
	payload := bytes.Repeat([]byte("bloomkv"), 1000)

	f, err := Default.Create(name)
	must(t, err)
	for chunk := range slices.Chunk(payload, 999) {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
		// fdatasync after each append, as a WAL with sync on does.
		must(t, f.Sync())
	}
	fi, err := f.Stat()
	must(t, err)
	if fi.Size() != int64(len(payload)) {
		t.Errorf("Stat size %d, want %d", fi.Size(), len(payload))
	}
	must(t, f.Close())
	must(t, Default.SyncDir(dir))

	got, err := os.ReadFile(name)
	must(t, err)
	if !bytes.Equal(got, payload) {
		t.Fatalf("os.ReadFile got %d bytes, want the %d written", len(got), len(payload))
	}

	must(t, os.WriteFile(filepath.Join(dir, "CURRENT"), []byte("MANIFEST-000001\n"), 0o644))
	if s, err := readFile(Default, filepath.Join(dir, "CURRENT")); err != nil || s != "MANIFEST-000001\n" {
		t.Fatalf("read of a file written by package os: %q, %v", s, err)
	}
	names, err := Default.List(dir)
	must(t, err)
	if want := []string{"000001.log", "CURRENT"}; !slices.Equal(names, want) {
		t.Fatalf("List = %q, want %q", names, want)
	}
}
