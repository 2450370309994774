package bloomkv

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

// TestScanReportsErrors checks Scan against a map model, and that a read
// failing in the middle of a scan stops it and is returned, not lost.
func TestScanReportsErrors(t *testing.T) {
	var failReads atomic.Bool
	inj := vfs.NewInjecting(vfs.NewMem(), func(op vfs.Op) bool {
		return failReads.Load() && op.Kind == vfs.OpReadAt && strings.HasSuffix(op.Name, ".sst")
	})
	d, err := Open("db", &Options{FS: inj, BlockCacheSize: -1, BlockSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	m := kvModel{}
	for i := range 500 {
		k, v := fmt.Sprintf("k%04d", i), fmt.Sprintf("v%d", i)
		if err := d.Put([]byte(k), []byte(v), NoSync); err != nil {
			t.Fatal(err)
		}
		m[k] = v
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	wantKeys, wantValues := m.sorted([]byte("k0100"), []byte("k0400"))
	var i int
	err = d.Scan([]byte("k0100"), []byte("k0400"), func(k, v []byte) error {
		if i >= len(wantKeys) || string(k) != string(wantKeys[i]) || string(v) != string(wantValues[i]) {
			return fmt.Errorf("pair %d: %q=%q, want %q=%q", i, k, v, wantKeys[min(i, len(wantKeys)-1)], wantValues[min(i, len(wantKeys)-1)])
		}
		i++
		return nil
	})
	if err != nil || i != len(wantKeys) {
		t.Fatalf("Scan: %v after %d pairs; want nil after %d", err, i, len(wantKeys))
	}

	seen := 0
	err = d.Scan(nil, nil, func(k, v []byte) error {
		if seen++; seen == 100 {
			failReads.Store(true) // the next data block's read fails
		}
		return nil
	})
	failReads.Store(false)
	if !errors.Is(err, vfs.ErrInjected) {
		t.Errorf("Scan with a read failing midway: %v after %d pairs; want the injected error", err, seen)
	}
	if seen >= len(m) {
		t.Errorf("Scan saw all %d pairs though a read failed", seen)
	}
}
