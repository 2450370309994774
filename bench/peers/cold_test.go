package peers

import (
	"os"
	"strings"
	"testing"
)

func TestParseReadBytes(t *testing.T) {
	cases := []struct {
		name, in string
		want     int64
		wantErr  string
	}{
		{"proc", "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 40960\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n", 40960, ""},
		{"zero", "read_bytes: 0\n", 0, ""},
		{"missing", "rchar: 1\nwchar: 2\n", 0, "no read_bytes"},
		{"garbled", "read_bytes: lots\n", 0, `read_bytes " lots"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseReadBytes(strings.NewReader(c.in))
			switch {
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("error %v, want one saying %q", err, c.wantErr)
			case c.wantErr == "" && err != nil:
				t.Fatal(err)
			case got != c.want:
				t.Fatalf("got %d, want %d", got, c.want)
			}
		})
	}
}

// TestColdRead checks DropPageCache and DeviceReadBytes against each
// other on a file of the package's directory (on the disk the checkout is
// on, not a tmpfs, whose pages cannot be dropped): after the drop, reading
// the file reads all of it from the device; reading it again, nothing. It
// needs Linux and root, as -cold does.
func TestColdRead(t *testing.T) {
	dir, err := os.MkdirTemp(".", "cold-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	const size = 4 << 20
	path := dir + "/f"
	if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := DropPageCache(); err != nil {
		t.Fatal(err)
	}
	for pass, want := range []struct{ least, most int64 }{{size, 2 * size}, {0, 64 << 10}} {
		before, err := DeviceReadBytes()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
		after, err := DeviceReadBytes()
		if err != nil {
			t.Fatal(err)
		}
		if got := after - before; got < want.least || got > want.most {
			t.Errorf("read %d of a %d-byte file: %d bytes from the device, want [%d, %d]", pass, size, got, want.least, want.most)
		}
	}
}
