// Package golden compares what a test produces with the file in testdata
// that pins it: a command's output, a writer's bytes. Run with -update, a
// test rewrites its files first, after a change to them that a reviewer
// has checked; without it, a file is never written.
package golden

import (
	"bytes"
	"flag"
	"os"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata (after a reviewed change)")

// Check fails t unless got is the content of the file at path (rewritten
// to got first under -update). Its message shows got when it is text, and
// the first byte that differs when it is not.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
		return
	}
	if bytes.Equal(got, want) {
		return
	}
	if utf8.Valid(got) && utf8.Valid(want) {
		t.Fatalf("output differs from %s:\n%s", path, got)
		return
	}
	i := 0
	for i < min(len(got), len(want)) && got[i] == want[i] {
		i++
	}
	t.Fatalf("%d bytes differ from %s's %d from byte %d on", len(got), path, len(want), i)
}
