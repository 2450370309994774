package humanize

import (
	"math"
	"strings"
	"testing"
)

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.00 KiB"},
		{1536, "1.50 KiB"},
		{53453, "52.2 KiB"},
		{107_520, "105 KiB"},
		{1_198_132, "1.14 MiB"},
		{5 << 30, "5.00 GiB"},
		{1 << 62, "4.00 EiB"},
		{^uint64(0), "16.0 EiB"},
	} {
		if got := Bytes(tc.n); got != tc.want {
			t.Errorf("Bytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"512", 512, ""},
		{"1.5MiB", 3 << 19, ""},
		{"36.0 MiB", 36 << 20, ""},
		{"2g", 2 << 30, ""},
		{"64 KB", 64 << 10, ""},
		{"7 B", 7, ""},
		{"-1", 0, "bad size"},
		{"MiB", 0, "bad size"},
		{"3 TiB", 0, "bad size unit"},
	} {
		got, err := ParseBytes(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseBytes(%q) = %d, %v; want an error containing %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	// What Bytes writes reads back to within its three significant digits.
	for _, n := range []uint64{1023, 1536, 53453, 1_198_132, 5 << 30} {
		got, err := ParseBytes(Bytes(n))
		if err != nil || math.Abs(float64(got)-float64(n)) > 0.005*float64(n) {
			t.Errorf("ParseBytes(Bytes(%d) = %q) = %d, %v", n, Bytes(n), got, err)
		}
	}
}
