// Package procstat reads what the benchmarks (`bloomkv bench`, the peers
// runner) report beside throughput from the operating system: the CPU time
// and peak memory of the process, and what its reads cost below the file
// system — for the cold runs (-cold) it drops the page cache, so that the
// reads after it go to the device, and reads the counters that tell the
// file-system-level reads from the device-level ones.
//
// Two levels are counted, from two sources:
//
//   - File system, per process (/proc/self/io): rchar, the bytes read(2)
//     and pread(2) returned, page-cache hits included, and syscr, the
//     read system calls made. Reads through a memory mapping are in
//     neither (badger maps its tables).
//   - Device: read_bytes of /proc/self/io, the bytes this process caused
//     to be read from storage (page-cache misses and their read-ahead,
//     memory-mapped faults included), exact per process; and the reads
//     completed by the block device holding the database
//     (/sys/dev/block/MAJOR:MINOR/stat, first field), which Linux counts
//     per device, not per process: it includes what every other process
//     read from that device meanwhile. There is no per-process count of
//     device requests; on a machine where the benchmark is the only
//     reader the device's count is the benchmark's.
//
// The I/O counters need Linux; DropPageCache needs root too.
package procstat

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// WriteBack writes every dirty page of the system back to its device
// (sync(2)), so that what runs next does not share the device with the
// writeback of what ran before. It needs Linux, and says so.
func WriteBack() error { return syncAll() }

// dropCachesFile is where Linux takes the order to drop its caches.
const dropCachesFile = "/proc/sys/vm/drop_caches"

// DropPageCache writes every dirty page back (sync) and then drops the
// page cache, dentries and inodes (echo 3 > /proc/sys/vm/drop_caches), so
// that the reads after it come from the device. It takes the machine's
// page-cache lock exclusive for the drop, so it waits for the measurements
// of other processes that hold it (see HoldPageCache), and returns holding
// it shared: until the caller calls release, no process drops the cache
// again, so what the caller measures next is its own reads, not a refill
// after another process's drop.
//
// Holding the lock, it reads this process's executable back into the
// cache: its code is mapped from the page cache, and the faults that would
// bring it back page by page are device reads of the process, counted in
// read_bytes against the workload measured next. (Read before the lock is
// held shared, a drop by another process in between would take the code
// out again.) It needs Linux and root, and says so.
func DropPageCache() (release func(), err error) {
	if err := syncAll(); err != nil {
		return nil, err
	}
	if err := dropExclusive(); err != nil {
		return nil, err
	}
	if release, err = HoldPageCache(); err != nil {
		return nil, err
	}
	if err := readExecutable(); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// dropExclusive drops the page cache under the machine's page-cache lock,
// taken exclusive.
func dropExclusive() error {
	release, err := lockPageCache(true)
	if err != nil {
		return err
	}
	defer release()
	if err := os.WriteFile(dropCachesFile, []byte("3"), 0); err != nil {
		if errors.Is(err, os.ErrPermission) {
			return fmt.Errorf("dropping the page cache needs root (it writes %s): %w", dropCachesFile, err)
		}
		return fmt.Errorf("dropping the page cache needs Linux's %s: %w", dropCachesFile, err)
	}
	return nil
}

// readExecutable reads this process's executable through, into the page
// cache.
func readExecutable() error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("reading the executable back into the page cache: %w", err)
	}
	f, err := os.Open(exe)
	if err != nil {
		return fmt.Errorf("reading the executable back into the page cache: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(io.Discard, f); err != nil {
		return fmt.Errorf("reading the executable back into the page cache: %w", err)
	}
	return nil
}

// ProcIO is this process's I/O counters so far (see the package doc).
type ProcIO struct {
	FileBytes   int64 `json:"file_bytes"`   // rchar: bytes returned by read system calls
	FileReads   int64 `json:"file_reads"`   // syscr: read system calls
	DeviceBytes int64 `json:"device_bytes"` // read_bytes: bytes read from storage for this process
	// WriteBytes is write_bytes less cancelled_write_bytes: the bytes this
	// process dirtied in the page cache for storage (counted as they are
	// dirtied, through write calls or a memory mapping), less those
	// truncated away before they were written back.
	WriteBytes int64 `json:"write_bytes"`
}

// Minus returns p − q.
func (p ProcIO) Minus(q ProcIO) ProcIO {
	return ProcIO{FileBytes: p.FileBytes - q.FileBytes, FileReads: p.FileReads - q.FileReads,
		DeviceBytes: p.DeviceBytes - q.DeviceBytes, WriteBytes: p.WriteBytes - q.WriteBytes}
}

// ReadProcIO returns this process's counters, from /proc/self/io.
func ReadProcIO() (ProcIO, error) {
	f, err := os.Open("/proc/self/io")
	if err != nil {
		return ProcIO{}, fmt.Errorf("I/O counters need Linux's /proc/self/io: %w", err)
	}
	defer f.Close()
	return parseProcIO(f)
}

// parseProcIO parses a /proc/<pid>/io file: its rchar, syscr, read_bytes,
// write_bytes and cancelled_write_bytes lines, all required.
func parseProcIO(r io.Reader) (ProcIO, error) {
	var p ProcIO
	var written, cancelled int64
	fields := map[string]*int64{"rchar": &p.FileBytes, "syscr": &p.FileReads, "read_bytes": &p.DeviceBytes,
		"write_bytes": &written, "cancelled_write_bytes": &cancelled}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), ":")
		dst := fields[name]
		if !ok || dst == nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return p, fmt.Errorf("/proc/self/io: %s %q: %w", name, v, err)
		}
		*dst = n
		delete(fields, name)
	}
	if err := sc.Err(); err != nil {
		return p, fmt.Errorf("/proc/self/io: %w", err)
	}
	for name := range fields {
		return p, fmt.Errorf("/proc/self/io has no %s line", name)
	}
	p.WriteBytes = written - cancelled
	return p, nil
}

// Device is the block device that holds a directory.
type Device struct {
	Name string // as /proc/diskstats names it ("vda", "nvme0n1p2"); "" if unknown
	stat string // its stat file
}

// DeviceOf returns the block device that holds dir, by dir's device
// number (st_dev); an error if dir is on none (tmpfs, overlay, FUSE).
func DeviceOf(dir string) (*Device, error) {
	major, minor, err := deviceNumber(dir)
	if err != nil {
		return nil, fmt.Errorf("device of %s: %w", dir, err)
	}
	d := &Device{stat: fmt.Sprintf("/sys/dev/block/%d:%d/stat", major, minor)}
	if _, err := os.Stat(d.stat); err != nil {
		return nil, fmt.Errorf("%s is on device %d:%d, which is not a block device (no %s): device reads are not counted", dir, major, minor, d.stat)
	}
	if link, err := os.Readlink(fmt.Sprintf("/sys/dev/block/%d:%d", major, minor)); err == nil {
		d.Name = link[strings.LastIndexByte(link, '/')+1:]
	}
	return d, nil
}

// Reads returns the reads the device has completed since boot, every
// process's (the first field of its stat file).
func (d *Device) Reads() (int64, error) {
	b, err := os.ReadFile(d.stat)
	if err != nil {
		return 0, err
	}
	return parseDeviceReads(string(b))
}

// parseDeviceReads returns the first field (reads completed) of a block
// device's stat file.
func parseDeviceReads(s string) (int64, error) {
	f := strings.Fields(s)
	if len(f) < 11 {
		return 0, fmt.Errorf("block device stat %q: want at least 11 fields", s)
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("block device stat: reads completed %q: %w", f[0], err)
	}
	return n, nil
}

// Counters are the file-system and device counters at one moment.
type Counters struct {
	ProcIO
	DeviceReads int64 `json:"device_reads"` // the device's reads completed, every process's; -1 without a device
}

// Minus returns c − o (DeviceReads −1 if either lacks it).
func (c Counters) Minus(o Counters) Counters {
	d := Counters{ProcIO: c.ProcIO.Minus(o.ProcIO), DeviceReads: c.DeviceReads - o.DeviceReads}
	if c.DeviceReads < 0 || o.DeviceReads < 0 {
		d.DeviceReads = -1
	}
	return d
}

// Read returns the counters now; dev may be nil (DeviceReads −1).
func Read(dev *Device) (Counters, error) {
	p, err := ReadProcIO()
	if err != nil {
		return Counters{}, err
	}
	c := Counters{ProcIO: p, DeviceReads: -1}
	if dev != nil {
		if c.DeviceReads, err = dev.Reads(); err != nil {
			return c, err
		}
	}
	return c, nil
}
