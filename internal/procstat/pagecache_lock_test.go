package procstat

import (
	"testing"
	"time"
)

// TestPageCacheLock checks the lock DropPageCache and HoldPageCache share:
// holders share it, and an exclusive taker (a drop) gets it only once
// every holder has released it. A lock that failed to exclude is seen
// only if the taker got it within the wait, so the test can miss a broken
// lock on a slow machine, but never fails a working one.
func TestPageCacheLock(t *testing.T) {
	first, err := HoldPageCache()
	if err != nil {
		t.Fatal(err)
	}
	second, err := HoldPageCache() // shared: granted beside the first
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan func(), 1)
	go func() {
		release, err := lockPageCache(true)
		if err != nil {
			t.Error(err)
			release = func() {}
		}
		got <- release
	}()
	for i, release := range []func(){first, second} {
		select {
		case <-got:
			t.Fatalf("the exclusive lock was granted while %d holders held it shared", 2-i)
		case <-time.After(50 * time.Millisecond):
		}
		release()
	}
	(<-got)() // granted once both are released
}
