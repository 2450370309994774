package procstat

import (
	"strings"
	"testing"
)

// TestParseResident checks the parse of /proc/PID/status's memory lines
// against the numbers written in them, and its errors.
func TestParseResident(t *testing.T) {
	const status = "Name:\tpeers\nVmPeak:\t  999999 kB\nVmRSS:\t  123456 kB\nRssAnon:\t  100000 kB\nRssFile:\t   23000 kB\nRssShmem:\t     456 kB\nThreads:\t8\n"
	got, err := parseResident(strings.NewReader(status))
	if err != nil {
		t.Fatal(err)
	}
	want := Resident{RSS: 123456 << 10, Anon: 100000 << 10, File: 23000 << 10, Shmem: 456 << 10}
	if got != want {
		t.Errorf("parseResident = %+v, want %+v", got, want)
	}
	if got.RSS != got.Anon+got.File+got.Shmem {
		t.Errorf("VmRSS %d is not RssAnon + RssFile + RssShmem in the fixture", got.RSS)
	}
	for name, bad := range map[string]string{
		"missing RssShmem": "VmRSS:\t1 kB\nRssAnon:\t1 kB\nRssFile:\t0 kB\n",
		"not a number":     "VmRSS:\tlots kB\nRssAnon:\t1 kB\nRssFile:\t0 kB\nRssShmem:\t0 kB\n",
	} {
		if _, err := parseResident(strings.NewReader(bad)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
