// Package memcg runs a process inside a memory cgroup of a given size, so
// that what the process holds — its own memory and the page cache it
// brings in — counts against one limit, as a machine with that much memory
// would count it: a benchmark under a memory cap (`bloomkv bench
// -memlimit`, the peers runner's -memlimit) then reads from the device
// what does not fit, instead of from the page cache of a larger machine.
//
// It needs Linux, root, and a memory controller, in one of two
// hierarchies:
//
//   - cgroup v2, /sys/fs/cgroup a cgroup2 mount: the group is made at the
//     hierarchy's root (the only cgroup that may hold processes and
//     delegate controllers to children), the memory controller enabled
//     for the root's children if it is not, the limit written to
//     memory.max and memory.swap.max set to 0;
//   - cgroup v1, the memory controller mounted at /sys/fs/cgroup/memory:
//     the group is made under the cgroup this process is in (so that a
//     limit above it still holds), the limit written to
//     memory.limit_in_bytes (and memory.memsw.limit_in_bytes where swap
//     is accounted).
//
// New refuses with an error naming the cause when neither is usable or
// the process is not root. A Group's process joins it before it runs:
// Command wraps it in /bin/sh, which writes its own pid into the group's
// cgroup.procs and then executes the program in its place (same pid), so
// that nothing the program does is charged elsewhere. Remove deletes the
// group after its processes have exited; the page cache charged to it
// passes to its parent, as the kernel does with a removed group's pages.
package memcg

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Hierarchy is where a cgroup file system is mounted and which version it
// is.
type Hierarchy struct {
	// Root is the directory of the hierarchy's root: /sys/fs/cgroup (v2),
	// /sys/fs/cgroup/memory (v1).
	Root string
	V2   bool
	// Self is the directory, under Root, of the cgroup this process is in
	// (v1: where groups are made); "" for v2, whose groups are made at
	// Root.
	Self string
}

// SysFS is where Linux mounts its cgroup file systems.
const SysFS = "/sys/fs/cgroup"

// Detect returns the memory cgroup hierarchy under sysfs (SysFS outside
// tests): v2 when sysfs is a cgroup2 mount (it has cgroup.controllers)
// whose root offers the memory controller, else v1 when sysfs/memory is
// the v1 memory controller, its Self read from procCgroup (the contents
// of /proc/self/cgroup). Its error names what is missing.
func Detect(sysfs, procCgroup string) (Hierarchy, error) {
	if b, err := os.ReadFile(filepath.Join(sysfs, "cgroup.controllers")); err == nil {
		if !hasWord(string(b), "memory") {
			return Hierarchy{}, fmt.Errorf("%s is cgroup v2, but its root offers no memory controller (cgroup.controllers: %q)", sysfs, strings.TrimSpace(string(b)))
		}
		return Hierarchy{Root: sysfs, V2: true}, nil
	}
	v1 := filepath.Join(sysfs, "memory")
	if _, err := os.Stat(filepath.Join(v1, "memory.limit_in_bytes")); err != nil {
		return Hierarchy{}, fmt.Errorf("no memory cgroup: %s is not a cgroup v2 mount (no cgroup.controllers) and %s is not cgroup v1's memory controller (no memory.limit_in_bytes)", sysfs, v1)
	}
	self, err := v1Self(procCgroup)
	if err != nil {
		return Hierarchy{}, err
	}
	return Hierarchy{Root: v1, Self: self}, nil
}

// v1Self returns the path of the v1 memory cgroup in /proc/self/cgroup's
// contents s ("4:memory:/a/b" gives "/a/b").
func v1Self(s string) (string, error) {
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) == 3 && hasWord(strings.ReplaceAll(parts[1], ",", " "), "memory") {
			return parts[2], nil
		}
	}
	return "", fmt.Errorf("cgroup v1: /proc/self/cgroup names no memory cgroup of this process: %q", s)
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

// Group is a memory cgroup that New made and Remove deletes.
type Group struct {
	Dir   string // its directory
	Limit int64  // bytes
	v2    bool
}

// seq numbers the groups of this process.
var seq atomic.Int64

// New makes a memory cgroup of limit bytes on this machine (SysFS), as
// the package doc says; it needs root.
func New(limit int64) (*Group, error) {
	if euid := os.Geteuid(); euid != 0 {
		return nil, fmt.Errorf("a memory cgroup needs root: this process runs as uid %d", euid)
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("a memory cgroup needs Linux: %w", err)
	}
	h, err := Detect(SysFS, string(self))
	if err != nil {
		return nil, err
	}
	return h.New(limit)
}

// New makes a memory cgroup of limit bytes in h.
func (h Hierarchy) New(limit int64) (*Group, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("memory cgroup limit %d: want more than 0 bytes", limit)
	}
	parent := filepath.Join(h.Root, h.Self)
	if h.V2 {
		if err := enableMemory(parent); err != nil {
			return nil, err
		}
	}
	g := &Group{Dir: filepath.Join(parent, fmt.Sprintf("bloomkv-%d-%d", os.Getpid(), seq.Add(1))), Limit: limit, v2: h.V2}
	if err := os.Mkdir(g.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("making memory cgroup: %w", err)
	}
	n := strconv.FormatInt(limit, 10)
	var err error
	if h.V2 {
		err = g.write("memory.max", n)
		if err == nil {
			err = g.writeIfPresent("memory.swap.max", "0")
		}
	} else {
		err = g.write("memory.limit_in_bytes", n)
		if err == nil {
			// The memory+swap limit must not be below the memory limit:
			// set after it.
			err = g.writeIfPresent("memory.memsw.limit_in_bytes", n)
		}
	}
	if err != nil {
		os.Remove(g.Dir)
		return nil, err
	}
	return g, nil
}

// enableMemory enables the memory controller for the children of the v2
// cgroup dir, unless it is.
func enableMemory(dir string) error {
	f := filepath.Join(dir, "cgroup.subtree_control")
	b, err := os.ReadFile(f)
	if err != nil {
		return fmt.Errorf("cgroup v2: %w", err)
	}
	if hasWord(string(b), "memory") {
		return nil
	}
	if err := os.WriteFile(f, []byte("+memory"), 0o644); err != nil {
		return fmt.Errorf("cgroup v2: enabling the memory controller for the children of %s: %w", dir, err)
	}
	return nil
}

func (g *Group) write(name, v string) error {
	if err := os.WriteFile(filepath.Join(g.Dir, name), []byte(v), 0o644); err != nil {
		return fmt.Errorf("memory cgroup %s: writing %s to %s: %w", g.Dir, v, name, err)
	}
	return nil
}

// writeIfPresent writes v into the group's file name if the kernel offers
// it (swap accounting may be off).
func (g *Group) writeIfPresent(name, v string) error {
	if _, err := os.Stat(filepath.Join(g.Dir, name)); err != nil {
		return nil
	}
	return g.write(name, v)
}

// joinScript is what Command's shell runs: it moves itself into the group
// ($0) and becomes the program ("$@") with the same pid.
const joinScript = `echo $$ > "$0/cgroup.procs" && exec "$@"`

// Command returns a command that runs name with args inside g: its
// process joins g before the program starts (see the package doc).
func (g *Group) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("/bin/sh", append([]string{"-c", joinScript, g.Dir, name}, args...)...)
}

// Stats is what a group's memory controller counted.
type Stats struct {
	// Peak is the most memory the group's processes held at once, their
	// page cache included (v1 memory.max_usage_in_bytes, v2 memory.peak);
	// -1 where the kernel does not count it.
	Peak int64
	// OOMKills is the processes the group's OOM killer killed; -1 where
	// the kernel does not count them.
	OOMKills int64
}

// Stats returns what g's memory controller counted so far.
func (g *Group) Stats() (Stats, error) {
	s := Stats{Peak: -1, OOMKills: -1}
	peak, events := "memory.max_usage_in_bytes", "memory.oom_control"
	if g.v2 {
		peak, events = "memory.peak", "memory.events"
	}
	if b, err := os.ReadFile(filepath.Join(g.Dir, peak)); err == nil {
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return s, fmt.Errorf("memory cgroup %s: %s %q: %w", g.Dir, peak, b, err)
		}
		s.Peak = n
	}
	f, err := os.Open(filepath.Join(g.Dir, events))
	if err != nil {
		return s, nil
	}
	defer f.Close()
	n, err := field(f, "oom_kill")
	if err != nil {
		return s, fmt.Errorf("memory cgroup %s: %s: %w", g.Dir, events, err)
	}
	s.OOMKills = n
	return s, nil
}

// field returns the value of the line "name N" in r, -1 if there is none.
func field(r io.Reader, name string) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == name {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return -1, sc.Err()
}

// Remove deletes g, whose processes must have exited. The kernel may
// still be releasing a process that has just exited (EBUSY): Remove
// tries again for a few seconds.
func (g *Group) Remove() error {
	var err error
	for range 100 {
		if err = syscall.Rmdir(g.Dir); err != syscall.EBUSY {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing memory cgroup %s: %w", g.Dir, err)
	}
	return nil
}

// Killed reports whether err, a command's Wait's error, means that g's OOM
// killer killed the process (SIGKILL, with OOM kills counted in s, what
// Stats returned after the process ended, so before Remove); the error to
// report then says so.
func (g *Group) Killed(err error, s Stats) (bool, error) {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false, err
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL || s.OOMKills <= 0 {
		return false, err
	}
	return true, fmt.Errorf("killed by the memory cap: the OOM killer of its memory cgroup of %d bytes (%.0f MiB) killed it: %w", g.Limit, float64(g.Limit)/(1<<20), err)
}
