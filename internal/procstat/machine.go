package procstat

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Machine describes the machine a benchmark ran on, for its report.
type Machine struct {
	CPU      string `json:"cpu"`       // the processor's model name
	Cores    int    `json:"cores"`     // logical CPUs the Go runtime sees
	Memory   int64  `json:"memory"`    // bytes of RAM
	Kernel   string `json:"kernel"`    // the OS and its release
	Go       string `json:"go"`        // the Go version that built the benchmark
	Device   string `json:"device"`    // the block device of the benchmark's directory, if known
	DiskKind string `json:"disk_kind"` // the kernel's queue/rotational of the device, which virtual disks often report rotational whatever backs them
}

// ReadMachine returns what this machine says of itself; dir is the
// benchmark's directory, whose device it names. Unknown fields stay empty.
func ReadMachine(dir string) Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version(), Kernel: runtime.GOOS}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel += " " + strings.TrimSpace(string(b))
	}
	m.CPU = procField("/proc/cpuinfo", "model name")
	if kb := procField("/proc/meminfo", "MemTotal"); kb != "" {
		n, _ := strconv.ParseInt(strings.TrimSuffix(kb, " kB"), 10, 64)
		m.Memory = n << 10
	}
	if dev, err := DeviceOf(dir); err == nil {
		m.Device = dev.Name
		if b, err := os.ReadFile(strings.TrimSuffix(dev.stat, "stat") + "queue/rotational"); err == nil {
			m.DiskKind = map[string]string{"0": "reported non-rotational", "1": "reported rotational"}[strings.TrimSpace(string(b))]
		}
	}
	return m
}

func (m Machine) String() string {
	s := fmt.Sprintf("%s, %d cores, %.1f GiB RAM, %s, %s", m.CPU, m.Cores, float64(m.Memory)/(1<<30), m.Kernel, m.Go)
	if m.Device != "" {
		s += ", device " + m.Device
		if m.DiskKind != "" {
			s += " (" + m.DiskKind + ")"
		}
	}
	return s
}

// procField returns the value of the first "name: value" line of a /proc
// file, "" if none.
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
