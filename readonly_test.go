package bloomkv

import (
	"errors"
	"fmt"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

// TestReadOnly opens DBs read-only — on a MemFS and the OS, with data in
// tables and in WALs longer than a memtable — and checks that every key
// reads as written, that every write fails with ErrReadOnly, and that the
// directory is unchanged byte for byte.
func TestReadOnly(t *testing.T) {
	for _, osFS := range []bool{false, true} {
		t.Run(fmt.Sprintf("os=%v", osFS), func(t *testing.T) {
			fs, dir := vfs.FS(vfs.NewMem()), "db"
			if osFS {
				fs, dir = vfs.Default, t.TempDir()
			}
			opts := Options{FS: fs, MemtableSize: 64 << 10}
			d, err := Open(dir, &opts)
			if err != nil {
				t.Fatal(err)
			}
			m := kvModel{}
			for i := range 3000 {
				k, v := fmt.Sprintf("k%05d", i%2000), fmt.Sprintf("v%d-%s", i, make([]byte, 40))
				if err := d.Put([]byte(k), []byte(v), NoSync); err != nil {
					t.Fatal(err)
				}
				m[k] = v
				if i == 1000 {
					if err := d.Flush(); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := d.Delete([]byte("k00007"), nil); err != nil {
				t.Fatal(err)
			}
			delete(m, "k00007")
			// Close leaves the writes after the flush in WALs (more than a
			// memtable's worth: read-only replay holds several memtables).
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			before := dirContents(t, fs, dir)

			ro := opts
			ro.ReadOnly = true
			r1, err := Open(dir, &ro)
			if err != nil {
				t.Fatalf("read-only Open: %v", err)
			}
			r2, err := Open(dir, &ro)
			if err != nil {
				t.Fatalf("a second read-only Open beside the first: %v", err)
			}
			if _, err := Open(dir, &opts); !errors.Is(err, ErrLocked) {
				t.Errorf("read-write Open beside read-only ones: %v; want ErrLocked", err)
			}
			for _, r := range []*DB{r1, r2} {
				if got, err := readAll(r); err != nil || diffModels(got, m) != "" {
					t.Errorf("read-only scan: %v %s", err, diffModels(got, m))
				}
				for _, k := range []string{"k00000", "k00007", "k01999", "k02000"} {
					if err := checkGet(r, []byte(k), m); err != nil {
						t.Error(err)
					}
				}
			}
			b := NewBatch()
			b.Set([]byte("x"), []byte("y"))
			for name, call := range map[string]func() error{
				"Put":    func() error { return r1.Put([]byte("x"), []byte("y"), nil) },
				"Delete": func() error { return r1.Delete([]byte("k00001"), nil) },
				"Apply":  func() error { return r1.Apply(b, nil) },
				"Flush":  r1.Flush,
				"Compact": func() error {
					return r1.Compact(nil, nil)
				},
				"Resume": r1.Resume,
			} {
				if err := call(); !errors.Is(err, ErrReadOnly) {
					t.Errorf("%s on a read-only DB: %v; want ErrReadOnly", name, err)
				}
			}
			if err := r1.Close(); err != nil {
				t.Errorf("read-only Close: %v", err)
			}
			if err := r2.Close(); err != nil {
				t.Errorf("read-only Close: %v", err)
			}
			if diff := diffContents(before, dirContents(t, fs, dir)); diff != "" {
				t.Errorf("read-only opens changed the directory: %s", diff)
			}

			// A read-write DB keeps read-only opens out, and lets them in
			// once closed.
			w, err := Open(dir, &opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Open(dir, &ro); !errors.Is(err, ErrLocked) {
				t.Errorf("read-only Open beside a read-write one: %v; want ErrLocked", err)
			}
			w.Close()
			r3, err := Open(dir, &ro)
			if err != nil {
				t.Fatalf("read-only Open after the read-write DB closed: %v", err)
			}
			r3.Close()
		})
	}
}

// TestReadOnlyAfterCrash crashes a DB in the middle of durable and
// non-durable writes and checks that a read-only Open of what the crash
// left replays its WALs without writing a byte, sees every durable write,
// and sees what a read-write recovery of the same state then sees.
func TestReadOnlyAfterCrash(t *testing.T) {
	for seed := range uint64(4) {
		mem := vfs.NewMem()
		opts := Options{FS: mem, MemtableSize: 64 << 10}
		d, err := Open("db", &opts)
		if err != nil {
			t.Fatal(err)
		}
		durable := kvModel{}
		all := kvModel{}
		for i := range 1500 {
			k, v := fmt.Sprintf("k%04d", (i*7)%900), fmt.Sprintf("v%d.%d", seed, i)
			wo := NoSync
			if i%5 == 0 {
				wo = Sync
			}
			if err := d.Put([]byte(k), []byte(v), wo); err != nil {
				t.Fatal(err)
			}
			all[k] = v
			if wo == Sync {
				durable = all.clone()
			}
		}
		crashed := mem.CrashClone(vfs.CrashOptions{TornWrites: seed%2 == 1, Seed: seed})
		d.Close()

		before := dirContents(t, crashed, "db")
		ro := Options{FS: crashed, MemtableSize: opts.MemtableSize, ReadOnly: true}
		r, err := Open("db", &ro)
		if err != nil {
			t.Fatalf("seed %d: read-only Open after a crash: %v", seed, err)
		}
		got, err := readAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range durable {
			// A later non-durable write may have survived too, so a
			// durable key holds its durable value or a later one.
			if g, ok := got[k]; !ok || g != v && !laterValue(g, v) {
				t.Errorf("seed %d: %s = %q (present %v); want %q or later", seed, k, g, ok, v)
			}
		}
		if diff := diffContents(before, dirContents(t, crashed, "db")); diff != "" {
			t.Fatalf("seed %d: read-only recovery changed the directory: %s", seed, diff)
		}
		w, err := Open("db", &Options{FS: crashed, MemtableSize: opts.MemtableSize})
		if err != nil {
			t.Fatal(err)
		}
		gotRW, err := readAll(w)
		w.Close()
		if err != nil || diffModels(gotRW, got) != "" {
			t.Errorf("seed %d: read-write recovery sees other data than read-only: %v %s", seed, err, diffModels(gotRW, got))
		}
	}
}

// laterValue reports whether value g ("v<seed>.<i>") was written after v.
func laterValue(g, v string) bool {
	var s1, i1, s2, i2 int
	fmt.Sscanf(g, "v%d.%d", &s1, &i1)
	fmt.Sscanf(v, "v%d.%d", &s2, &i2)
	return i1 > i2
}
