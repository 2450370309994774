package vfs

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"sync"
	"testing"
)

// workload is a fixed sequence of operations, in the order the store uses
// them, that stops at the first error. workloadOps lists them by hand.
func workload(fsys FS) (err error) {
	if err := fsys.MkdirAll("db"); err != nil {
		return err
	}
	l, err := fsys.Lock("db/LOCK")
	if err != nil {
		return err
	}
	defer l.Close()
	for _, f := range []struct{ name, data string }{{"db/000001.log", "record"}, {"db/tmp", "MANIFEST-000001\n"}} {
		w, err := fsys.Create(f.name)
		if err != nil {
			return err
		}
		if _, err := io.WriteString(w, f.data); err != nil {
			return err
		}
		if err := w.Sync(); err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		if f.name == "db/000001.log" {
			if err := fsys.SyncDir("db"); err != nil {
				return err
			}
		}
	}
	if err := fsys.Rename("db/tmp", "db/CURRENT"); err != nil {
		return err
	}
	if err := fsys.SyncDir("db"); err != nil {
		return err
	}
	r, err := fsys.Open("db/000001.log")
	if err != nil {
		return err
	}
	if _, err := r.Read(make([]byte, 3)); err != nil {
		return err
	}
	if _, err := r.ReadAt(make([]byte, 3), 3); err != nil {
		return err
	}
	if _, err := r.Stat(); err != nil {
		return err
	}
	if err := r.Close(); err != nil {
		return err
	}
	if _, err := fsys.List("db"); err != nil {
		return err
	}
	if _, err := fsys.Stat("db/CURRENT"); err != nil {
		return err
	}
	return fsys.Remove("db/000001.log")
}

var workloadOps = []string{
	"mkdirall db",
	"lock db/LOCK",
	"create db/000001.log", "write db/000001.log", "sync db/000001.log", "close db/000001.log",
	"syncdir db",
	"create db/tmp", "write db/tmp", "sync db/tmp", "close db/tmp",
	"rename db/tmp -> db/CURRENT",
	"syncdir db",
	"open db/000001.log", "read db/000001.log", "readat db/000001.log", "stat db/000001.log", "close db/000001.log",
	"list db",
	"stat db/CURRENT",
	"remove db/000001.log",
}

func TestInjectingCountsEveryOperation(t *testing.T) {
	var seen []string
	inj := NewInjecting(NewMem(), func(op Op) bool {
		if op.Index != int64(len(seen)) {
			t.Errorf("op %q has index %d, want %d", op, op.Index, len(seen))
		}
		seen = append(seen, strings.TrimPrefix(op.String(), fmt.Sprintf("op %d: ", op.Index)))
		return false
	})
	if err := workload(inj); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(seen, "\n"), strings.Join(workloadOps, "\n"); got != want {
		t.Fatalf("operations seen:\n%s\nwant:\n%s", got, want)
	}
	if inj.Ops() != int64(len(workloadOps)) || inj.Injected() != 0 {
		t.Fatalf("Ops() = %d, Injected() = %d; want %d, 0", inj.Ops(), inj.Injected(), len(workloadOps))
	}
}

// TestInjectingFailAt is the loop crash suites run: fail op 0, 1, 2, … until
// the workload completes without an injection.
func TestInjectingFailAt(t *testing.T) {
	for i := int64(0); ; i++ {
		inj := NewInjecting(NewMem(), FailAt(i))
		err := workload(inj)
		if inj.Injected() == 0 {
			if err != nil {
				t.Fatalf("run %d: no injection, yet %v", i, err)
			}
			if i != int64(len(workloadOps)) {
				t.Fatalf("workload completed at run %d, want at run %d", i, len(workloadOps))
			}
			return
		}
		if i >= int64(len(workloadOps)) {
			t.Fatalf("run %d injected a failure into a %d-op workload", i, len(workloadOps))
		}
		if !errors.Is(err, ErrInjected) {
			t.Fatalf("run %d: got %v, want ErrInjected", i, err)
		}
		if want := fmt.Sprintf("op %d: %s", i, workloadOps[i]); !strings.HasSuffix(err.Error(), want) {
			t.Errorf("run %d: error %q does not name %q", i, err, want)
		}
		if inj.Injected() != 1 || inj.Ops() != i+1 {
			t.Errorf("run %d: Injected() = %d, Ops() = %d; want 1, %d", i, inj.Injected(), inj.Ops(), i+1)
		}
	}
}

// TestInjectedOperationHasNoEffect checks the wrapped FS after each kind of
// injected failure: the operation was not performed (Close excepted).
func TestInjectedOperationHasNoEffect(t *testing.T) {
	failKind := func(k OpKind) func(Op) bool { return func(op Op) bool { return op.Kind == k } }
	tests := []struct {
		kind  OpKind
		run   func(t *testing.T, mem *MemFS, inj *Injecting) error
		check func(t *testing.T, mem *MemFS)
	}{{
		kind: OpCreate,
		run:  func(t *testing.T, _ *MemFS, inj *Injecting) error { _, err := inj.Create("f"); return err },
		check: func(t *testing.T, mem *MemFS) {
			if _, err := mem.Stat("f"); errClass(err) != "notexist" {
				t.Errorf("f exists after a failed Create: %v", err)
			}
		},
	}, {
		kind: OpWrite,
		run: func(t *testing.T, mem *MemFS, _ *Injecting) error {
			inj := NewInjecting(mem, FailAt(1)) // the first write
			f, err := inj.Create("f")
			must(t, err)
			defer f.Close()
			_, err = f.Write([]byte("lost"))
			io.WriteString(f, "kept")
			return err
		},
		check: func(t *testing.T, mem *MemFS) {
			if got, _ := readFile(mem, "f"); got != "kept" {
				t.Errorf("f = %q, want only the second write", got)
			}
		},
	}, {
		kind: OpSync,
		run: func(t *testing.T, mem *MemFS, inj *Injecting) error {
			f, err := inj.Create("f")
			must(t, err)
			defer f.Close()
			io.WriteString(f, "data")
			must(t, mem.SyncDir("/"))
			return f.Sync()
		},
		check: func(t *testing.T, mem *MemFS) {
			if got, _ := readFile(mem.CrashClone(CrashOptions{}), "f"); got != "" {
				t.Errorf("after a failed Sync a crash kept %q", got)
			}
		},
	}, {
		kind: OpRename,
		run: func(t *testing.T, mem *MemFS, inj *Injecting) error {
			writeFile(t, mem, "a", "A", false)
			return inj.Rename("a", "b")
		},
		check: func(t *testing.T, mem *MemFS) {
			if got := tree(t, mem); !maps.Equal(got, map[string]string{"a": "A"}) {
				t.Errorf("after a failed Rename: %q", got)
			}
		},
	}, {
		kind: OpRemove,
		run: func(t *testing.T, mem *MemFS, inj *Injecting) error {
			writeFile(t, mem, "a", "A", false)
			return inj.Remove("a")
		},
		check: func(t *testing.T, mem *MemFS) {
			if _, err := mem.Stat("a"); err != nil {
				t.Errorf("a is gone after a failed Remove: %v", err)
			}
		},
	}, {
		kind: OpMkdirAll,
		run:  func(t *testing.T, _ *MemFS, inj *Injecting) error { return inj.MkdirAll("d") },
		check: func(t *testing.T, mem *MemFS) {
			if _, err := mem.Stat("d"); errClass(err) != "notexist" {
				t.Errorf("d exists after a failed MkdirAll: %v", err)
			}
		},
	}, {
		kind: OpSyncDir,
		run: func(t *testing.T, mem *MemFS, inj *Injecting) error {
			writeFile(t, mem, "f", "data", true)
			return inj.SyncDir("/")
		},
		check: func(t *testing.T, mem *MemFS) {
			if got := tree(t, mem.CrashClone(CrashOptions{})); len(got) != 0 {
				t.Errorf("after a failed SyncDir a crash kept %q", got)
			}
		},
	}, {
		kind: OpLock,
		run:  func(t *testing.T, _ *MemFS, inj *Injecting) error { _, err := inj.Lock("LOCK"); return err },
		check: func(t *testing.T, mem *MemFS) {
			l, err := mem.Lock("LOCK")
			if err != nil {
				t.Errorf("LOCK is held after a failed Lock: %v", err)
				return
			}
			l.Close()
		},
	}, {
		kind: OpRead,
		run: func(t *testing.T, mem *MemFS, _ *Injecting) error {
			writeFile(t, mem, "f", "abc", false)
			inj := NewInjecting(mem, FailAt(1)) // the first read
			f, err := inj.Open("f")
			must(t, err)
			defer f.Close()
			_, err = f.Read(make([]byte, 2))
			b, _ := io.ReadAll(f)
			if string(b) != "abc" {
				t.Errorf("a failed Read moved the offset: then read %q", b)
			}
			return err
		},
		check: func(*testing.T, *MemFS) {},
	}, {
		kind: OpClose,
		run: func(t *testing.T, mem *MemFS, _ *Injecting) error {
			inj := NewInjecting(mem, FailAt(1)) // the first close only
			f, err := inj.Create("f")
			must(t, err)
			err = f.Close()
			if again := f.Close(); errClass(again) != "closed" {
				t.Errorf("second Close = %v; the failed Close did not close the wrapped file", again)
			}
			return err
		},
		check: func(*testing.T, *MemFS) {},
	}}
	for _, tt := range tests {
		t.Run(tt.kind.String(), func(t *testing.T) {
			mem := NewMem()
			inj := NewInjecting(mem, failKind(tt.kind))
			if err := tt.run(t, mem, inj); !errors.Is(err, ErrInjected) {
				t.Fatalf("got %v, want ErrInjected", err)
			}
			tt.check(t, mem)
		})
	}
}

func TestInjectingPredicate(t *testing.T) {
	mem := NewMem()
	var mu sync.Mutex
	var failed []string
	inj := NewInjecting(mem, func(op Op) bool {
		if op.Kind == OpSync && DefaultClassify(op.Name) == KindWAL {
			mu.Lock()
			failed = append(failed, op.Name)
			mu.Unlock()
			return true
		}
		return false
	})
	var errs []string
	for _, name := range []string{"000001.sst", "000002.log", "MANIFEST-000003", "000004.log"} {
		f, err := inj.Create(name)
		must(t, err)
		io.WriteString(f, "x")
		errs = append(errs, errClass(f.Sync()))
		must(t, f.Close())
	}
	if got, want := strings.Join(errs, " "), "ok injected ok injected"; got != want {
		t.Errorf("Sync outcomes %q, want %q", got, want)
	}
	if got, want := strings.Join(failed, " "), "000002.log 000004.log"; got != want {
		t.Errorf("failed %q, want %q", got, want)
	}
	if inj.Injected() != 2 || inj.Ops() != 16 {
		t.Errorf("Injected() = %d, Ops() = %d; want 2, 16", inj.Injected(), inj.Ops())
	}
}

func TestOpStrings(t *testing.T) {
	tests := []struct {
		op   Op
		want string
	}{
		{Op{Kind: OpCreate, Name: "a"}, "op 0: create a"},
		{Op{Kind: OpSyncDir, Name: "/db", Index: 7}, "op 7: syncdir /db"},
		{Op{Kind: OpRename, Name: "tmp", NewName: "CURRENT", Index: 3}, "op 3: rename tmp -> CURRENT"},
		{Op{Kind: OpKind(99), Name: "x"}, "op 0: OpKind(99) x"},
		{Op{Kind: OpKind(-1), Name: "x"}, "op 0: OpKind(-1) x"},
	}
	for _, tt := range tests {
		if got := tt.op.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.op, got, tt.want)
		}
	}
	for k := OpCreate; k <= OpClose; k++ {
		if s := k.String(); s == "" || strings.HasPrefix(s, "OpKind(") {
			t.Errorf("OpKind %d has no name", int(k))
		}
	}
}
