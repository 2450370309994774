package procstat

import (
	"fmt"
	"os"
	"path/filepath"
)

// pageCacheLockName is the file, in the system's temporary directory, whose
// lock the processes of one machine share around the page cache: a drop
// takes it exclusive, a measurement of what the cache holds takes it shared.
const pageCacheLockName = "bloomkv-page-cache.lock"

// HoldPageCache takes the machine's page-cache lock shared, and returns
// once no DropPageCache of any process is dropping: until release is
// called, none starts. A measurement that must not see the cache dropped
// under it — a check of which pages are resident; the reads of a cold
// workload after its own drop, for which DropPageCache returns holding it
// — holds it throughout, so that a benchmark or test in another process
// (go test runs packages in parallel) waits rather than empties the cache
// mid-measurement. The caller must release it before it calls
// DropPageCache itself, which would wait for it.
func HoldPageCache() (release func(), err error) {
	return lockPageCache(false)
}

// lockPageCache takes the page-cache lock, exclusive or shared, and
// returns the function that releases it.
func lockPageCache(exclusive bool) (release func(), err error) {
	path := filepath.Join(os.TempDir(), pageCacheLockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("the page-cache lock: %w", err)
	}
	if err := flock(f, exclusive); err != nil {
		f.Close()
		return nil, fmt.Errorf("the page-cache lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil // closing the file releases its lock
}
