package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestMergeCommand runs scripts of merge commands: a counter, appends, the
// merger recorded by the first and refused if another is asked for, and
// the other commands opening a database with merges.
func TestMergeCommand(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"counter", []step{
			{args: []string{"merge", "-db", "DB", "-merger", "int64add", "c", "5"}, stdout: "5\n"},
			{args: []string{"merge", "-db", "DB", "c", "-7"}, stdout: "-2\n"},
			{args: []string{"merge", "-db", "DB", "-merger", "int64add", "d", "1"}, stdout: "1\n"},
			{args: []string{"merge", "-db", "DB", "c", "x"}, code: exitUsage,
				stderr: "bloomkv merge: OPERAND \"x\": int64add adds a decimal integer\n"},
			{args: []string{"merge", "-db", "DB", "-merger", "append", "c", "x"}, code: exitFailure,
				stderr: "bloomkv merge: open: Options.Merger is \"bloomkv.append\", but the DB was written with merger \"bloomkv.int64add\"\n"},
			{args: []string{"get", "-db", "DB", "-hex", "64"}, stdout: "0100000000000000\n"},
		}},
		{"append", []step{
			{args: []string{"merge", "-db", "DB", "-merger", "append", "k", "a"}, stdout: "a\n"},
			{args: []string{"put", "-db", "DB", "k", "base:"}},
			{args: []string{"merge", "-db", "DB", "k", "b"}, stdout: "base:b\n"},
			{args: []string{"scan", "-db", "DB"}, stdout: "k\tbase:b\n"},
		}},
		{"no merger", []step{
			{args: []string{"put", "-db", "DB", "k", "v"}},
			{args: []string{"merge", "-db", "DB", "k", "v"}, code: exitUsage,
				stderr: "bloomkv merge: the database has no merger: give -merger (it is then recorded, for good)\n"},
			{args: []string{"merge", "-db", "DB", "-merger", "sum", "k", "v"}, code: exitUsage,
				stderr: "bloomkv merge: -merger \"sum\": want int64add or append\n"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runScript(t, filepath.Join(t.TempDir(), "db"), tc.steps)
		})
	}
}

// TestInspectMerges checks that inspect counts and shows a WAL's merge
// operands.
func TestInspectMerges(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	runScript(t, dir, []step{
		{args: []string{"merge", "-db", "DB", "-merger", "append", "k", "a"}, stdout: "a\n"},
	})
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no WAL: %v", err)
	}
	var stdout, stderr bytes.Buffer
	for _, l := range logs {
		if code := run([]string{"inspect", "-v", l}, &stdout, &stderr); code != 0 {
			t.Fatalf("inspect %s: exit %d, %s", l, code, stderr.String())
		}
	}
	out := stdout.String()
	if !strings.Contains(out, "MERGE k = a") || !strings.Contains(out, "1 merge)") {
		t.Errorf("inspect of the WALs:\n%s", out)
	}
}
