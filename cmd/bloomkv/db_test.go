package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv"
)

// step is one command line of a script and what it must do. In args, "DB"
// stands for the script's database directory.
type step struct {
	args   []string
	code   int
	stdout string // exactly
	stderr string // exactly
}

// runScript runs steps in order against the database directory dir.
func runScript(t *testing.T, dir string, steps []step) {
	t.Helper()
	for i, s := range steps {
		args := slices.Clone(s.args)
		for j, a := range args {
			if a == "DB" {
				args[j] = dir
			}
		}
		var stdout, stderr bytes.Buffer
		code := run(args, &stdout, &stderr)
		if code != s.code || stdout.String() != s.stdout || stderr.String() != s.stderr {
			t.Fatalf("step %d %q: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr %q",
				i, s.args, code, stdout.String(), stderr.String(), s.code, s.stdout, s.stderr)
		}
	}
}

// TestDBCommands runs scripts of database commands, each on a new database.
func TestDBCommands(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"put then get", []step{
			{args: []string{"put", "-db", "DB", "k", "v"}},
			{args: []string{"get", "-db", "DB", "k"}, stdout: "v\n"},
		}},
		{"overwrite", []step{
			{args: []string{"put", "-db", "DB", "k", "v1"}},
			{args: []string{"put", "-db", "DB", "k", "v2"}},
			{args: []string{"get", "-db", "DB", "k"}, stdout: "v2\n"},
		}},
		{"get missing", []step{
			{args: []string{"put", "-db", "DB", "k", "v"}},
			{args: []string{"get", "-db", "DB", "nope"}, code: 3, stderr: "bloomkv get: key not found: nope\n"},
		}},
		{"get missing unprintable", []step{
			{args: []string{"put", "-db", "DB", "k", "v"}},
			{args: []string{"get", "-db", "DB", "a\tb"}, code: 3, stderr: "bloomkv get: key not found: \"a\\tb\"\n"},
			{args: []string{"get", "-db", "DB", "-hex", "00ff"}, code: 3, stderr: "bloomkv get: key not found: 00ff\n"},
		}},
		{"del then get", []step{
			{args: []string{"put", "-db", "DB", "k", "v"}},
			{args: []string{"put", "-db", "DB", "l", "w"}},
			{args: []string{"del", "-db", "DB", "k"}},
			{args: []string{"get", "-db", "DB", "k"}, code: 3, stderr: "bloomkv get: key not found: k\n"},
			{args: []string{"scan", "-db", "DB"}, stdout: "l\tw\n"},
			{args: []string{"del", "-db", "DB", "absent"}}, // no error
		}},
		{"empty key and value", []step{
			{args: []string{"put", "-db", "DB", "", ""}},
			{args: []string{"get", "-db", "DB", ""}, stdout: "\n"},
			{args: []string{"scan", "-db", "DB"}, stdout: "\t\n"},
			{args: []string{"scan", "-db", "DB", "-hex"}, stdout: "\t\n"},
		}},
		{"put with a time-to-live", []step{
			{args: []string{"put", "-db", "DB", "k", "old"}},
			{args: []string{"put", "-db", "DB", "-ttl", "1h", "k", "v"}},
			{args: []string{"get", "-db", "DB", "k"}, stdout: "v\n"},
			// A nanosecond has passed by the get, of the wall clock: the
			// key is deleted, its older value hidden.
			{args: []string{"put", "-db", "DB", "-ttl", "1ns", "k", "v2"}},
			{args: []string{"get", "-db", "DB", "k"}, code: 3, stderr: "bloomkv get: key not found: k\n"},
			{args: []string{"put", "-db", "DB", "-ttl", "0", "k", "v3"}}, // 0: never expires
			{args: []string{"get", "-db", "DB", "k"}, stdout: "v3\n"},
		}},
		{"key beginning with a dash", []step{
			{args: []string{"put", "-db", "DB", "--", "-k", "v"}},
			{args: []string{"get", "-db", "DB", "--", "-k"}, stdout: "v\n"},
		}},
		{"hex round trip", []step{
			{args: []string{"put", "-db", "DB", "-hex", "00ff0a", "00010203"}},
			{args: []string{"put", "-db", "DB", "-hex", "", "7e"}},
			{args: []string{"get", "-db", "DB", "-hex", "00FF0A"}, stdout: "00010203\n"},
			{args: []string{"get", "-db", "DB", "\x00\xff\n"}, stdout: "\x00\x01\x02\x03\n"},
			{args: []string{"get", "-db", "DB", ""}, stdout: "~\n"},
			{args: []string{"scan", "-db", "DB", "-hex"}, stdout: "\t7e\n00ff0a\t00010203\n"},
			{args: []string{"scan", "-db", "DB", "-hex", "-start", "00", "-end", "00ff0b"}, stdout: "00ff0a\t00010203\n"},
			{args: []string{"scan", "-db", "DB"}, stdout: "\t~\n\"\\x00\\xff\\n\"\t\"\\x00\\x01\\x02\\x03\"\n"},
			{args: []string{"del", "-db", "DB", "-hex", "00ff0a"}},
			{args: []string{"get", "-db", "DB", "-hex", "00ff0a"}, code: 3, stderr: "bloomkv get: key not found: 00ff0a\n"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runScript(t, filepath.Join(t.TempDir(), "db"), tc.steps)
		})
	}
}

// seedDB returns a database directory holding the keys the scan golden
// files show: some in an L0 table, some only in the log, one deleted, and
// keys and values that scan must quote.
func seedDB(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db, err := bloomkv.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	write := func(kvs ...string) { // key, value pairs; the value "-" deletes the key
		b := bloomkv.NewBatch()
		for i := 0; i < len(kvs); i += 2 {
			if kvs[i+1] == "-" {
				err = b.Delete([]byte(kvs[i]))
			} else {
				err = b.Set([]byte(kvs[i]), []byte(kvs[i+1]))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Apply(b, nil); err != nil {
			t.Fatal(err)
		}
	}
	write("apple", "red", "banana", "yellow", "cherry", "dark red", "fig", "purple",
		"grape", "green", "key\x00nul", "\xff\xfe", `"quoted"`, "starts with a quote",
		"über", "ünïcode ✓", "", "the empty key")
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	write("date", "brown", "fig", "-", "grape", "green\tseedless", "line", "one\ntwo")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestScanGolden checks scan's output on seedDB's database against
// testdata/NAME.golden; go test -update rewrites the files.
func TestScanGolden(t *testing.T) {
	dir := seedDB(t)
	for _, tc := range []struct {
		name string
		args []string // after scan -db DIR
	}{
		{"scan-all", nil},
		{"scan-range", []string{"-start", "banana", "-end", "grape"}}, // fig is deleted
		{"scan-limit", []string{"-start", "b", "-limit", "2"}},
		{"scan-limit-over", []string{"-end", "c", "-limit", "100"}},
		{"scan-keys-only", []string{"-keys-only", "-start", "k"}},
		{"scan-hex", []string{"-hex", "-start", "6b", "-end", "6c"}}, // [k, l)
		{"scan-empty-range", []string{"-start", "m", "-end", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(append([]string{"scan", "-db", dir}, tc.args...), &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			checkGolden(t, tc.name, stdout.String())
		})
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"":           "",
		"plain text": "plain text",
		"ünïcode ✓":  "ünïcode ✓",
		"tab\there":  `"tab\there"`,
		"nl\n":       `"nl\n"`,
		"\x00":       `"\x00"`,
		"\xff":       `"\xff"`,
		`"quoted"`:   `"\"quoted\""`,
		`mid"quote`:  `mid"quote`,
		"\u200b":     `"\u200b"`, // zero-width space: not printable
	} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestStats(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	runScript(t, dir, []step{
		{args: []string{"put", "-db", "DB", "a", "1"}},
		{args: []string{"put", "-db", "DB", "b", "2"}},
	})
	var stdout, stderr bytes.Buffer
	if code := run([]string{"stats", "-db", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	note, table, ok := strings.Cut(stdout.String(), "\n\n")
	if !ok || note+"\n\n" != statsNote {
		t.Fatalf("stats does not begin with its note on the counters:\n%s", stdout.String())
	}
	lines := strings.Split(table, "\n")
	if f := strings.Fields(lines[0]); !slices.Equal(f[:min(6, len(f))], []string{"level", "tables", "size", "range", "dels", "bits/key"}) {
		t.Fatalf("no level table header in\n%s", stdout.String())
	}
	for _, want := range []string{"\n     L0 ", "\n  total ", "\nfilter memory ", "\nrange scans "} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stats lacks %q:\n%s", want, stdout.String())
		}
	}
}

func TestPutValueFile(t *testing.T) {
	dir := t.TempDir()
	value := "line 1\nline 2\x00\xff" // binary, and 00 is not taken for hex
	file := filepath.Join(dir, "value")
	if err := os.WriteFile(file, []byte(value), 0o644); err != nil {
		t.Fatal(err)
	}
	old := stdin
	stdin = strings.NewReader("from stdin")
	t.Cleanup(func() { stdin = old })

	db := filepath.Join(dir, "db")
	runScript(t, db, []step{
		{args: []string{"put", "-db", "DB", "-value-file", file, "f"}},
		{args: []string{"get", "-db", "DB", "f"}, stdout: value + "\n"},
		{args: []string{"put", "-db", "DB", "-hex", "-value-file", file, "01"}},
		{args: []string{"get", "-db", "DB", "-hex", "01"}, stdout: "6c696e6520310a6c696e65203200ff\n"},
		{args: []string{"put", "-db", "DB", "-value-file", "-", "s"}},
		{args: []string{"get", "-db", "DB", "s"}, stdout: "from stdin\n"},
	})
	var stdout, stderr bytes.Buffer
	code := run([]string{"put", "-db", db, "-value-file", filepath.Join(dir, "absent"), "k"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "no such file") {
		t.Errorf("missing value file: exit %d, stderr %q; want exit 1, no such file", code, stderr.String())
	}
}

// TestPutValueOnStdinTooLarge checks that a value on standard input one
// byte larger than a value may hold is refused, with nothing created: the
// input has no size to tell, so it is read to one byte past the limit.
func TestPutValueOnStdinTooLarge(t *testing.T) {
	old := stdin
	stdin = io.LimitReader(zeros{}, bloomkv.MaxValueSize+1)
	t.Cleanup(func() { stdin = old })
	db := filepath.Join(t.TempDir(), "db")
	var stdout, stderr bytes.Buffer
	code := run([]string{"put", "-db", db, "-value-file", "-", "k"}, &stdout, &stderr)
	want := "bloomkv put: the value on standard input is more than a value may hold (MaxValueSize, 67,108,864 bytes (64.0 MiB))"
	if code != 2 || !strings.Contains(stderr.String(), want) || stdout.Len() > 0 {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 mentioning %q", code, stdout.String(), stderr.String(), want)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("the refused put left %s behind (stat: %v)", db, err)
	}
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestDBErrors checks the failures of the database commands: exit code 2
// and the reason for usage errors, 1 for the rest, and nothing on stdout.
func TestDBErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	runScript(t, dir, []step{{args: []string{"put", "-db", "DB", "k", "v"}}})
	empty := t.TempDir()
	file := filepath.Join(empty, "value") // a file where put wants a directory
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bigKey := strings.Repeat("k", bloomkv.MaxKeySize+1)
	// A value file of 100 MiB (sparse: it takes no disk), outside empty.
	bigValue := filepath.Join(t.TempDir(), "big")
	if f, err := os.Create(bigValue); err != nil {
		t.Fatal(err)
	} else if err := f.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	} else {
		f.Close()
	}

	for _, tc := range []struct {
		args     []string
		code     int
		mentions string
	}{
		{[]string{"put", "k", "v"}, 2, "bloomkv put: missing -db DIR"},
		{[]string{"get", "k"}, 2, "bloomkv get: missing -db DIR"},
		{[]string{"del", "k"}, 2, "bloomkv del: missing -db DIR"},
		{[]string{"scan"}, 2, "bloomkv scan: missing -db DIR"},
		{[]string{"stats"}, 2, "bloomkv stats: missing -db DIR"},
		{[]string{"get", "k", "-db", dir}, 2, "flag -db after the operands: flags come first"},
		{[]string{"scan", "-db", dir, "x", "-limit=3"}, 2, "flag -limit=3 after the operands"},
		{[]string{"put", "-db", dir, "k"}, 2, `want KEY VALUE after the flags, got ["k"]`},
		{[]string{"put", "-db", dir, "k", "v", "w"}, 2, "want KEY VALUE"},
		{[]string{"put", "-db", dir, "-value-file", file, "k", "v"}, 2, "want KEY after"},
		{[]string{"get", "-db", dir}, 2, "want KEY after the flags, got []"},
		{[]string{"get", "-db", dir, "a", "b"}, 2, "want KEY after"},
		{[]string{"del", "-db", dir}, 2, "want KEY after"},
		{[]string{"scan", "-db", dir, "x"}, 2, `unexpected arguments ["x"]`},
		{[]string{"stats", "-db", dir, "x"}, 2, "unexpected arguments"},
		{[]string{"stats", "-db", dir, "-hex"}, 2, "not defined: -hex"},
		{[]string{"scan", "-db", dir, "-limit", "-1"}, 2, "invalid -limit -1"},
		{[]string{"scan", "-db", dir, "-limit", "x"}, 2, "invalid value"},
		{[]string{"put", "-db", dir, "-hex", "zz", "00"}, 2, `KEY "zz" is not hexadecimal`},
		{[]string{"put", "-db", dir, "-ttl", "-5s", "k", "v"}, 2, "-ttl -5s is negative"},
		{[]string{"put", "-db", dir, "-ttl", "soon", "k", "v"}, 2, `invalid value "soon" for flag -ttl`},
		{[]string{"put", "-db", dir, "-hex", "00", "0"}, 2, `VALUE "0" is not hexadecimal`},
		{[]string{"scan", "-db", dir, "-hex", "-end", "g"}, 2, `-end "g" is not hexadecimal`},
		{[]string{"put", "-db", dir, bigKey, "v"}, 2, "bloomkv put: KEY is 65,537 bytes (64.0 KiB), more than a key may hold (MaxKeySize, 65,536 bytes (64.0 KiB))"},
		{[]string{"put", "-db", filepath.Join(empty, "new"), bigKey, "v"}, 2, "more than a key may hold"},
		{[]string{"put", "-db", filepath.Join(empty, "new"), "-value-file", bigValue, "k"}, 2,
			"bloomkv put: the value in " + bigValue + " is 104,857,600 bytes (100 MiB), more than a value may hold (MaxValueSize, 67,108,864 bytes (64.0 MiB))"},
		{[]string{"get", "-db", empty, "k"}, 1, "bloomkv get: " + empty + " holds no bloomkv database"},
		{[]string{"del", "-db", empty, "k"}, 1, "holds no bloomkv database"},
		{[]string{"scan", "-db", empty}, 1, "holds no bloomkv database"},
		{[]string{"stats", "-db", filepath.Join(empty, "absent")}, 1, "holds no bloomkv database"},
		{[]string{"put", "-db", file + "/db", "k", "v"}, 1, "bloomkv put: open " + file + "/db"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.mentions) || stdout.Len() > 0 {
			t.Errorf("%.80q: exit %d, stdout %q, stderr %q; want exit %d mentioning %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.mentions)
		}
	}
	// The commands that must not create a database left the directory
	// without one as it was.
	if entries, err := os.ReadDir(empty); err != nil || len(entries) != 1 {
		t.Errorf("directory without a database now holds %v (%v)", entries, err)
	}
}

// TestLocked checks that a command on a database another holder has open
// fails at once with a clear message.
func TestLocked(t *testing.T) {
	dir := t.TempDir()
	db, err := bloomkv.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, args := range [][]string{
		{"put", "-db", dir, "k", "v"},
		{"get", "-db", dir, "k"},
		{"stats", "-db", dir},
	} {
		var stdout, stderr bytes.Buffer
		code := run(args, &stdout, &stderr)
		want := "bloomkv " + args[0] + ": " + dir + " is in use: another process has the database open\n"
		if code != 1 || stderr.String() != want {
			t.Errorf("%q: exit %d, stderr %q; want exit 1, %q", args, code, stderr.String(), want)
		}
	}
}

// TestReadCommandsChangeNothing checks that get, scan, stats and explain
// leave a database byte for byte as it was — they open it read-only, WAL
// and all — and work while another read-only command has it open.
func TestReadCommandsChangeNothing(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"put", "-db", dir, "a", "1"}, {"put", "-db", dir, "b", "2"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, stderr.String())
		}
	}
	snapshot := func() map[string]string {
		out := map[string]string{}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = string(b)
		}
		return out
	}
	before := snapshot()
	reader, err := bloomkv.Open(dir, &bloomkv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	for _, args := range [][]string{
		{"get", "-db", dir, "a"},
		{"scan", "-db", dir},
		{"stats", "-db", dir},
		{"explain", "-db", dir, "b"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Errorf("%q beside a read-only reader: exit %d: %s", args, code, stderr.String())
		}
	}
	after := snapshot()
	if len(after) != len(before) {
		t.Errorf("the directory held %d files, now %d", len(before), len(after))
	}
	for name, contents := range before {
		if after[name] != contents {
			t.Errorf("%s changed", name)
		}
	}
}
