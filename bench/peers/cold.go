package peers

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// dropCachesFile is where Linux takes the order to drop its caches.
const dropCachesFile = "/proc/sys/vm/drop_caches"

// DropPageCache writes every dirty page back (sync) and then drops the
// page cache, dentries and inodes (echo 3 > /proc/sys/vm/drop_caches), so
// that the reads after it come from the device: what Measure.Cold does
// before each read workload. It needs Linux and root, and says so.
func DropPageCache() error {
	syscall.Sync()
	if err := os.WriteFile(dropCachesFile, []byte("3"), 0); err != nil {
		if errors.Is(err, os.ErrPermission) {
			return fmt.Errorf("dropping the page cache needs root: %w", err)
		}
		return fmt.Errorf("dropping the page cache needs Linux's %s: %w", dropCachesFile, err)
	}
	return nil
}

// DeviceReadBytes returns the bytes this process has had read from storage
// so far: read_bytes of /proc/self/io, which counts what reached the block
// device (page cache misses and their read-ahead), not what read calls
// asked for.
func DeviceReadBytes() (int64, error) {
	f, err := os.Open("/proc/self/io")
	if err != nil {
		return 0, fmt.Errorf("device reads need Linux's /proc/self/io: %w", err)
	}
	defer f.Close()
	return parseReadBytes(f)
}

// parseReadBytes returns the read_bytes field of a /proc/<pid>/io file.
func parseReadBytes(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "read_bytes:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/self/io: read_bytes %q: %w", v, err)
			}
			return n, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("/proc/self/io: %w", err)
	}
	return 0, errors.New("/proc/self/io has no read_bytes line")
}
