package procstat

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Resident is the process's resident memory now, from Linux's
// /proc/self/status, in bytes. RSS = Anon + File + Shmem.
type Resident struct {
	RSS   int64 `json:"rss"`   // VmRSS: all of it
	Anon  int64 `json:"anon"`  // RssAnon: heap, stacks and anonymous mappings
	File  int64 `json:"file"`  // RssFile: file pages mapped, the binary's code among them
	Shmem int64 `json:"shmem"` // RssShmem: shared memory, tmpfs files mapped
}

// ReadResident returns the process's resident memory now. It needs Linux.
func ReadResident() (Resident, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return Resident{}, fmt.Errorf("procstat: resident memory needs Linux's /proc/self/status: %w", err)
	}
	defer f.Close()
	return parseResident(f)
}

// parseResident reads the Vm and Rss lines of a /proc/PID/status, such as
// "VmRSS:	  123456 kB".
func parseResident(r io.Reader) (Resident, error) {
	var res Resident
	fields := map[string]*int64{"VmRSS:": &res.RSS, "RssAnon:": &res.Anon, "RssFile:": &res.File, "RssShmem:": &res.Shmem}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), "\t")
		p := fields[name]
		if !ok || p == nil {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return Resident{}, fmt.Errorf("procstat: status line %q: %w", sc.Text(), err)
		}
		*p = kb << 10
		delete(fields, name)
	}
	if err := sc.Err(); err != nil {
		return Resident{}, err
	}
	if len(fields) > 0 {
		return Resident{}, fmt.Errorf("procstat: /proc/self/status lacks %d of VmRSS, RssAnon, RssFile, RssShmem", len(fields))
	}
	return res, nil
}
