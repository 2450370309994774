package manifest

import (
	"errors"
	iofs "io/fs"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/record"
	"github.com/bloomkv/bloomkv/vfs"
)

func TestRecoverNoManifest(t *testing.T) {
	for _, fs := range []vfs.FS{newMemDir(t), vfs.NewMem()} { // empty dir; no dir
		_, err := Recover(fs, dir)
		if !errors.Is(err, ErrNoManifest) || !errors.Is(err, iofs.ErrNotExist) || errors.Is(err, base.ErrCorruption) {
			t.Fatalf("Recover of an empty directory: %v", err)
		}
	}
}

func TestRecoverBadCurrent(t *testing.T) {
	for _, tc := range []struct {
		name, current, want string
	}{
		{"empty", "", "newline"},
		{"no newline", "MANIFEST-000001", "newline"},
		{"two newlines", "MANIFEST-000001\n\n", "do not name a manifest"},
		{"garbage", "hello\n", "do not name a manifest"},
		{"a WAL", "000001.log\n", "do not name a manifest"},
		{"short number", "MANIFEST-1\n", "do not name a manifest"},
		{"a path", "../MANIFEST-000001\n", "do not name a manifest"},
		{"too long", strings.Repeat("x", 100) + "\n", "too long"},
		{"missing manifest", "MANIFEST-000007\n", "MANIFEST-000007, which does not exist"},
	} {
		mem := newMemDir(t)
		if _, err := Create(mem, dir, 1, &start); err != nil {
			t.Fatal(err)
		}
		writeFile(t, mem, dir+"/CURRENT", []byte(tc.current))
		_, err := Recover(mem, dir)
		var ce *base.CorruptionError
		if !errors.Is(err, base.ErrCorruption) || !errors.As(err, &ce) || ce.File != dir+"/CURRENT" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Recover error %v, want corruption of CURRENT containing %q", tc.name, err, tc.want)
		}
		if errors.Is(err, iofs.ErrNotExist) || errors.Is(err, ErrNoManifest) {
			t.Errorf("%s: corruption looks like a missing database: %v", tc.name, err)
		}
	}
}

// writeManifest writes MANIFEST-<num> from raw records and points CURRENT
// at it, returning each record's offset.
func writeManifest(t *testing.T, mem *vfs.MemFS, num uint64, records ...[]byte) []int64 {
	t.Helper()
	f, err := mem.Create(MakeFilepath(mem, dir, FileTypeManifest, num))
	if err != nil {
		t.Fatal(err)
	}
	w := record.NewWriter(f)
	var offs []int64
	for _, r := range records {
		off, err := w.WriteRecord(r)
		if err != nil {
			t.Fatal(err)
		}
		offs = append(offs, off)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	writeFile(t, mem, dir+"/CURRENT", []byte(MakeFilename(FileTypeManifest, num)+"\n"))
	return offs
}

func TestRecoverCorruptManifest(t *testing.T) {
	enc := func(e VersionEdit) []byte { return e.Encode(nil) }
	snap := enc(VersionEdit{NextFileNumber: 10, LastSeqNum: 9, NewFiles: []NewFile{{Level: 1, Meta: meta(2, "a", "c", 1, 9)}}})
	const manifest = dir + "/MANIFEST-000001"
	for _, tc := range []struct {
		name    string
		records [][]byte
		bad     int // index of the record the error must point at
		want    string
	}{
		{"undecodable edit", [][]byte{snap, uv(99), enc(VersionEdit{LastSeqNum: 10})}, 1, "unknown tag 99"},
		{"undecodable last edit", [][]byte{snap, enc(VersionEdit{LastSeqNum: 10}), uv(tagLogNumber)}, 2, "truncated"},
		{"edit that does not apply", [][]byte{snap, enc(VersionEdit{DeletedFiles: []DeletedFile{{1, 3}}})}, 1, "does not apply"},
		{"counter goes back", [][]byte{snap, enc(VersionEdit{LastSeqNum: 8})}, 1, "last seqnum back"},
		{"version breaks an invariant", [][]byte{snap, enc(VersionEdit{NewFiles: []NewFile{{Level: 1, Meta: meta(3, "b", "d", 1, 1)}}})}, 1, "overlap"},
		{"no snapshot", [][]byte{enc(VersionEdit{LastSeqNum: 3})}, 0, "next file number 0"},
	} {
		mem := newMemDir(t)
		offs := writeManifest(t, mem, 1, tc.records...)
		_, err := Recover(mem, dir)
		var ce *base.CorruptionError
		if !errors.As(err, &ce) || !errors.Is(err, base.ErrCorruption) || ce.File != manifest || !strings.Contains(ce.Reason, tc.want) {
			t.Errorf("%s: Recover error %v, want corruption of %s containing %q", tc.name, err, manifest, tc.want)
			continue
		}
		if want := offs[tc.bad]; ce.Offset != want && tc.bad > 0 {
			t.Errorf("%s: corruption at offset %d, want %d", tc.name, ce.Offset, want)
		}
	}

	// A manifest CURRENT names must hold its snapshot.
	mem := newMemDir(t)
	writeManifest(t, mem, 1)
	if _, err := Recover(mem, dir); !errors.Is(err, base.ErrCorruption) || !strings.Contains(err.Error(), "no intact edit") {
		t.Errorf("empty manifest: %v", err)
	}
	// ... numbered below its next file number.
	mem = newMemDir(t)
	writeManifest(t, mem, 12, snap)
	if _, err := Recover(mem, dir); !errors.Is(err, base.ErrCorruption) || !strings.Contains(err.Error(), "manifest's own number") {
		t.Errorf("manifest numbered past its next file number: %v", err)
	}
}

// TestRecoverDamagedRecord damages each record of a real manifest in turn:
// damage before the last record is corruption at that record's offset;
// damage to the last record is a torn tail, that edit never acknowledged.
func TestRecoverDamagedRecord(t *testing.T) {
	mem := newMemDir(t)
	g := &gen{rng: rand.New(rand.NewPCG(12, 12)), m: newModel()}
	l, err := Create(mem, dir, 1, &start)
	if err != nil {
		t.Fatal(err)
	}
	states := appendEdits(t, l, g, 8)
	l.Close()
	name := dir + "/MANIFEST-000001"
	good, err := readFile(mem, name)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	r := record.NewReader(strings.NewReader(string(good)), name)
	for {
		if _, err := r.Next(); err != nil {
			break
		}
		offs = append(offs, r.Offset())
	}
	if len(offs) != len(states) {
		t.Fatalf("%d records for %d states", len(offs), len(states))
	}
	for i, off := range offs {
		bad := slices.Clone(good)
		bad[off+record.HeaderSize] ^= 0x10 // the record's first payload byte
		writeFile(t, mem, name, bad)
		rec, err := Recover(mem, dir)
		if i == len(offs)-1 {
			if err != nil || !rec.TornTail || !sameState(rec.State, states[i-1]) {
				t.Fatalf("damaged last record: %v, torn %v", err, rec.TornTail)
			}
			continue
		}
		var ce *base.CorruptionError
		if !errors.As(err, &ce) || ce.File != name || ce.Offset != off {
			t.Fatalf("record %d damaged: Recover error %v, want corruption of %s at %d", i, err, name, off)
		}
	}
}

// TestRecoverReadError checks that an I/O failure is reported as such, not
// as corruption, which would invite repairing a healthy database.
func TestRecoverReadError(t *testing.T) {
	mem := newMemDir(t)
	if _, err := Create(mem, dir, 1, &start); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"/CURRENT", "/MANIFEST-000001"} {
		fs := vfs.NewInjecting(mem, func(op vfs.Op) bool {
			return (op.Kind == vfs.OpRead || op.Kind == vfs.OpOpen) && op.Name == dir+target
		})
		_, err := Recover(fs, dir)
		if !errors.Is(err, vfs.ErrInjected) || errors.Is(err, base.ErrCorruption) || errors.Is(err, ErrNoManifest) {
			t.Errorf("failing %s: Recover error %v", target, err)
		}
	}
}
