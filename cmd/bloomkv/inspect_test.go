package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/record"
	"github.com/bloomkv/bloomkv/sstable"
)

// TestInspectGolden inspects each kind of file of buildTestDB's database.
func TestInspectGolden(t *testing.T) {
	dir := buildTestDB(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"inspect-table", []string{newest(t, dir, ".sst")}},
		{"inspect-table-v", []string{"-v", newest(t, dir, ".sst")}},
		{"inspect-wal", []string{newest(t, dir, ".log")}},
		{"inspect-manifest", []string{newest(t, dir, "MANIFEST-")}},
		{"inspect-manifest-v", []string{"-v", newest(t, dir, "MANIFEST-")}},
		{"inspect-current", []string{"CURRENT"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"inspect"}, tc.args...)
			args[len(args)-1] = filepath.Join(dir, args[len(args)-1])
			checkGolden(t, tc.name, runOK(t, args...))
		})
	}
}

// writeTestTable writes a table of n keys "key%05d" (values "v%05d") with
// filter spec and prefix extractor prefix (nil for none) to path.
func writeTestTable(t *testing.T, path string, n int, spec sstable.FilterSpec, prefix *sstable.PrefixExtractor) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := sstable.NewWriter(f, sstable.WriterOptions{BlockSize: 512, Filter: spec, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		k := sstable.MakeInternalKey([]byte(fmt.Sprintf("key%05d", i)), sstable.SeqNum(i+1), sstable.KindSet)
		if err := w.Add(k, []byte(fmt.Sprintf("v%05d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestInspectFilterFamilies inspects tables of each filter family: a fuse
// filter with a prefix extractor, one of 16-bit fingerprints, a fuse spec
// too small for a fuse filter (the table gets a Bloom filter of the same
// rate), and no filter.
func TestInspectFilterFamilies(t *testing.T) {
	dir := t.TempDir()
	byFour := &sstable.PrefixExtractor{Name: "test.first4", Split: func(k []byte) int { return 4 }}
	for _, tc := range []struct {
		name   string
		n      int
		spec   sstable.FilterSpec
		prefix *sstable.PrefixExtractor
	}{
		{"inspect-table-fuse8-prefix", 2000, sstable.Fuse(8), byFour},
		{"inspect-table-fuse16", 2000, sstable.Fuse(16), nil},
		{"inspect-table-fuse-fallback", 100, sstable.Fuse(8), nil},
		{"inspect-table-nofilter", 50, sstable.FilterSpec{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "000007.sst")
			writeTestTable(t, path, tc.n, tc.spec, tc.prefix)
			out := runOK(t, "inspect", path)
			// The block list is the same whatever the filter: keep the
			// golden files to the filter's part.
			_, filter, ok := strings.Cut(out, "\nproperties:\n")
			if !ok {
				t.Fatalf("no properties in:\n%s", out)
			}
			checkGolden(t, tc.name, filter)
		})
	}
}

// TestInspectAligned inspects an aligned table with padding: the padding
// inspect prints, per block and in total, is what Reader.Layout reads.
func TestInspectAligned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "000007.sst")
	_, l := writeInspectTable(t, path, sstable.WriterOptions{BlockAlign: true}, 100, bytes.Repeat([]byte("v"), 300))
	if l.Padding == 0 {
		t.Fatal("no padding: the test needs some")
	}
	out := runOK(t, "inspect", path)
	if want := fmt.Sprintf("aligned to 4096-byte pages: %d bytes of padding", l.Padding); !strings.Contains(out, want) {
		t.Fatalf("no %q in:\n%s", want, out)
	}
	for i, b := range l.Data {
		row := regexp.MustCompile(fmt.Sprintf(`(?m)^ *data %d +%d +%d +%d `, i, b.Padding, b.Offset, b.Length))
		if !row.MatchString(out) {
			t.Fatalf("no row for data block %d (padding %d, offset %d) in:\n%s", i, b.Padding, b.Offset, out)
		}
	}
}

// TestInspectPartitioned inspects a table whose index is partitioned: a
// row per partition and one for the top level, where Reader.Layout puts
// them, and the properties' count.
func TestInspectPartitioned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "000008.sst")
	props, l := writeInspectTable(t, path, sstable.WriterOptions{BlockSize: 256, IndexPartitionSize: 128}, 500, []byte("value"))
	if len(l.IndexPartitions) < 2 || uint64(len(l.IndexPartitions)) != props.IndexPartitions {
		t.Fatalf("%d partitions in the layout, %d in the properties: the test needs several", len(l.IndexPartitions), props.IndexPartitions)
	}
	out := runOK(t, "inspect", path)
	rows := []string{fmt.Sprintf(`(?m)^ *index top +0 +%d +%d `, l.Index.Offset, l.Index.Length)}
	for i, b := range l.IndexPartitions {
		rows = append(rows, fmt.Sprintf(`(?m)^ *index part %d +0 +%d +%d `, i, b.Offset, b.Length))
	}
	rows = append(rows, fmt.Sprintf(`index: %d bytes in %d partitions and a top level`, props.IndexBytes, props.IndexPartitions))
	for _, row := range rows {
		if !regexp.MustCompile(row).MatchString(out) {
			t.Fatalf("no match for %s in:\n%s", row, out)
		}
	}
}

// writeInspectTable writes a table of n keys, each with value, to path
// and returns its properties and layout.
func writeInspectTable(t *testing.T, path string, opts sstable.WriterOptions, n int, value []byte) (sstable.Properties, sstable.Layout) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := sstable.NewWriter(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := w.Add(sstable.MakeInternalKey(fmt.Appendf(nil, "key%05d", i), sstable.SeqNum(i+1), sstable.KindSet), value); err != nil {
			t.Fatal(err)
		}
	}
	props, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	r, err := sstable.Open(f, info.Size(), sstable.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := r.Layout()
	if err != nil {
		t.Fatal(err)
	}
	return props, l
}

// TestInspectWAL inspects a WAL with writes in it, then the same WAL with a
// torn tail, written by a DB that is never closed: its memtable is only in
// the WAL.
func TestInspectWAL(t *testing.T) {
	dir := t.TempDir()
	runScript(t, dir, []step{
		{args: []string{"put", "-db", "DB", "apple", "red"}},
		{args: []string{"put", "-db", "DB", "banana", "yellow"}},
		{args: []string{"del", "-db", "DB", "apple"}},
	})
	// Each command's Open flushed the WAL before it; the last one's WAL
	// holds the delete.
	wal := newestWAL(t, dir)
	checkGolden(t, "inspect-wal-v", runOK(t, "inspect", "-v", wal))

	data, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	torn := filepath.Join(t.TempDir(), "000099.log")
	// A record cut short: a header promising more payload than the file has.
	if err := os.WriteFile(torn, append(bytes.Clone(data), 0x12, 0x34, 0x56, 0x78, 100, 0, 1, 'x'), 0o644); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "inspect-wal-torn", runOK(t, "inspect", torn))
}

func newestWAL(t *testing.T, dir string) string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no WAL in %s: %v", dir, err)
	}
	return names[len(names)-1]
}

// TestInspectCorrupt damages each kind of file and checks that inspect
// reports the damage, with exit status 1, and does not panic.
func TestInspectCorrupt(t *testing.T) {
	dir := buildTestDB(t)
	for _, tc := range []struct {
		file     string
		damage   func(b []byte) []byte
		mentions string
	}{
		{newest(t, dir, ".sst"), func(b []byte) []byte { b[10] ^= 0xff; return b }, "data block checksum"},
		{newest(t, dir, ".sst"), func(b []byte) []byte { return b[:len(b)-3] }, "bad magic"},
		{newest(t, dir, ".sst"), func(b []byte) []byte { return b[:10] }, "shorter than a footer"},
		{newest(t, dir, ".sst"), func(b []byte) []byte { b[len(b)-70] ^= 0xff; return b }, "corruption"},
		{newest(t, dir, "MANIFEST-"), func(b []byte) []byte { b[20] ^= 0xff; return append(b, make([]byte, 40000)...) }, "corruption"},
		{"CURRENT", func(b []byte) []byte { return []byte("garbage") }, "not the name of a manifest"},
	} {
		t.Run(tc.file+"/"+tc.mentions, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), tc.file)
			if err := os.WriteFile(path, tc.damage(bytes.Clone(data)), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			code := run([]string{"inspect", "-v", path}, &stdout, &stderr)
			if code != 1 || !strings.Contains(stderr.String(), tc.mentions) {
				t.Fatalf("exit %d, stderr %q; want exit 1 mentioning %q", code, stderr.String(), tc.mentions)
			}
		})
	}
	// A damaged record in the middle of a WAL: three batches, the second
	// with a flipped byte.
	var buf bytes.Buffer
	w := record.NewWriter(&buf)
	var offsets []int64
	for i := range 3 {
		b := make([]byte, 12, 40)
		binary.LittleEndian.PutUint64(b, uint64(10+i))
		binary.LittleEndian.PutUint32(b[8:], 1)
		b = append(b, 1, 1, 'k', 1, 'v') // KindSet "k" = "v"
		off, err := w.WriteRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		offsets = append(offsets, off)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	data[offsets[1]+record.HeaderSize+3] ^= 0xff
	path := filepath.Join(t.TempDir(), "000007.log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"inspect", path}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "checksum mismatch") || !strings.Contains(stdout.String(), "records: 1 ") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1, 1 record, a checksum mismatch", code, stdout.String(), stderr.String())
	}
}

// TestInspectNotALog inspects, as a WAL and as a manifest, files that are
// not logs and logs with and without a torn tail. Random bytes named
// 000098.log or MANIFEST-000097 must not read as "a torn tail at 0" and
// exit 0; a file with no intact chunk is a log only if it is zeros or a first
// record cut short by the end of the file, and a manifest needs an intact
// first edit.
func TestInspectNotALog(t *testing.T) {
	dir := buildTestDB(t)
	manifestLog, err := os.ReadFile(filepath.Join(dir, newest(t, dir, "MANIFEST-")))
	if err != nil {
		t.Fatal(err)
	}
	// A WAL of three batches, each setting "k" = "v".
	var buf bytes.Buffer
	w := record.NewWriter(&buf)
	for i := range 3 {
		b := make([]byte, 12, 40)
		binary.LittleEndian.PutUint64(b, uint64(10+i))
		binary.LittleEndian.PutUint32(b[8:], 1)
		if _, err := w.WriteRecord(append(b, 1, 1, 'k', 1, 'v')); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	walLog := buf.Bytes()

	random := make([]byte, 3*record.BlockSize)
	rng := rand.New(rand.NewPCG(98, 97))
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	if typ := random[6]; typ >= 1 && typ <= 4 {
		t.Fatalf("the random bytes start with a plausible chunk header (type %d); pick another seed", typ)
	}
	// cutRecord is the start of a record a crash cut short: a header
	// promising more payload than the file has.
	cutRecord := []byte{0x12, 0x34, 0x56, 0x78, 100, 0, 1, 'x'}
	flip := func(b []byte, at int) []byte {
		b = bytes.Clone(b)
		b[at] ^= 0x10
		return b
	}
	type want struct {
		code     int
		mentions string // in stderr for exit 1, in stdout for exit 0
	}
	for _, tc := range []struct {
		name              string
		content           func(log []byte) []byte
		wal, manifestWant want
	}{
		{"random bytes", func([]byte) []byte { return random[:4096] },
			want{1, "not a log"}, want{1, "not a log"}},
		{"random bytes over blocks", func([]byte) []byte { return random },
			want{1, "not a log"}, want{1, "not a log"}},
		{"only chunk, bad checksum", func(log []byte) []byte { return flip(firstChunk(t, log), record.HeaderSize+2) },
			want{1, "not a log"}, want{1, "not a log"}},
		{"first chunk, bad checksum, intact chunks after", func(log []byte) []byte { return flip(log, record.HeaderSize+2) },
			want{1, "checksum mismatch"}, want{1, "checksum mismatch"}},
		{"valid log", func(log []byte) []byte { return log },
			want{0, "torn tail: none"}, want{0, "after "}},
		{"valid log, torn tail", func(log []byte) []byte { return append(bytes.Clone(log), cutRecord...) },
			want{0, "torn tail: the intact log ends at"}, want{0, "torn tail at"}},
		{"valid log, zeros after", func(log []byte) []byte { return append(bytes.Clone(log), make([]byte, 5000)...) },
			want{0, "torn tail: the intact log ends at"}, want{0, "torn tail at"}},
		{"zeros, preallocated", func([]byte) []byte { return make([]byte, 5000) },
			want{0, "torn tail: the intact log ends at 0"}, want{1, "no intact edit"}},
		{"first record cut short", func([]byte) []byte { return cutRecord },
			want{0, "torn tail: the intact log ends at 0"}, want{1, "no intact edit"}},
	} {
		for _, kind := range []struct {
			file string
			log  []byte
			want want
		}{
			{"000098.log", walLog, tc.wal},
			{"MANIFEST-000097", manifestLog, tc.manifestWant},
		} {
			t.Run(kind.file+"/"+tc.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), kind.file)
				if err := os.WriteFile(path, tc.content(kind.log), 0o644); err != nil {
					t.Fatal(err)
				}
				var stdout, stderr bytes.Buffer
				code := run([]string{"inspect", path}, &stdout, &stderr)
				out := stdout.String()
				if code != 0 {
					out = stderr.String()
				}
				if code != kind.want.code || !strings.Contains(out, kind.want.mentions) {
					t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d mentioning %q",
						code, stdout.String(), stderr.String(), kind.want.code, kind.want.mentions)
				}
			})
		}
	}
}

// firstChunk returns the first chunk of log, which must be a FULL chunk:
// a log of its first record alone.
func firstChunk(t *testing.T, log []byte) []byte {
	t.Helper()
	end := record.HeaderSize + int(binary.LittleEndian.Uint16(log[4:6]))
	if log[6] != 1 || end >= len(log) {
		t.Fatalf("the log does not start with a FULL chunk followed by more")
	}
	return log[:end]
}

func TestInspectUsage(t *testing.T) {
	notes := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notes, []byte("a text file of no DB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args     []string
		mentions string
	}{
		{[]string{"inspect"}, "want FILE"},
		{[]string{"inspect", notes}, "give -type"},
		{[]string{"inspect", "-type", "nope", "000001.sst"}, "unknown -type"},
		{[]string{"tree"}, "missing -db"},
		{[]string{"explain", "-db", "x"}, "want KEY"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.mentions) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, code, stderr.String(), tc.mentions)
		}
	}
}

// newest returns the name of the highest-numbered file in dir whose name
// starts or ends with pattern ("MANIFEST-", ".sst", ".log"), so that the
// tests follow the file numbers of the DB buildTestDB makes.
func newest(t *testing.T, dir, pattern string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	best := ""
	for _, e := range entries {
		n := e.Name()
		if (strings.HasPrefix(n, pattern) || strings.HasSuffix(n, pattern)) && n > best {
			best = n // zero-padded numbers sort as strings
		}
	}
	if best == "" {
		t.Fatalf("no %s file in %s", pattern, dir)
	}
	return best
}

// TestInspectByContent checks that inspect tells a file's type from its
// bytes: each file of a DB, copied under a name that says nothing, is
// inspected as under its own name (the name in the first line aside).
func TestInspectByContent(t *testing.T) {
	dir := buildTestDB(t)
	// A write the newest WAL keeps: an empty WAL's bytes say nothing.
	var stdout, stderr bytes.Buffer
	if code := run([]string{"put", "-db", dir, "k", "v"}, &stdout, &stderr); code != 0 {
		t.Fatalf("put: exit %d: %s", code, stderr.String())
	}
	for _, name := range []string{newest(t, dir, ".sst"), newest(t, dir, ".log"), newest(t, dir, "MANIFEST-"), "CURRENT"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		renamed := filepath.Join(t.TempDir(), "renamed.bin")
		if err := os.WriteFile(renamed, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var want, got, stderr bytes.Buffer
		if code := run([]string{"inspect", filepath.Join(dir, name)}, &want, &stderr); code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr.String())
		}
		if code := run([]string{"inspect", renamed}, &got, &stderr); code != 0 {
			t.Fatalf("%s renamed: exit %d: %s", name, code, stderr.String())
		}
		if strings.ReplaceAll(got.String(), "renamed.bin", name) != want.String() {
			t.Errorf("%s renamed:\n%s\nwant\n%s", name, got.String(), want.String())
		}
	}
}

// TestInspectShortErrors checks inspect's errors on files that are not
// what it is told they are, or not there: one short line on stderr, with
// one "bloomkv" prefix, and nothing on stdout.
func TestInspectShortErrors(t *testing.T) {
	dir := buildTestDB(t)
	table := filepath.Join(dir, newest(t, dir, ".sst"))
	missing := filepath.Join(dir, "000999.sst")
	for _, tc := range []struct {
		args     []string
		mentions string
	}{
		{[]string{"inspect", missing}, "bloomkv inspect: " + missing + ": no such file\n"},
		{[]string{"inspect", "-type", "current", table}, "not the name of a manifest"},
		{[]string{"inspect", "-type", "manifest", table}, "not a log"},
		{[]string{"inspect", "-type", "wal", table}, "not a log"},
		{[]string{"inspect", "-type", "table", filepath.Join(dir, "CURRENT")}, "corruption"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		msg := stderr.String()
		if code != 1 || !strings.Contains(msg, tc.mentions) || stdout.Len() > 0 || len(msg) > 200 ||
			strings.Count(msg, "\n") != 1 || strings.Count(msg, "bloomkv") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 1, one line under 200 bytes with one \"bloomkv\", mentioning %q",
				tc.args, code, stdout.String(), msg, tc.mentions)
		}
	}
}
