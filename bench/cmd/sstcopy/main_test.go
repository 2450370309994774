package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/fuse"
	"github.com/bloomkv/bloomkv/sstable"
)

// TestCopy writes a source table with package sstable from outside the
// store's module, copies it with other settings, and checks the copy
// against the entries written: the same keys, versions and values, in
// order, and the filter asked for.
func TestCopy(t *testing.T) {
	for _, compression := range []string{"none", "snappy", "zstd"} {
		dir := t.TempDir()
		var stdout, stderr bytes.Buffer
		if code := run([]string{"-demo", dir, "-n", "3000", "-compression", compression, "-filter", "fuse:12"}, &stdout, &stderr); code != 0 {
			t.Fatalf("%s: exit %d: %s", compression, code, stderr.String())
		}
		// 3000 values and 300 tombstones.
		if !strings.Contains(stdout.String(), "copied 3300 entries") {
			t.Errorf("%s: output %q", compression, stdout.String())
		}
		r, closeCopy, err := openTable(filepath.Join(dir, "copy.sst"))
		if err != nil {
			t.Fatal(err)
		}
		// A 12-bit fuse filter of 3000 keys: the formula's size.
		if got := r.Properties(); got.Entries != 3300 || got.Tombstones != 300 || got.FilterFamily != sstable.FuseFamily ||
			got.FilterFPBits != 12 || got.FilterBytes != uint64(fuse.SizeBytes(3000, 12)) {
			t.Errorf("%s: copy's properties %+v", compression, got)
		}
		it := r.NewIterator()
		i, n := 0, 0
		for ok := it.First(); ok; ok = it.Next() {
			k := it.Key()
			if want := fmt.Sprintf("key%08d", i); string(k.UserKey) != want {
				t.Fatalf("%s: entry %d is %q, want %q", compression, n, k.UserKey, want)
			}
			if k.Kind() == sstable.KindSet {
				if want := fmt.Sprintf("value %d", i); string(it.Value()) != want {
					t.Fatalf("%s: %q = %q, want %q", compression, k.UserKey, it.Value(), want)
				}
				i++
			}
			n++
		}
		if err := it.Error(); err != nil || n != 3300 {
			t.Errorf("%s: %d entries, %v", compression, n, err)
		}
		it.Close()
		closeCopy()
	}
}

// TestCopyRefusesCorruption checks that a damaged source is reported as
// corruption, with the file's name, and no copy is made whole.
func TestCopyRefusesCorruption(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "source.sst")
	if err := writeDemo(src, 100); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(src)
	b[len(b)-3] ^= 0xff // the footer's magic
	os.WriteFile(src, b, 0o644)
	var stdout, stderr bytes.Buffer
	if code := run([]string{src, filepath.Join(dir, "copy.sst")}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "source.sst") {
		t.Errorf("exit %d, stderr %q; want 1, naming the file", code, stderr.String())
	}
	_, _, err := openTable(src)
	if !errors.Is(err, sstable.ErrCorruption) {
		t.Errorf("openTable of the damaged source: %v; want ErrCorruption", err)
	}
}
