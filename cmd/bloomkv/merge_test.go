package main

import (
	"path/filepath"
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
