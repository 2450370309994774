package bloomkv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

// TestScanReportsErrors checks Scan against a map model, and that a read
// failing in the middle of a scan stops it and is returned, not lost: a
// table's read, and with the values separated a blob file's.
func TestScanReportsErrors(t *testing.T) {
	for _, tc := range []struct {
		suffix  string
		minSize int
	}{{".sst", ValueSeparationOff}, {".blob", 1 << 10}} {
		t.Run(tc.suffix, func(t *testing.T) { testScanReportsErrors(t, tc.suffix, tc.minSize) })
	}
}

func testScanReportsErrors(t *testing.T, suffix string, minSize int) {
	var failReads atomic.Bool
	inj := vfs.NewInjecting(vfs.NewMem(), func(op vfs.Op) bool {
		return failReads.Load() && op.Kind == vfs.OpReadAt && strings.HasSuffix(op.Name, suffix)
	})
	d, err := Open("db", &Options{FS: inj, BlockCacheSize: -1, BlockSize: 256, ValueSeparation: ValueSeparation{MinSize: minSize}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// Values of 2 KiB, half of them random, so that the table outgrows an
	// iterator's read-ahead window (64 KiB): a scan goes on reading the
	// file to its end.
	rng := rand.New(rand.NewPCG(1, 2))
	m := kvModel{}
	for i := range 500 {
		k, v := fmt.Sprintf("k%04d", i), string(fillValue(rng, nil, 2<<10))
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
			failReads.Store(true) // the next read of the file fails
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
