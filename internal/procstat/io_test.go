package procstat

import (
	"os"
	"strings"
	"testing"
)

func TestParseProcIO(t *testing.T) {
	cases := []struct {
		name, in string
		want     ProcIO
		wantErr  string
	}{
		{"proc", "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 40960\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n",
			ProcIO{FileBytes: 1, FileReads: 3, DeviceBytes: 40960, WriteBytes: 8192}, ""},
		{"cancelled", "rchar: 0\nsyscr: 0\nread_bytes: 0\nwrite_bytes: 8192\ncancelled_write_bytes: 4096\n", ProcIO{WriteBytes: 4096}, ""},
		{"missing", "rchar: 1\nwchar: 2\nsyscr: 3\nwrite_bytes: 0\ncancelled_write_bytes: 0\n", ProcIO{}, "no read_bytes"},
		{"garbled", "rchar: 1\nsyscr: 3\nread_bytes: lots\nwrite_bytes: 0\ncancelled_write_bytes: 0\n", ProcIO{}, `read_bytes " lots"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseProcIO(strings.NewReader(c.in))
			switch {
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("error %v, want one saying %q", err, c.wantErr)
			case c.wantErr == "" && err != nil:
				t.Fatal(err)
			case c.wantErr == "" && got != c.want:
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestParseDeviceReads(t *testing.T) {
	got, err := parseDeviceReads(" 2862052   537985 83779354  1392976 16221730   838237 1853591840  4711081        0  4079708  9122666\n")
	if err != nil || got != 2862052 {
		t.Errorf("got %d, %v; want 2862052", got, err)
	}
	if _, err := parseDeviceReads("1 2 3"); err == nil {
		t.Error("a short stat line: no error")
	}
}

// TestColdRead checks DropPageCache and the counters against each other
// on a file of the package's directory (on the disk the checkout is on,
// not a tmpfs, whose pages cannot be dropped): after the drop, reading
// the file reads all of it from the device, in at least one device read,
// and the read calls return it all (file bytes ≥ device bytes); reading it
// again reads nothing from the device. It needs Linux and root, as -cold
// does.
func TestColdRead(t *testing.T) {
	dir, err := os.MkdirTemp(".", "cold-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	dev, err := DeviceOf(dir)
	if err != nil {
		t.Fatal(err)
	}
	const size = 4 << 20
	path := dir + "/f"
	if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	// Held until the test ends: no other process's drop between the two
	// passes (go test runs other packages' cold tests meanwhile).
	release, err := DropPageCache()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for pass, want := range []struct{ least, most int64 }{{size, 2 * size}, {0, 64 << 10}} {
		before, err := Read(dev)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
		after, err := Read(dev)
		if err != nil {
			t.Fatal(err)
		}
		d := after.Minus(before)
		if got := d.DeviceBytes; got < want.least || got > want.most {
			t.Errorf("read %d of a %d-byte file: %d bytes from the device, want [%d, %d]", pass, size, got, want.least, want.most)
		}
		if d.FileBytes < size || d.FileReads < 1 {
			t.Errorf("read %d: the read calls returned %d bytes in %d calls, want at least %d in 1", pass, d.FileBytes, d.FileReads, size)
		}
		if pass == 0 && d.DeviceReads < 1 {
			t.Errorf("cold read: %d reads completed by %s, want at least 1", d.DeviceReads, dev.Name)
		}
	}
}
