package procstat

import "testing"

// TestReadResident checks that Linux gives this process's resident memory:
// some of it, its parts adding up to the whole.
func TestReadResident(t *testing.T) {
	r, err := ReadResident()
	if err != nil {
		t.Fatal(err)
	}
	if r.RSS <= 0 || r.Anon <= 0 || r.RSS != r.Anon+r.File+r.Shmem {
		t.Errorf("ReadResident = %+v: want a positive RSS equal to RssAnon + RssFile + RssShmem", r)
	}
}
