package bloomkv

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/vfs"
)

// TestManifestRotationRetry makes every rotation fail for a while, at the
// creation of the new manifest: the DB goes on with the old one, each
// attempt comes only once the manifest has grown by another eighth since
// the last (so not at every edit), each logs one warning, and once the
// failures stop the next attempt succeeds and leaves one manifest.
func TestManifestRotationRetry(t *testing.T) {
	mem := vfs.NewMem()
	var mu sync.Mutex
	failing := false
	var attempts []int64 // the old manifest's size at each failed attempt
	inj := vfs.NewInjecting(mem, func(op vfs.Op) bool {
		if op.Kind != vfs.OpCreate || !strings.Contains(op.Name, "MANIFEST-") {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		if !failing {
			return false
		}
		nums, current, _ := dirManifests(mem, "db")
		if len(nums) != 1 || nums[0] != current {
			t.Errorf("at a rotation: manifests %v, CURRENT naming %d", nums, current)
		}
		st, err := mem.Stat(manifest.MakeFilepath(mem, "db", manifest.FileTypeManifest, current))
		if err != nil {
			t.Error(err)
		} else {
			attempts = append(attempts, st.Size())
		}
		return true
	})
	warnings := 0
	d, err := Open("db", &Options{
		FS: inj, MemtableSize: 1 << 20, MaxManifestFileSize: minMaxManifestFileSize, L0CompactionTrigger: noCompaction,
		Logger: slog.New(countingHandler{&mu, &warnings}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if d != nil {
			d.Close()
		}
	}()
	m := kvModel{}
	flushes := func(n int) {
		t.Helper()
		for i := range n {
			k, v := fmt.Sprintf("k%03d", i%50), fmt.Sprintf("%d|%s", len(m), strings.Repeat("x", i%200))
			if err := d.Put([]byte(k), []byte(v), NoSync); err != nil {
				t.Fatal(err)
			}
			m[k] = v
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	flushes(5)
	mu.Lock()
	failing = true
	mu.Unlock()
	first := d.liveManifest()
	const failingFlushes = 150
	flushes(failingFlushes)
	mu.Lock()
	failing = false
	n, w := len(attempts), warnings
	mu.Unlock()
	if d.liveManifest() != first {
		t.Fatal("the manifest rotated while every rotation failed")
	}
	if n < 3 || n > failingFlushes/4 || w != n {
		t.Fatalf("%d failed rotations (%d warnings) in %d flushes; want a few, spaced out, each logged once", n, w, failingFlushes)
	}
	for i := 1; i < n; i++ {
		if attempts[i] < attempts[i-1]+attempts[i-1]/8 {
			t.Fatalf("attempt %d at %d bytes, after one at %d: sooner than an eighth more", i, attempts[i], attempts[i-1])
		}
	}
	flushes(40)
	if d.liveManifest() == first {
		t.Fatal("no rotation once the failures stopped")
	}
	if nums, current, err := dirManifests(mem, "db"); err != nil || len(nums) != 1 || nums[0] != current {
		t.Fatalf("after the rotation: manifests %v, CURRENT naming %d (%v)", nums, current, err)
	}
	err = d.Close()
	d = nil
	if err != nil {
		t.Fatal(err)
	}
	d2, err := Open("db", &Options{FS: mem.CrashClone(vfs.CrashOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if got, err := readAll(d2); err != nil || diffModels(got, m) != "" {
		t.Fatalf("after a crash: %v %s", err, diffModels(got, m))
	}
	t.Logf("%d failed rotations in %d flushes, at manifest sizes %v", n, failingFlushes, attempts)
}
