package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv"
	"github.com/klauspost/compress/s2"
)

// TestInspectAndTreeBlobFiles writes values on both sides of MinSize:
// inspect of the blob file checks and lists its records, of the table
// shows handles in place of the large values, of the manifest the blob
// file and the table's reference; tree lists the blob file; and a flipped
// byte of a record is reported as corruption with exit status 1.
func TestInspectAndTreeBlobFiles(t *testing.T) {
	dir := t.TempDir()
	db, err := bloomkv.Open(dir, &bloomkv.Options{ValueSeparation: bloomkv.ValueSeparation{MinSize: 100}})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("B", 150)
	for i := range 3 {
		if err := db.Put(fmt.Appendf(nil, "big%d", i), []byte(big), bloomkv.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Put([]byte("small"), []byte("s"), bloomkv.NoSync); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	blobs, err := filepath.Glob(filepath.Join(dir, "*.blob"))
	if err != nil || len(blobs) != 1 {
		t.Fatalf("blob files %v, %v; want one", blobs, err)
	}
	name := filepath.Base(blobs[0])
	// Each value is stored snappy-compressed (the DB's compression), in
	// the encoder's bytes.
	stored := len(s2.EncodeSnappy(nil, []byte(big)))

	out := runOK(t, "inspect", "-v", blobs[0])
	for _, want := range []string{"blob file " + name, fmt.Sprintf("3 values stored in %d bytes", 3*stored), "every record checked",
		"for 450 bytes of values, 3 of them compressed", fmt.Sprintf("%d bytes, snappy = 150 bytes: BBB", stored)} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect %s: no %q in\n%s", name, want, out)
		}
	}
	out = runOK(t, "inspect", "-v", filepath.Join(dir, newest(t, dir, ".sst")))
	if !strings.Contains(out, fmt.Sprintf("big0#1,SETBLOB -> %s@0+%d", name, stored)) || !strings.Contains(out, "small#4,SET = s") {
		t.Errorf("inspect of the table shows no handle into %s and inline value:\n%s", name, out)
	}
	out = runOK(t, "inspect", "-v", filepath.Join(dir, newest(t, dir, "MANIFEST-")))
	if !strings.Contains(out, "+ "+name+"  ") || !strings.Contains(out, fmt.Sprintf("values in %s (%d bytes)", name, 3*stored)) || !strings.Contains(out, "0% dead") {
		t.Errorf("inspect of the manifest shows no blob file %s and reference:\n%s", name, out)
	}
	out = runOK(t, "tree", "-db", dir)
	if !strings.Contains(out, "blob files  1 file") || !strings.Contains(out, name) {
		t.Errorf("tree lists no blob file %s:\n%s", name, out)
	}

	data, err := os.ReadFile(blobs[0])
	if err != nil {
		t.Fatal(err)
	}
	data[10] ^= 0x01 // in the first record's value
	damaged := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(damaged, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"inspect", damaged}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "checksum mismatch") {
		t.Fatalf("inspect of a damaged blob file: exit %d, stderr %q; want 1 and a checksum mismatch", code, stderr.String())
	}
}
