package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv"
)

// TestCheckpointCommand checkpoints a database that has writes in a table
// and in its log, beside a read-only reader, and checks that the copy
// holds them, that later writes stay out of it, and that the database's
// directory did not change.
func TestCheckpointCommand(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "db")
	out := filepath.Join(root, "backup", "one")
	runScript(t, dir, []step{
		{args: []string{"put", "-db", "DB", "a", "1"}},
		{args: []string{"put", "-db", "DB", "b", "2"}},
	})
	// Flushed by an Open that replays the log; c stays in the log.
	runScript(t, dir, []step{
		{args: []string{"put", "-db", "DB", "c", "3"}},
		{args: []string{"del", "-db", "DB", "a"}},
	})
	before := dirFiles(t, dir)
	reader, err := bloomkv.Open(dir, &bloomkv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	runScript(t, dir, []step{{args: []string{"checkpoint", "-db", "DB", out}}})
	reader.Close()
	if after := dirFiles(t, dir); !equalFiles(before, after) {
		t.Errorf("checkpoint changed the database's directory")
	}
	runScript(t, dir, []step{
		{args: []string{"put", "-db", "DB", "d", "4"}},
		{args: []string{"scan", "-db", "DB"}, stdout: "b\t2\nc\t3\nd\t4\n"},
	})
	runScript(t, out, []step{
		{args: []string{"scan", "-db", "DB"}, stdout: "b\t2\nc\t3\n"},
		{args: []string{"get", "-db", "DB", "a"}, code: 3, stderr: "bloomkv get: key not found: a\n"},
		// A checkpoint opens as a database of its own.
		{args: []string{"put", "-db", "DB", "e", "5"}},
		{args: []string{"scan", "-db", "DB"}, stdout: "b\t2\nc\t3\ne\t5\n"},
	})
}

// TestCheckpointCommandErrors checks checkpoint's failures: usage errors
// exit 2, the rest 1, and a refused OUT is left as it was.
func TestCheckpointCommandErrors(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "db")
	runScript(t, dir, []step{{args: []string{"put", "-db", "DB", "k", "v"}}})
	full := filepath.Join(root, "full")
	if err := os.Mkdir(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "keep"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	for _, tc := range []struct {
		args     []string
		code     int
		mentions string
	}{
		{[]string{"checkpoint", filepath.Join(root, "out")}, 2, "bloomkv checkpoint: missing -db DIR"},
		{[]string{"checkpoint", "-db", dir}, 2, "want OUT after the flags, got []"},
		{[]string{"checkpoint", "-db", dir, "a", "b"}, 2, "want OUT after the flags"},
		{[]string{"checkpoint", "-db", dir, ""}, 2, "OUT is empty"},
		{[]string{"checkpoint", "-db", dir, "-hex", "x"}, 2, "not defined: -hex"},
		{[]string{"checkpoint", "-db", dir, full}, 1, "bloomkv checkpoint: checkpoint " + full + ": not empty (keep)"},
		{[]string{"checkpoint", "-db", empty, filepath.Join(root, "out")}, 1, "bloomkv checkpoint: " + empty + " holds no bloomkv database"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.mentions) || stdout.Len() > 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d mentioning %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.mentions)
		}
	}
	if b, err := os.ReadFile(filepath.Join(full, "keep")); err != nil || string(b) != "mine" {
		t.Errorf("the refused directory's file: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(root, "out")); !os.IsNotExist(err) {
		t.Errorf("a failed checkpoint left its directory (%v)", err)
	}

	// A database another process has open read-write.
	db, err := bloomkv.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var stdout, stderr bytes.Buffer
	want := "bloomkv checkpoint: " + dir + " is in use: another process has the database open\n"
	if code := run([]string{"checkpoint", "-db", dir, filepath.Join(root, "out")}, &stdout, &stderr); code != 1 || stderr.String() != want {
		t.Errorf("checkpoint of a database open elsewhere: exit %d, stderr %q; want 1, %q", code, stderr.String(), want)
	}
}

// dirFiles returns the contents of each file in dir, by name.
func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func equalFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
