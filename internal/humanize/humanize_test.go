package humanize

import "testing"

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
